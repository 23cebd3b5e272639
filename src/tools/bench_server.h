// `ferry bench --server URL --model NAME`: the sweeps of `ferry bench` (batch x concurrency) against a running
// KServe v2 server (docs/bench.md, "Benchmarking a server"). The inputs come from the server's model metadata
// (names, datatypes, shapes; dim 0 is the batch when the config's max_batch_size > 0); each worker sends infer
// requests over its own connection and times each from request to checked response. Failed requests are counted,
// not fatal. The loop and the statistics are the in-process runner's (tools/bench_runner.h), the reports the same
// (tools/bench_report.h). The transport is an interface: HTTP here (binary tensor data or JSON tensors), gRPC in
// server/grpc_bench_client.h (it needs the generated gRPC stubs, which live with the server).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tools/bench.h"
#include "tools/bench_runner.h"
#include "tools/kserve_client.h"

namespace ferry::tools {

struct ServerBenchOptions {
  std::string url;      // http://HOST:PORT (gRPC: HOST:PORT)
  std::string model;    // the model's name on the server
  std::string version;  // "" for the server's choice
  bool binary = true;   // HTTP: the binary tensor data extension; false: JSON tensors. gRPC: raw contents
  double timeout_s = 30;  // per request (a request with no answer by then fails)
  // The sweep: batches, concurrency, warmup, iterations or duration_s, percentiles; inputs.shapes (non-batch
  // dims the metadata leaves at -1), inputs.ranges and inputs.seed. `model`, `session` and `threads` are unused.
  BenchOptions sweep;
};

// Makes one worker's client: its own connection, sending one prepared request (shared by the workers).
using BenchClientFactory = std::function<std::unique_ptr<BenchClient>()>;

// How `ferry bench --server` talks to a server.
class KServeBenchTransport {
 public:
  virtual ~KServeBenchTransport() = default;
  virtual std::string Protocol() const = 0;  // "http", "grpc"
  // The model's metadata and max_batch_size (from its config, when the server has one). Throws
  // InvalidArgumentError when the server cannot be reached or does not serve the model.
  virtual KServeModelInfo FetchModelInfo() = 0;
  // Encodes an infer request for `inputs` once; the factory's clients send it and check each response against
  // `info.outputs`.
  virtual BenchClientFactory PrepareInfer(const std::vector<NamedValue>& inputs, const KServeModelInfo& info) = 0;
};

// The KServe v2 REST transport over HTTP/1.1 keep-alive connections. Throws InvalidArgumentError for a bad URL.
std::unique_ptr<KServeBenchTransport> MakeHttpBenchTransport(const ServerBenchOptions& options);

// Runs every (batch, concurrency) configuration in that order; results have threads 0, no session or memory
// figures, and errors / first_error; a model whose metadata has no batch dim runs its one batch (PlanBatchSweep).
// Throws InvalidArgumentError for bad options, a server that cannot be reached, a model it does not serve, or a
// batch over the config's max_batch_size.
BenchRun RunServerBench(const ServerBenchOptions& options, KServeBenchTransport& transport,
                        const std::function<void(const BenchProgress&)>& progress = {});

// The URL path of a model: /v2/models/NAME or /v2/models/NAME/versions/V (NAME and V percent-encoded).
std::string KServeModelPath(const std::string& model, const std::string& version);

}  // namespace ferry::tools
