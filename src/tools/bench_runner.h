// The measuring loop `ferry bench` shares between its two targets, a model run in process (tools/bench.h) and a
// running server (tools/bench_server.h): per configuration, `concurrency` workers, each with its own client (a
// session call, a keep-alive connection), run warm-up requests and then measured ones, and the latencies become
// a BenchResult (statistics, throughput, errors). The target only says how one request is issued.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/bench.h"

namespace ferry::tools {

// One worker's way of issuing requests. Each worker calls its own client from its own thread.
class BenchClient {
 public:
  virtual ~BenchClient() = default;
  // Issues one request and waits for its answer. Returns "" on success, or a message for a request that failed
  // (counted as an error; the benchmark goes on). Throws ferry::Error for a failure that ends the benchmark.
  virtual std::string Request() = 0;
};

struct BenchPhaseResult {
  std::vector<double> latencies_ms;  // of the successful requests
  int64_t errors = 0;                // failed requests
  std::string first_error;           // the message of the first one
  double wall_s = 0;                 // from the first request's start to the last one's end (failed ones too)
};

// Runs `clients.size()` workers: `count` requests in all when count > 0 (failed ones count), otherwise each
// starts requests (at least one) until `duration_s` has passed. `poll` is called about every 0.2 s with the
// latencies so far. Rethrows the first exception of any worker after all have stopped.
BenchPhaseResult RunBenchPhase(const std::vector<std::unique_ptr<BenchClient>>& clients, int64_t count,
                               double duration_s, const std::function<void(const std::vector<double>&)>& poll);

// One configuration: `options.warmup` requests (discarded), then the measured ones (`options.iterations` or
// `options.duration_s`); fills r.requests, inferences, wall_s, throughput, latency, errors and first_error
// (r.config must be set). `progress` (may be empty) is called with `p` updated (warming_up, done, elapsed_s from
// `started`, p50 so far).
void MeasureBenchConfig(const std::vector<std::unique_ptr<BenchClient>>& clients, const BenchOptions& options,
                        BenchResult& r, BenchProgress p, std::chrono::steady_clock::time_point started,
                        const std::function<void(const BenchProgress&)>& progress);

// Checks the sweep options every target shares (batches, concurrency, warm-up, iterations or duration,
// percentiles); throws InvalidArgumentError naming the flag.
void ValidateBenchSweep(const BenchOptions& options);

}  // namespace ferry::tools
