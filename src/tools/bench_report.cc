#include "tools/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ferry::tools {
namespace {

using Json = nlohmann::ordered_json;

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string ThreadsText(int threads) { return threads == 0 ? "all" : std::to_string(threads); }

Json PointJson(const std::optional<CurvePoint>& p) {
  if (!p) return nullptr;
  return Json{{"batch", p->batch}, {"throughput_per_s", p->throughput}, {"latency_ms", p->latency_ms}};
}

std::string MiB(int64_t bytes) { return bytes < 0 ? "-" : Fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1); }

}  // namespace

std::string BenchSeriesLabel(const BenchReport& report, const BenchSeries& s) {
  if (report.run.server) return "concurrency " + std::to_string(s.concurrency);
  return "threads " + ThreadsText(s.threads) + ", concurrency " + std::to_string(s.concurrency);
}

std::string BenchTargetName(const BenchReport& report) {
  if (!report.run.server) return report.options.model;
  const BenchServerInfo& sv = *report.run.server;
  return "model " + sv.model + (sv.version.empty() ? "" : " version " + sv.version) + " at " + sv.url;
}

int64_t BenchErrorCount(const BenchRun& run) {
  int64_t n = 0;
  for (const BenchResult& r : run.results) n += r.errors;
  return n;
}

double BoundPercentile(const BenchOptions& options) {
  return options.percentiles.empty() ? 50.0 : *std::max_element(options.percentiles.begin(), options.percentiles.end());
}

void AnalyzeBench(BenchReport& report) {
  report.series.clear();
  const BenchOptions& o = report.options;
  const size_t bound_index = o.percentiles.empty()
                                 ? 0
                                 : static_cast<size_t>(std::max_element(o.percentiles.begin(), o.percentiles.end()) -
                                                       o.percentiles.begin());
  for (const BenchResult& r : report.run.results) {
    auto it = std::find_if(report.series.begin(), report.series.end(), [&](const BenchSeries& s) {
      return s.threads == r.config.threads && s.concurrency == r.config.concurrency;
    });
    if (it == report.series.end()) {
      report.series.push_back({r.config.threads, r.config.concurrency, {}, {}, {}, {}});
      it = report.series.end() - 1;
    }
    const double latency = bound_index < r.latency.percentiles.size() ? r.latency.percentiles[bound_index] : 0.0;
    it->points.push_back({r.config.batch, r.throughput, latency});
  }
  for (BenchSeries& s : report.series) {
    std::sort(s.points.begin(), s.points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.batch < b.batch; });
    s.knee = FindKnee(s.points, report.knee_threshold);
    s.best_throughput = BestUnderLatency(s.points, INFINITY);
    if (report.max_latency_ms) s.best_under_latency = BestUnderLatency(s.points, *report.max_latency_ms);
  }
}

std::string FormatBenchTable(const BenchReport& report) {
  const BenchOptions& o = report.options;
  const bool server = report.run.server.has_value();
  std::ostringstream out;
  if (server) {
    const BenchServerInfo& sv = *report.run.server;
    out << BenchTargetName(report) << " (" << sv.protocol << ", " << sv.tensors << " tensors, max_batch_size "
        << (sv.max_batch_size < 0 ? std::string("unknown") : std::to_string(sv.max_batch_size)) << "); ";
  } else {
    out << "model " << o.model << " on ";
    for (size_t i = 0; i < report.run.backends.size(); ++i) out << (i ? "," : "") << report.run.backends[i];
    out << "; ";
  }
  if (o.iterations > 0) out << o.iterations << " measured requests";
  else out << Fixed(o.duration_s, 1) << " s of requests";
  out << " per configuration after " << o.warmup << " warm-up; random inputs (seed " << o.inputs.seed << ")\n";
  if (report.run.fallback) {
    out << FormatFallbackShare(*report.run.fallback) << "\n";
    const std::string warning = FallbackWarning(*report.run.fallback);
    if (!warning.empty()) out << "warning: " << warning << "\n";
  }
  if (!report.run.fixed_batch.empty() && !report.run.results.empty()) {
    out << "batch " << report.run.results.front().config.batch << ", fixed by the model: "
        << report.run.fixed_batch << "; --batch does not apply\n";
  }
  // Columns: batch, threads, concurrency, the requested percentiles, mean ± std, inf/s, session, peak RSS; for a
  // server no threads, session or RSS (they are the server's) but the failed requests.
  std::vector<std::string> header = {"batch"};
  if (!server) header.push_back("threads");
  header.push_back("conc");
  for (double p : o.percentiles) header.push_back(PercentileName(p) + " ms");
  header.push_back("mean ± std ms");
  header.push_back("inf/s");
  if (server) {
    header.push_back("errors");
  } else {
    header.push_back("session ms");
    header.push_back("peak RSS MiB");
  }
  std::vector<std::vector<std::string>> rows;
  for (const BenchResult& r : report.run.results) {
    std::vector<std::string> row = {std::to_string(r.config.batch)};
    if (!server) row.push_back(ThreadsText(r.config.threads));
    row.push_back(std::to_string(r.config.concurrency));
    for (double v : r.latency.percentiles) row.push_back(Fixed(v, 2));
    row.push_back(Fixed(r.latency.mean, 2) + " ± " + Fixed(r.latency.stddev, 2));
    row.push_back(Fixed(r.throughput, 1));
    if (server) {
      row.push_back(std::to_string(r.errors));
    } else {
      row.push_back(Fixed(r.session_ms, 1));
      row.push_back(MiB(r.peak_rss_bytes));
    }
    rows.push_back(std::move(row));
  }
  // Column widths in characters (UTF-8 "±" counts once).
  auto width = [](const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) {
    w[c] = width(header[c]);
    for (const auto& row : rows) w[c] = std::max(w[c], width(row[c]));
  }
  auto print = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) line += std::string(w[c] - width(cells[c]) + (c ? 2 : 0), ' ') + cells[c];
    out << line << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
  if (!server && !report.run.results.empty() && !report.run.results.front().rss_reset) {
    out << "peak RSS: the process peak so far (VmHWM could not be reset per configuration)\n";
  }
  for (const BenchResult& r : report.run.results) {
    if (r.errors == 0) continue;
    out << "errors (batch " << r.config.batch << ", concurrency " << r.config.concurrency << "): " << r.errors
        << " of " << (r.errors + r.requests) << " measured requests failed; the first: " << r.first_error << "\n";
  }
  const std::string pct = PercentileName(BoundPercentile(o));
  const std::string threshold = Fixed(report.knee_threshold * 100, 0) + "%";
  for (const BenchSeries& s : report.series) {
    if (!s.knee) continue;
    out << "knee (" << BenchSeriesLabel(report, s) << "): ";
    if (s.points.size() == 1) {
      out << "batch " << s.knee->batch << ", the only batch measured\n";
    } else if (s.knee->batch == s.points.front().batch) {
      out << "batch " << s.knee->batch << ": no larger batch gained more than " << threshold
          << " throughput over a smaller one\n";
    } else {
      out << "batch " << s.knee->batch << " (";
      if (s.knee->gain) out << "+" << Fixed(*s.knee->gain * 100, 0) << "%";
      else out << "nonzero";
      out << " throughput over batch " << s.knee->reference_batch << ", threshold " << threshold << "); ";
      if (s.knee->saturated) out << "no larger batch gained more than " << threshold << "\n";
      else out << "throughput still grew at the largest batch measured: the knee may lie beyond it\n";
    }
    if (s.best_throughput) {
      out << "best throughput (" << BenchSeriesLabel(report, s) << "): batch " << s.best_throughput->batch << ", "
          << Fixed(s.best_throughput->throughput, 1) << " inf/s, " << pct << " " << Fixed(s.best_throughput->latency_ms, 2)
          << " ms\n";
    }
    if (report.max_latency_ms) {
      const std::string bound = pct + " <= " + Fixed(*report.max_latency_ms, 2) + " ms";
      if (s.best_under_latency) {
        out << "best under " << bound << " (" << BenchSeriesLabel(report, s) << "): batch " << s.best_under_latency->batch << ", "
            << Fixed(s.best_under_latency->throughput, 1) << " inf/s, " << pct << " "
            << Fixed(s.best_under_latency->latency_ms, 2) << " ms\n";
      } else {
        out << "best under " << bound << " (" << BenchSeriesLabel(report, s) << "): none; the lowest " << pct << " was "
            << Fixed(std::min_element(s.points.begin(), s.points.end(),
                                      [](const CurvePoint& a, const CurvePoint& b) { return a.latency_ms < b.latency_ms; })
                         ->latency_ms,
                     2)
            << " ms\n";
      }
    }
  }
  return out.str();
}

std::string FormatBenchJson(const BenchReport& report) {
  const BenchOptions& o = report.options;
  const bool server = report.run.server.has_value();
  Json j;
  j["model"] = server ? report.run.server->model : o.model;
  j["backends"] = report.run.backends;
  if (server) {
    const BenchServerInfo& sv = *report.run.server;
    j["server"] = {{"url", sv.url},
                   {"version", sv.version.empty() ? Json(nullptr) : Json(sv.version)},
                   {"protocol", sv.protocol},
                   {"tensors", sv.tensors},
                   {"max_batch_size", sv.max_batch_size < 0 ? Json(nullptr) : Json(sv.max_batch_size)}};
  } else {
    j["server"] = nullptr;
  }
  j["iterations"] = o.iterations > 0 ? Json(o.iterations) : Json(nullptr);
  j["duration_s"] = o.iterations > 0 ? Json(nullptr) : Json(o.duration_s);
  j["warmup"] = o.warmup;
  j["seed"] = o.inputs.seed;
  j["percentiles"] = o.percentiles;
  j["peak_rss_scope"] = server ? Json(nullptr)
                       : !report.run.results.empty() && !report.run.results.front().rss_reset ? Json("process")
                                                                                               : Json("configuration");
  j["errors"] = BenchErrorCount(report.run);
  j["fallback"] = report.run.fallback ? Json::parse(FallbackShareJson(*report.run.fallback)) : Json(nullptr);
  if (!report.run.fixed_batch.empty() && !report.run.results.empty()) {
    j["fixed_batch"] = {{"batch", report.run.results.front().config.batch}, {"reason", report.run.fixed_batch}};
  } else {
    j["fixed_batch"] = nullptr;
  }
  Json configs = Json::array();
  for (const BenchResult& r : report.run.results) {
    Json lat{{"mean", r.latency.mean}, {"stddev", r.latency.stddev}, {"min", r.latency.min}, {"max", r.latency.max}};
    for (size_t i = 0; i < o.percentiles.size() && i < r.latency.percentiles.size(); ++i) {
      lat[PercentileName(o.percentiles[i])] = r.latency.percentiles[i];
    }
    Json c = {{"batch", r.config.batch},
              {"threads", server ? Json(nullptr) : Json(r.config.threads)},
              {"concurrency", r.config.concurrency},
              {"requests", r.requests},
              {"errors", r.errors},
              {"first_error", r.errors ? Json(r.first_error) : Json(nullptr)},
              {"inferences", r.inferences},
              {"wall_s", r.wall_s},
              {"throughput_per_s", r.throughput},
              {"latency_ms", lat}};
    if (server) {  // the server's own; not measured from the client
      for (const char* k : {"session_ms", "session_peak_rss_bytes", "peak_rss_bytes", "memory"}) c[k] = nullptr;
    } else {
      c["session_ms"] = r.session_ms;
      c["session_peak_rss_bytes"] = r.session_peak_rss_bytes;
      c["peak_rss_bytes"] = r.peak_rss_bytes;
      c["memory"] = {{"arena_bytes", r.arena_bytes},
                     {"arena_blocks", r.arena_blocks},
                     {"kernel_bytes", r.kernel_bytes},
                     {"weights_bytes", r.weights_bytes}};
    }
    configs.push_back(std::move(c));
  }
  j["configurations"] = configs;
  Json series = Json::array();
  for (const BenchSeries& s : report.series) {
    Json knee = nullptr;
    if (s.knee) {
      knee = {{"batch", s.knee->batch},
              {"gain", s.knee->gain ? Json(*s.knee->gain) : Json(nullptr)},
              {"over_batch", s.knee->batch == s.points.front().batch ? Json(nullptr) : Json(s.knee->reference_batch)},
              {"saturated", s.knee->saturated}};
    }
    Json batches = Json::array();
    for (const CurvePoint& p : s.points) batches.push_back(p.batch);
    series.push_back({{"threads", server ? Json(nullptr) : Json(s.threads)},
                      {"concurrency", s.concurrency},
                      {"batches", batches},
                      {"knee", knee},
                      {"best_throughput", PointJson(s.best_throughput)},
                      {"best_under_latency", PointJson(s.best_under_latency)}});
  }
  j["analysis"] = {{"knee_threshold", report.knee_threshold},
                   {"latency_percentile", BoundPercentile(o)},
                   {"max_latency_ms", report.max_latency_ms ? Json(*report.max_latency_ms) : Json(nullptr)},
                   {"series", series}};
  return j.dump(2) + "\n";
}

std::string FormatBenchCsv(const BenchReport& report) {
  const BenchOptions& o = report.options;
  std::ostringstream out;
  out << "batch,threads,concurrency,requests,inferences,wall_s,throughput_per_s,mean_ms,stddev_ms,min_ms,max_ms";
  for (double p : o.percentiles) out << "," << PercentileName(p) << "_ms";
  out << ",session_ms,session_peak_rss_bytes,peak_rss_bytes,arena_bytes,arena_blocks,kernel_bytes,weights_bytes,errors\n";
  auto num = [](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return std::string(buf);
  };
  for (const BenchResult& r : report.run.results) {
    out << r.config.batch << "," << (report.run.server ? "" : std::to_string(r.config.threads)) << ","
        << r.config.concurrency << "," << r.requests << ","
        << r.inferences << "," << num(r.wall_s) << "," << num(r.throughput) << "," << num(r.latency.mean) << ","
        << num(r.latency.stddev) << "," << num(r.latency.min) << "," << num(r.latency.max);
    for (double v : r.latency.percentiles) out << "," << num(v);
    if (report.run.server) {  // the server's own figures: empty
      out << ",,,,,,,";
    } else {
      out << "," << num(r.session_ms) << "," << r.session_peak_rss_bytes << "," << r.peak_rss_bytes << ","
          << r.arena_bytes << "," << r.arena_blocks << "," << r.kernel_bytes << "," << r.weights_bytes;
    }
    out << "," << r.errors << "\n";
  }
  return out.str();
}

}  // namespace ferry::tools
