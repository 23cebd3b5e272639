#include "server/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace ferry::server {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard lock(mutex_);
  ++counts_[i];
  sum_ += value;
  ++count_;
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot s;
  s.bounds = bounds_;
  std::lock_guard lock(mutex_);
  uint64_t running = 0;
  for (uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

namespace {

std::vector<double> LatencyBoundsUs() {
  return {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1e6, 2.5e6, 5e6, 1e7};
}

}  // namespace

ModelStats::ModelStats(std::string m, std::string v)
    : model(std::move(m)),
      version(std::move(v)),
      request_us(LatencyBoundsUs()),
      queue_us(LatencyBoundsUs()),
      batch_size({1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256}) {}

void ModelStats::RecordBatch(int64_t size, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns) {
  execution_count.fetch_add(1, std::memory_order_relaxed);
  compute_input.Add(input_ns);
  compute_infer.Add(infer_ns);
  compute_output.Add(output_ns);
  batch_size.Observe(static_cast<double>(size));
  std::lock_guard lock(mutex_);
  auto& b = batch_stats_[size];
  ++b.count;
  b.compute_input_ns += input_ns;
  b.compute_infer_ns += infer_ns;
  b.compute_output_ns += output_ns;
}

void ModelStats::RecordFailure(FailureReason reason, uint64_t request_ns) {
  failures[static_cast<int>(reason)].fetch_add(1, std::memory_order_relaxed);
  fail.Add(request_ns);
}

std::map<int64_t, BatchSizeStat> ModelStats::batch_stats() const {
  std::lock_guard lock(mutex_);
  return batch_stats_;
}

std::shared_ptr<ModelStats> MetricsRegistry::Get(const std::string& model, const std::string& version) {
  std::lock_guard lock(mutex_);
  auto& s = stats_[{model, version}];
  if (!s) s = std::make_shared<ModelStats>(model, version);
  return s;
}

std::vector<std::shared_ptr<ModelStats>> MetricsRegistry::All() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<ModelStats>> out;
  for (const auto& [key, s] : stats_) out.push_back(s);
  return out;
}

int64_t ProcessResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return -1;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream s;
  s.precision(15);
  s << v;
  return s.str();
}

class Writer {
 public:
  void Family(const std::string& name, const char* type, const std::string& help) {
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  void Sample(const std::string& name, const std::string& labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << Number(value) << '\n';
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::string Labels(const ModelStats& s) { return "model=\"" + Escape(s.model) + "\",version=\"" + Escape(s.version) + "\""; }

}  // namespace

std::string RenderPrometheus(const MetricsRegistry& registry) {
  const auto all = registry.All();
  Writer w;
  const auto counter = [&](const std::string& name, const std::string& help, auto value) {
    w.Family(name, "counter", help);
    for (const auto& s : all) w.Sample(name, Labels(*s), static_cast<double>(value(*s)));
  };
  const auto us = [](const DurationStat& d) { return d.ns.load() / 1000; };
  counter("nv_inference_request_success", "Number of successful inference requests, all batch sizes",
          [](const ModelStats& s) { return s.success.count.load(); });
  w.Family("nv_inference_request_failure", "counter", "Number of failed inference requests, all batch sizes");
  for (const auto& s : all) {
    for (auto r : {FailureReason::kRejected, FailureReason::kCanceled, FailureReason::kBackend, FailureReason::kOther}) {
      w.Sample("nv_inference_request_failure", Labels(*s) + ",reason=\"" + FailureReasonName(r) + "\"",
               static_cast<double>(s->failures[static_cast<int>(r)].load()));
    }
  }
  counter("nv_inference_count", "Number of inferences performed (does not include cached requests)",
          [](const ModelStats& s) { return s.inference_count.load(); });
  counter("nv_inference_exec_count", "Number of model executions performed (does not include cached requests)",
          [](const ModelStats& s) { return s.execution_count.load(); });
  counter("nv_inference_request_duration_us", "Cumulative inference request duration in microseconds",
          [&](const ModelStats& s) { return us(s.success) + us(s.fail); });
  counter("nv_inference_queue_duration_us", "Cumulative inference queuing duration in microseconds",
          [&](const ModelStats& s) { return us(s.queue); });
  counter("nv_inference_compute_input_duration_us", "Cumulative compute input duration in microseconds",
          [&](const ModelStats& s) { return us(s.compute_input); });
  counter("nv_inference_compute_infer_duration_us", "Cumulative compute inference duration in microseconds",
          [&](const ModelStats& s) { return us(s.compute_infer); });
  counter("nv_inference_compute_output_duration_us", "Cumulative inference compute output duration in microseconds",
          [&](const ModelStats& s) { return us(s.compute_output); });
  w.Family("nv_inference_pending_request_count", "gauge",
           "Instantaneous number of pending requests awaiting execution per-model");
  for (const auto& s : all) w.Sample("nv_inference_pending_request_count", Labels(*s), static_cast<double>(s->pending.load()));
  const auto histogram = [&](const std::string& name, const std::string& help, auto member) {
    w.Family(name, "histogram", help);
    for (const auto& s : all) {
      const auto snap = ((*s).*member).Read();
      for (size_t i = 0; i < snap.bounds.size(); ++i) {
        w.Sample(name + "_bucket", Labels(*s) + ",le=\"" + Number(snap.bounds[i]) + "\"",
                 static_cast<double>(snap.cumulative[i]));
      }
      w.Sample(name + "_bucket", Labels(*s) + ",le=\"+Inf\"", static_cast<double>(snap.cumulative.back()));
      w.Sample(name + "_sum", Labels(*s), snap.sum);
      w.Sample(name + "_count", Labels(*s), static_cast<double>(snap.count));
    }
  };
  histogram("ferry_request_duration_us", "Request latency from arrival to response, microseconds (all requests)",
            &ModelStats::request_us);
  histogram("ferry_queue_duration_us", "Time requests waited in the queue before their batch ran, microseconds",
            &ModelStats::queue_us);
  histogram("ferry_batch_size", "Batch size of each model execution (requests batched along dim 0)",
            &ModelStats::batch_size);
  w.Family("ferry_model_memory_bytes", "gauge",
           "Memory the model version's loaded instances hold: weights, pre-packed kernel data, activation arenas "
           "(0 once unloaded)");
  for (const auto& s : all) w.Sample("ferry_model_memory_bytes", Labels(*s), static_cast<double>(s->memory_bytes.load()));
  w.Family("ferry_process_resident_memory_bytes", "gauge", "Resident set size of the server process");
  w.Sample("ferry_process_resident_memory_bytes", "", static_cast<double>(ProcessResidentBytes()));
  return w.str();
}

nlohmann::json StatsJson(const ModelStats& s) {
  const auto stat = [](const DurationStat& d) { return nlohmann::json{{"count", d.count.load()}, {"ns", d.ns.load()}}; };
  nlohmann::json batches = nlohmann::json::array();
  for (const auto& [size, b] : s.batch_stats()) {
    batches.push_back({{"batch_size", size},
                       {"compute_input", {{"count", b.count}, {"ns", b.compute_input_ns}}},
                       {"compute_infer", {{"count", b.count}, {"ns", b.compute_infer_ns}}},
                       {"compute_output", {{"count", b.count}, {"ns", b.compute_output_ns}}}});
  }
  return {{"name", s.model},
          {"version", s.version},
          {"last_inference", s.last_inference_ms.load()},
          {"inference_count", s.inference_count.load()},
          {"execution_count", s.execution_count.load()},
          {"inference_stats",
           {{"success", stat(s.success)},
            {"fail", stat(s.fail)},
            {"queue", stat(s.queue)},
            {"compute_input", stat(s.compute_input)},
            {"compute_infer", stat(s.compute_infer)},
            {"compute_output", stat(s.compute_output)}}},
          {"batch_stats", batches},
          {"memory_bytes", s.memory_bytes.load()}};
}

}  // namespace ferry::server
