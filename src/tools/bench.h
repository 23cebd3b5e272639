// The runner behind `ferry bench`: a model timed over the cross product of batch sizes, intra-op thread counts
// and concurrency levels (docs/bench.md). One session per thread count (its creation timed); per batch, random
// inputs whose dim 0 is the batch (a model that fixes its batch runs at its own shapes); per configuration, warm-up requests (discarded), then requests until a count
// or a duration is reached, issued by `concurrency` threads calling Session::RunValues on the one session (the
// loop is tools/bench_runner.h, shared with `ferry bench --server`, tools/bench_server.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "tools/bench_stats.h"
#include "tools/fallback_share.h"
#include "tools/run_inputs.h"

namespace ferry::tools {

struct BenchOptions {
  std::string model;
  SessionOptions session;  // `threads` is set per configuration from `threads` below
  // Random inputs: `shapes` gives an input's dims (dim 0 is replaced by each batch), `ranges` and `seed` as for
  // `ferry run --random`. `files` and `batch` are not used.
  InputSpec inputs;
  std::vector<int64_t> batches = {1};
  std::vector<int> threads = {0};
  std::vector<int> concurrency = {1};
  int warmup = 2;               // requests per configuration, run and discarded before measuring
  int64_t iterations = 0;       // measured requests per configuration (all workers together), when > 0
  double duration_s = 0;        // otherwise: workers start requests until this many seconds have passed
  std::vector<double> percentiles = {50, 90, 99};
};

// The dims of every input of a model for one batch size: `overrides` (from --shape) or the declared dims. The
// batched inputs — those whose declared dim 0 is symbolic, and those whose shape the model leaves unknown and
// `overrides` gives (not as a scalar) — get dim 0 set to `batch`; the others (scalars, inputs whose dim 0 the model
// fixes) keep their dims. Throws InvalidArgumentError naming the input when it has no declared shape and no
// override, when a dim other than a batched input's dim 0 stays symbolic, or when `overrides` names no input.
std::map<std::string, std::vector<int64_t>> BatchedInputShapes(
    const std::vector<IoInfo>& inputs, const std::map<std::string, std::vector<int64_t>>& overrides, int64_t batch);

// The batch sizes a sweep runs. With a batched input (see BatchedInputShapes), the requested ones. Without one —
// every input is a scalar or fixes its dim 0 — the model fixes the batch: the sweep runs one batch, at the inputs'
// own shapes, whose size is the dim 0 the non-scalar inputs share (4 for inputs 4x3 and 4x8), or 1 when they share
// none (scalars only, or different sizes); `fixed` then says so.
struct BatchSweep {
  std::vector<int64_t> batches;
  // "" when the requested batches run; else why the model fixes the batch, naming the inputs:
  // "no input has a symbolic dim 0 (x: 4x3, s: scalar)".
  std::string fixed;
};
BatchSweep PlanBatchSweep(const std::vector<IoInfo>& inputs,
                          const std::map<std::string, std::vector<int64_t>>& overrides,
                          const std::vector<int64_t>& requested);

struct BenchConfig {
  int64_t batch = 1;
  int threads = 0;
  int concurrency = 1;
};

struct BenchResult {
  BenchConfig config;
  int64_t requests = 0;    // measured requests that succeeded (warm-up excluded)
  int64_t errors = 0;      // measured requests that failed (server runs; in process a failure ends the run)
  std::string first_error;  // the first failure's message, "" without errors
  int64_t inferences = 0;  // requests x batch
  double wall_s = 0;       // from the first measured request's start to the last one's end
  double throughput = 0;   // inferences per second of wall time
  LatencyStats latency;    // per request, in ms
  double session_ms = 0;   // creation of the session this configuration ran on (shared by its thread count)
  // Peak resident set of the process, in bytes: during this configuration (inputs, warm-up and measured runs)
  // when `rss_reset` is true (Linux: VmHWM reset at its start through /proc/self/clear_refs); otherwise the
  // process peak since it started (VmHWM cannot be reset here), which never decreases. -1: not readable.
  int64_t peak_rss_bytes = -1;
  int64_t session_peak_rss_bytes = -1;  // the same, during the session's creation
  bool rss_reset = false;  // both figures above are scoped (reset before the configuration and the creation)
  // The session's own figures after the configuration: the activation arena planned for this batch's shapes
  // and how many blocks of it exist (one per concurrent run), what its kernels hold (packed weights), and the
  // weights of the optimized graph (Session::PredictMemory).
  int64_t arena_bytes = 0;
  int64_t arena_blocks = 0;
  int64_t kernel_bytes = 0;
  int64_t weights_bytes = 0;
};

// What the progress callback sees, about every 0.2 s while a configuration runs and once when it ends.
struct BenchProgress {
  size_t index = 0;  // 0-based configuration number
  size_t total = 0;
  BenchConfig config;
  bool warming_up = false;
  int64_t done = 0;              // measured requests finished so far
  double elapsed_s = 0;          // since the benchmark started
  std::optional<double> p50_ms;  // of the measured requests so far
};

// The server a `ferry bench --server` run drove (tools/bench_server.h).
struct BenchServerInfo {
  std::string url;               // as given: http://HOST:PORT
  std::string model;             // the model's name on the server
  std::string version;           // "" for the server's choice
  std::string protocol = "http";
  std::string tensors = "binary";  // "binary" (the binary tensor data extension) or "json"
  int64_t max_batch_size = -1;   // from the model's config; -1 when the server did not say
};

struct BenchRun {
  std::vector<std::string> backends;  // of the first session (the placement's backends); empty for a server
  // In process: one profiled run of the first session after its configurations, at its first batch: how much
  // of the model (nodes, FLOPs, time) fell to the backends after the first. Unset for a server.
  std::optional<FallbackShare> fallback;
  std::optional<BenchServerInfo> server;  // set when the run drove a server
  std::vector<BenchResult> results;   // in run order: threads, then batch, then concurrency
  // Set when the model fixes the batch (BatchSweep::fixed): the results are at that one batch, whichever were
  // requested.
  std::string fixed_batch;
};

// Runs every configuration. Throws ferry::Error for a model that cannot be loaded, inputs that cannot be made,
// or a run that fails (the first failure of any worker), and InvalidArgumentError for bad options.
BenchRun RunBench(const BenchOptions& options, const std::function<void(const BenchProgress&)>& progress = {});

}  // namespace ferry::tools
