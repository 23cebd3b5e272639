// The chart of `ferry bench --plot FILE.svg`: two panels over the batch size (log2 axis), latency percentiles
// above and throughput below, one colour per (threads, concurrency) series and one dash pattern per percentile,
// the knee circled on the throughput curve and the latency bound drawn as a line. Hand-written SVG 1.1 (valid
// XML, no scripts or external references) that any browser opens; every point has a <title> tooltip.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/bench_report.h"

namespace ferry::tools {

struct BenchPlotSeries {
  std::string label;                           // "threads 1, concurrency 2"
  std::vector<int64_t> batches;                // ascending
  std::vector<double> throughput;              // per batch, inferences/s
  std::vector<std::vector<double>> latency_ms; // per percentile, per batch
  std::optional<int64_t> knee_batch;
};

struct BenchPlot {
  std::string title;
  std::vector<std::string> percentile_names;  // "p50", ...: one per latency_ms row
  std::vector<BenchPlotSeries> series;
  std::optional<double> max_latency_ms;
  std::string bound_percentile_name;  // the percentile the bound applies to
};

// The plot of a report's series (AnalyzeBench must have run).
BenchPlot BenchPlotFromReport(const BenchReport& report);

// The chart as an SVG document. Non-finite or negative values are drawn at 0; a single batch sits mid-axis.
std::string RenderBenchSvg(const BenchPlot& plot);

// Axis ticks from 0 to a "nice" bound at or above `max` (steps of 1, 2, 2.5 or 5 times a power of ten), about
// `target` of them; 0..1 when max is not a positive finite number.
std::vector<double> NiceTicks(double max, int target = 5);

// Text with &, <, >, " and ' escaped for XML content and attribute values.
std::string XmlEscape(std::string_view text);

}  // namespace ferry::tools
