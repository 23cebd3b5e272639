#include "tools/bench.h"

#include <chrono>
#include <memory>

#include "core/peak_rss.h"
#include "ferry/error.h"
#include "ferry/limits.h"
#include "tools/bench_runner.h"

namespace ferry::tools {
namespace {

using Clock = std::chrono::steady_clock;

// The process's peak resident set (VmHWM) in bytes; -1 when it cannot be read.
int64_t PeakRssBytes() {
  const int64_t kb = PeakRssKb();
  return kb < 0 ? -1 : kb * 1024;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s;
}

// The in-process target: each worker calls Session::RunValues on the one session (it is thread-safe). A failed
// run throws and ends the benchmark.
class SessionClient : public BenchClient {
 public:
  SessionClient(const Session& session, const std::vector<NamedValue>& inputs) : session_(session), inputs_(inputs) {}
  std::string Request() override {
    session_.RunValues(inputs_);
    return "";
  }

 private:
  const Session& session_;
  const std::vector<NamedValue>& inputs_;
};

void Validate(const BenchOptions& o) {
  ValidateBenchSweep(o);
  if (o.threads.empty()) throw InvalidArgumentError("--threads: the list is empty");
  for (int t : o.threads) {
    if (t < 0 || t > kMaxThreads) {
      throw InvalidArgumentError("--threads: thread counts must be 0 (all cores) to " + std::to_string(kMaxThreads) +
                                 ", got " + std::to_string(t));
    }
  }
}

// Whether dim 0 of `info` takes the batch: the model declares it symbolic, or leaves the shape unknown and
// --shape gives one; not when --shape makes it a scalar.
bool IsBatched(const IoInfo& info, const std::vector<int64_t>* override_dims) {
  if (override_dims && override_dims->empty()) return false;
  if (!info.has_shape) return override_dims != nullptr;
  return !info.dims.empty() && info.dims[0] < 0;
}

}  // namespace

std::map<std::string, std::vector<int64_t>> BatchedInputShapes(
    const std::vector<IoInfo>& inputs, const std::map<std::string, std::vector<int64_t>>& overrides, int64_t batch) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const IoInfo& info : inputs) {
    std::vector<int64_t> dims;
    auto o = overrides.find(info.name);
    if (o != overrides.end()) {
      dims = o->second;
    } else if (info.has_shape) {
      dims = info.dims;
    } else {
      throw InvalidArgumentError("input '" + info.name + "' has no declared shape; give --shape " + info.name + "=DIMS");
    }
    const bool batched = IsBatched(info, o != overrides.end() ? &o->second : nullptr);
    if (batched) dims[0] = batch;
    for (size_t i = batched ? 1 : 0; i < dims.size(); ++i) {
      if (dims[i] >= 0) continue;
      const std::string sym = i < info.dim_names.size() && !info.dim_names[i].empty() ? info.dim_names[i] : "?";
      throw InvalidArgumentError("input '" + info.name + "': dimension " + std::to_string(i) + " ('" + sym +
                                 "') is symbolic; give --shape " + info.name + "=DIMS" +
                                 (batched ? " (dim 0 is set to each batch)" : ""));
    }
    out[info.name] = std::move(dims);
  }
  for (const auto& [name, dims] : overrides) {
    (void)dims;
    if (!out.count(name)) {
      std::string names;
      for (const auto& i : inputs) names += (names.empty() ? "" : ", ") + i.name;
      throw InvalidArgumentError("--shape: the model has no input '" + name + "' (inputs: " + names + ")");
    }
  }
  return out;
}

BatchSweep PlanBatchSweep(const std::vector<IoInfo>& inputs,
                          const std::map<std::string, std::vector<int64_t>>& overrides,
                          const std::vector<int64_t>& requested) {
  std::optional<int64_t> shared;  // the dim 0 every non-scalar input has, while they agree
  bool agree = true;
  std::string described;
  for (const IoInfo& info : inputs) {
    auto o = overrides.find(info.name);
    const std::vector<int64_t>* override_dims = o != overrides.end() ? &o->second : nullptr;
    if (IsBatched(info, override_dims)) return {requested, ""};
    if (!info.has_shape && !override_dims) continue;  // BatchedInputShapes asks for its --shape
    const std::vector<int64_t>& dims = override_dims ? *override_dims : info.dims;
    described += (described.empty() ? "" : ", ") + info.name + ": " + (dims.empty() ? "scalar" : DimsText(dims));
    if (dims.empty()) continue;
    if (shared && *shared != dims[0]) agree = false;
    shared = dims[0];
  }
  BatchSweep sweep;
  sweep.batches = {shared && agree && *shared > 0 ? *shared : 1};
  sweep.fixed = "no input has a symbolic dim 0 (" + described + ")";
  return sweep;
}

BenchRun RunBench(const BenchOptions& options, const std::function<void(const BenchProgress&)>& progress) {
  Validate(options);
  BenchRun run;
  size_t total = options.threads.size() * options.batches.size() * options.concurrency.size();
  const auto started = Clock::now();
  size_t index = 0;
  for (int threads : options.threads) {
    SessionOptions so = options.session;
    so.threads = threads;
    const bool reset_for_session = ResetPeakRss();
    const auto t0 = Clock::now();
    auto session = Session::Create(options.model, so);
    const double session_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const int64_t session_peak = PeakRssBytes();
    if (run.backends.empty()) run.backends = session->placement().backends;
    // The inputs decide the batches (the same for every session): the requested ones, or the one the model fixes.
    const BatchSweep sweep = PlanBatchSweep(session->inputs(), options.inputs.shapes, options.batches);
    run.fixed_batch = sweep.fixed;
    total = options.threads.size() * sweep.batches.size() * options.concurrency.size();
    // Every batch's shapes first, so that a batch the model cannot take fails before anything runs.
    std::vector<std::map<std::string, std::vector<int64_t>>> shapes;
    for (int64_t b : sweep.batches) shapes.push_back(BatchedInputShapes(session->inputs(), options.inputs.shapes, b));
    for (size_t bi = 0; bi < sweep.batches.size(); ++bi) {
      for (int concurrency : options.concurrency) {
        BenchResult r;
        r.config = {sweep.batches[bi], threads, concurrency};
        r.session_ms = session_ms;
        r.session_peak_rss_bytes = session_peak;
        r.rss_reset = ResetPeakRss() && reset_for_session;
        InputSpec spec = options.inputs;
        spec.files.clear();
        spec.batch.reset();
        spec.shapes = shapes[bi];
        spec.random = true;
        const std::vector<NamedValue> inputs = BuildInputs(*session, spec);
        std::vector<std::unique_ptr<BenchClient>> clients;
        for (int i = 0; i < concurrency; ++i) clients.push_back(std::make_unique<SessionClient>(*session, inputs));
        BenchProgress p;
        p.index = index;
        p.total = total;
        MeasureBenchConfig(clients, options, r, p, started, progress);
        r.peak_rss_bytes = PeakRssBytes();
        const std::vector<ArenaStats> arenas = session->arenas();
        if (!arenas.empty()) {
          r.arena_bytes = arenas.front().arena_bytes;
          r.arena_blocks = static_cast<int64_t>(arenas.front().blocks);
        }
        r.kernel_bytes = session->kernel_held_bytes();
        r.weights_bytes = session->PredictMemory().weights_bytes;
        run.results.push_back(std::move(r));
        ++index;
        if (!run.fallback) {
          RunStats stats;
          stats.profile = true;
          session->RunValues(inputs, &stats);
          run.fallback = MeasureFallbackShare(session->placement(), &stats.node_times);
        }
      }
    }
  }
  return run;
}

}  // namespace ferry::tools
