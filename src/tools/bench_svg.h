// The chart of `ferry bench --plot FILE.svg`: one row of panels per series group (a thread count), each row
// holding latency, throughput and peak memory against the batch size (log2 axis). Within a row one colour per
// series (a concurrency level; the same colour in every row) and, for latency, one dash pattern per percentile.
// A column's panels share their y axis, which is log10 once its values span more than a decade (so that one
// outlier does not flatten the rest) and linear from 0 otherwise. The knee is circled on the throughput curve and
// labelled where no other label is; the latency bound is a line. The legend lists each series and its knee; notes
// and a footer (host, Ferry version, date) close the figure. Hand-written SVG 1.1 (valid XML, no scripts or
// external references) that any browser opens; every point has a <title> tooltip.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/bench_report.h"
#include "tools/bench_svg_layout.h"

namespace ferry::tools {

struct BenchPlotSeries {
  std::string label;                            // "threads 1, concurrency 2": the legend's
  std::vector<int64_t> batches;                 // ascending
  std::vector<double> throughput;               // per batch, inferences/s
  std::vector<std::vector<double>> latency_ms;  // per percentile, per batch
  std::optional<int64_t> knee_batch;
  // Per batch, the peak memory in MiB; empty, or NaN or negative entries, where none was measured.
  std::vector<double> memory_mib = {};
  // Series with the same group share a row of panels ("threads 1"; "" for the one row of a server run), and
  // series with the same key share a colour ("concurrency 2").
  std::string group = {};
  std::string key = {};
};

struct BenchPlot {
  std::string title;
  std::vector<std::string> percentile_names;  // "p50", ...: one per latency_ms row
  std::vector<BenchPlotSeries> series;
  std::optional<double> max_latency_ms;
  std::string bound_percentile_name;            // the percentile the bound applies to
  std::string memory_title = "peak RSS (MiB)";  // the memory column's heading
  std::vector<std::string> notes;               // lines under the panels (what a figure means, what is missing)
  // The footer; an empty field is left out. BenchPlotFromReport leaves them empty (the CLI fills them in).
  std::string host;           // "Intel(R) Xeon(R) ..., 2 logical CPUs, ISA sse4.1,avx,avx2"
  std::string ferry_version;  // "0.1.0"
  std::string date;           // "2026-12-02" (UTC)
};

// The plot of a report's series (AnalyzeBench must have run): grouped by thread count, coloured by concurrency,
// with each configuration's peak RSS as its memory (none for a server run, whose memory is its own).
BenchPlot BenchPlotFromReport(const BenchReport& report);

// The chart as an SVG document. Non-finite or negative latencies and throughputs are drawn at the axis' bottom;
// a single batch sits mid-axis. Points without a memory figure are left out of the memory panel, and the panel
// is left out, with a note saying so, when no point has one.
std::string RenderBenchSvg(const BenchPlot& plot);

// Text with &, <, >, " and ' escaped for XML content and attribute values.
std::string XmlEscape(std::string_view text);

// The CPU's model name from the text of /proc/cpuinfo (its first "model name" line, else "Hardware" or
// "Processor", as on some ARM kernels); "" when there is none.
std::string CpuModelFromCpuinfo(std::string_view cpuinfo);

// This machine for the footer: "MODEL, N logical CPUs, ISA LIST" (the model from /proc/cpuinfo, "unknown CPU"
// without it; the extensions DetectHostIsa finds).
std::string BenchHostDescription();

// `t` as a UTC date, YYYY-MM-DD.
std::string UtcDate(std::time_t t);

}  // namespace ferry::tools
