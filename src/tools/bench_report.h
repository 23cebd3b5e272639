// The reports of `ferry bench` (docs/bench.md documents every field): the per-series reading of a batch sweep
// (knee, best batch under a latency bound), and the run as a table, JSON or CSV, for a model run in process or a
// server (`--server`: no threads, session or memory figures; request errors).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/bench.h"
#include "tools/bench_stats.h"

namespace ferry::tools {

// One (threads, concurrency) pair's batch sweep, read by FindKnee and BestUnderLatency.
struct BenchSeries {
  int threads = 0;
  int concurrency = 1;
  std::vector<CurvePoint> points;  // ascending batch; latency_ms at the bound's percentile
  std::optional<Knee> knee;
  std::optional<CurvePoint> best_throughput;     // the highest throughput of the sweep
  std::optional<CurvePoint> best_under_latency;  // with a latency bound only
};

struct BenchReport {
  BenchOptions options;
  BenchRun run;
  double knee_threshold = 0.10;          // a step must gain more than this fraction of throughput
  std::optional<double> max_latency_ms;  // the bound for BenchSeries::best_under_latency
  std::vector<BenchSeries> series;       // filled by AnalyzeBench
};

// "threads 1, concurrency 2" (in process) or "concurrency 2" (a server: its threads are its own).
std::string BenchSeriesLabel(const BenchReport& report, const BenchSeries& series);

// What was benchmarked: the model path, or "model NAME at URL".
std::string BenchTargetName(const BenchReport& report);

// The measured requests that failed, over every configuration.
int64_t BenchErrorCount(const BenchRun& run);

// The percentile the latency bound is checked against: the largest of options.percentiles.
double BoundPercentile(const BenchOptions& options);

// Groups report.run.results into series (in order of first appearance) and reads each.
void AnalyzeBench(BenchReport& report);

std::string FormatBenchTable(const BenchReport& report);
std::string FormatBenchJson(const BenchReport& report);
std::string FormatBenchCsv(const BenchReport& report);

}  // namespace ferry::tools
