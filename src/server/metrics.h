// Per model-version counters and histograms, shown two ways: Prometheus text at /metrics (Triton's nv_inference_*
// names for the counters, plus ferry_* histograms and memory gauges) and the KServe statistics extension
// (/v2/models/NAME/stats, with per-batch-size execution counts so formed batches are visible).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/infer_request.h"

namespace ferry::server {

// A cumulative Prometheus histogram with fixed upper bounds.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last is +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

struct DurationStat {
  std::atomic<uint64_t> count{0}, ns{0};
  void Add(uint64_t nanoseconds) {
    count.fetch_add(1, std::memory_order_relaxed);
    ns.fetch_add(nanoseconds, std::memory_order_relaxed);
  }
};

// Execution counts for one batch size (the statistics extension's batch_stats).
struct BatchSizeStat {
  uint64_t count = 0;
  uint64_t compute_input_ns = 0, compute_infer_ns = 0, compute_output_ns = 0;
};

struct ModelStats {
  ModelStats(std::string model, std::string version);
  const std::string model, version;

  DurationStat success, fail, queue, compute_input, compute_infer, compute_output;
  std::atomic<uint64_t> inference_count{0};  // inferences: the batch sizes of successful requests, summed
  std::atomic<uint64_t> execution_count{0};  // model executions (one per formed batch)
  std::atomic<uint64_t> failures[5] = {};    // by FailureReason
  std::atomic<int64_t> pending{0};           // requests queued or running
  std::atomic<int64_t> last_inference_ms{0}; // wall-clock ms since the epoch
  std::atomic<int64_t> memory_bytes{0};      // what the loaded instances hold (0 when not loaded)
  Histogram request_us, queue_us, batch_size;

  void RecordBatch(int64_t size, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns);
  void RecordFailure(FailureReason reason, uint64_t request_ns);
  std::map<int64_t, BatchSizeStat> batch_stats() const;

 private:
  mutable std::mutex mutex_;
  std::map<int64_t, BatchSizeStat> batch_stats_;
};

// All model versions' stats, kept across reloads (counters stay monotonic for Prometheus).
class MetricsRegistry {
 public:
  std::shared_ptr<ModelStats> Get(const std::string& model, const std::string& version);
  std::vector<std::shared_ptr<ModelStats>> All() const;  // sorted by model, then version

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ModelStats>> stats_;
};

// The Prometheus text exposition (version 0.0.4) of every model's stats, and process memory gauges.
std::string RenderPrometheus(const MetricsRegistry& registry);
// One model version in the statistics extension's "model_stats" entry form.
nlohmann::json StatsJson(const ModelStats& stats);
// Resident set size of this process in bytes (/proc/self/statm); -1 when unreadable.
int64_t ProcessResidentBytes();

}  // namespace ferry::server
