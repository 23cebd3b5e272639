#include "tools/bench_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/isa.h"

namespace ferry::tools {
namespace {

// Geometry (px). Columns (latency, throughput, memory) of kPanelWidth side by side from kLeft, kColumnGap apart
// (room for the next column's tick labels); rows (one per group) of kPanelHeight below the column headings, each
// under a title band; the legend right of the last column; notes and the footer under everything.
constexpr double kLeft = 72, kPanelWidth = 200, kColumnGap = 84;
constexpr double kTitleY = 28, kHeadingY = 56, kRowsTop = 64;
constexpr double kRowTitleHeight = 22, kPanelHeight = 160, kRowBelow = 28;  // kRowBelow: the batch labels
constexpr double kPad = 14;  // between a panel's sides and the first and last batch
constexpr double kLegendGap = 30, kLegendWidth = 230;
constexpr double kLine = 16;  // the height of a line of legend, notes or footer
constexpr double kKneeFont = 11, kKneeRadius = 8, kKneeLabelHeight = 12;

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
const char* const kDashes[] = {"", "7 4", "2 3", "10 3 2 3", "4 4"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string Label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A value in a tooltip: "n/a" for NaN or infinity.
std::string ValueText(double v) { return std::isfinite(v) ? Num(v) : "n/a"; }

bool Measured(double mib) { return std::isfinite(mib) && mib >= 0; }

// One row of panels: a group's series and the vertical extent of its plot areas.
struct Row {
  std::string group;
  std::vector<size_t> series;
  double top = 0, bottom = 0;
  double Y(const BenchAxis& axis, double v) const { return bottom - axis.Fraction(v) * (bottom - top); }
};

// One column of panels: a metric, its shared y axis and its left edge.
struct Column {
  std::string id, heading;
  BenchAxis axis;
  double left = 0;
};

// Batch sizes to x positions inside a panel, log2 spaced over every batch of the plot.
class XMap {
 public:
  explicit XMap(const std::set<int64_t>& batches) {
    if (!batches.empty()) {
      lo_ = std::log2(static_cast<double>(std::max<int64_t>(1, *batches.begin())));
      hi_ = std::log2(static_cast<double>(std::max<int64_t>(1, *batches.rbegin())));
    }
  }
  double X(int64_t batch, double left) const {
    if (!(hi_ > lo_)) return left + kPanelWidth / 2;
    const double t = (std::log2(static_cast<double>(std::max<int64_t>(1, batch))) - lo_) / (hi_ - lo_);
    return left + kPad + t * (kPanelWidth - 2 * kPad);
  }

 private:
  double lo_ = 0, hi_ = 0;
};

void HLine(std::ostringstream& out, const std::string& cls, double x1, double x2, double y, const std::string& stroke,
           const std::string& extra = "") {
  out << "<line class=\"" << cls << "\" x1=\"" << Num(x1) << "\" y1=\"" << Num(y) << "\" x2=\"" << Num(x2) << "\" y2=\""
      << Num(y) << "\" stroke=\"" << stroke << "\"" << extra << "/>\n";
}

// Opens a panel's group and draws its grid, ticks and axes.
void OpenPanel(std::ostringstream& out, const Column& col, const Row& row, size_t row_index, const XMap& x,
               const std::set<int64_t>& batches, bool last_row) {
  out << "<g id=\"" << col.id << "-" << row_index + 1 << "\" class=\"panel\" data-group=\"" << XmlEscape(row.group)
      << "\">\n";
  const double left = col.left, right = col.left + kPanelWidth;
  for (double t : col.axis.ticks) {
    const double y = row.Y(col.axis, t);
    HLine(out, "grid", left, right, y, "#e5e5e5");
    out << "<text class=\"ytick\" x=\"" << Num(left - 6) << "\" y=\"" << Num(y + 4) << "\" text-anchor=\"end\">"
        << XmlEscape(Label(t)) << "</text>\n";
  }
  double last_label = -1e9;
  for (int64_t b : batches) {
    const double px = x.X(b, left);
    out << "<line class=\"xtick\" x1=\"" << Num(px) << "\" y1=\"" << Num(row.bottom) << "\" x2=\"" << Num(px)
        << "\" y2=\"" << Num(row.bottom + 5) << "\" stroke=\"#333\"/>\n";
    const double half = TextWidth(std::to_string(b), 12) / 2;
    if (px - half - last_label >= 4) {  // skip labels that would overlap on a crowded log axis
      out << "<text class=\"xlabel\" x=\"" << Num(px) << "\" y=\"" << Num(row.bottom + 18)
          << "\" text-anchor=\"middle\">" << b << "</text>\n";
      last_label = px + half;
    }
  }
  HLine(out, "axis", left, right, row.bottom, "#333");
  out << "<line class=\"axis\" x1=\"" << Num(left) << "\" y1=\"" << Num(row.top) << "\" x2=\"" << Num(left)
      << "\" y2=\"" << Num(row.bottom) << "\" stroke=\"#333\"/>\n";
  if (last_row) {
    out << "<text class=\"axis-title\" x=\"" << Num(left + kPanelWidth / 2) << "\" y=\"" << Num(row.bottom + 36)
        << "\" text-anchor=\"middle\">batch size</text>\n";
  }
}

void Line(std::ostringstream& out, const std::string& cls, const std::string& color, const std::string& dash,
          const std::string& title, const std::vector<std::pair<double, double>>& points) {
  out << "<polyline class=\"" << cls << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"";
  if (!dash.empty()) out << " stroke-dasharray=\"" << dash << "\"";
  out << " points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    out << (i ? " " : "") << Num(points[i].first) << "," << Num(points[i].second);
  }
  out << "\"><title>" << XmlEscape(title) << "</title></polyline>\n";
}

void Dot(std::ostringstream& out, const std::string& cls, const std::string& color, double x, double y,
         const std::string& title) {
  out << "<circle class=\"" << cls << "\" cx=\"" << Num(x) << "\" cy=\"" << Num(y) << "\" r=\"3\" fill=\"" << color
      << "\"><title>" << XmlEscape(title) << "</title></circle>\n";
}

std::string PointTitle(const BenchPlotSeries& s, size_t i, const std::string& what) {
  return s.label + ": batch " + std::to_string(s.batches[i]) + ", " + what;
}

// The latency panel's content: the bound, then one line per series and percentile.
void LatencyContent(std::ostringstream& out, const BenchPlot& plot, const Column& col, const Row& row, const XMap& x,
                    const std::vector<std::string>& colors) {
  if (plot.max_latency_ms) {
    const double y = row.Y(col.axis, *plot.max_latency_ms);
    HLine(out, "bound", col.left, col.left + kPanelWidth, y, "#888", " stroke-dasharray=\"3 3\"");
    // At the left end, where latency is usually lowest, so the label rarely crosses a curve.
    out << "<text class=\"bound-label\" x=\"" << Num(col.left + 4) << "\" y=\"" << Num(std::max(row.top + 10, y - 4))
        << "\" font-size=\"11\" fill=\"#555\">"
        << XmlEscape("max-latency " + Label(*plot.max_latency_ms) + " ms (" + plot.bound_percentile_name + ")")
        << "</text>\n";
  }
  for (size_t si : row.series) {
    const BenchPlotSeries& s = plot.series[si];
    for (size_t pi = 0; pi < s.latency_ms.size(); ++pi) {
      const std::string name = pi < plot.percentile_names.size() ? plot.percentile_names[pi] : "p?";
      std::vector<std::pair<double, double>> pts;
      for (size_t i = 0; i < s.batches.size() && i < s.latency_ms[pi].size(); ++i) {
        pts.emplace_back(x.X(s.batches[i], col.left), row.Y(col.axis, s.latency_ms[pi][i]));
        Dot(out, "latency-point", colors[si], pts.back().first, pts.back().second,
            PointTitle(s, i, name + " " + ValueText(s.latency_ms[pi][i]) + " ms"));
      }
      Line(out, "latency-line", colors[si], kDashes[pi % std::size(kDashes)], s.label + ", " + name, pts);
    }
  }
}

// The throughput panel's content: one line per series, the knees circled, and their labels placed last (on top)
// where they overlap no other label, with a leader to the knee when one had to move away from it.
void ThroughputContent(std::ostringstream& out, const BenchPlot& plot, const Column& col, const Row& row, const XMap& x,
                       const std::vector<std::string>& colors) {
  struct Knee {
    double x, y;
    size_t series;
  };
  std::vector<Knee> knees;
  for (size_t si : row.series) {
    const BenchPlotSeries& s = plot.series[si];
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < s.batches.size() && i < s.throughput.size(); ++i) {
      pts.emplace_back(x.X(s.batches[i], col.left), row.Y(col.axis, s.throughput[i]));
      Dot(out, "throughput-point", colors[si], pts.back().first, pts.back().second,
          PointTitle(s, i, ValueText(s.throughput[i]) + " inferences/s"));
      if (s.knee_batch && *s.knee_batch == s.batches[i]) knees.push_back({pts.back().first, pts.back().second, si});
    }
    Line(out, "throughput-line", colors[si], "", s.label + ", throughput", pts);
  }
  const double width = TextWidth("knee", kKneeFont);
  std::vector<LabelBox> wanted;
  for (const Knee& k : knees) {
    const BenchPlotSeries& s = plot.series[k.series];
    out << "<circle class=\"knee\" cx=\"" << Num(k.x) << "\" cy=\"" << Num(k.y) << "\" r=\"" << Num(kKneeRadius)
        << "\" fill=\"none\" stroke=\"" << colors[k.series] << "\" stroke-width=\"1.5\"><title>"
        << XmlEscape(s.label + ": knee at batch " + std::to_string(*s.knee_batch)) << "</title></circle>\n";
    wanted.push_back({k.x - width / 2, k.y - kKneeRadius - 2 - kKneeLabelHeight, width, kKneeLabelHeight});
  }
  std::vector<LabelBox> circles;  // a label covers no knee's circle
  for (const Knee& k : knees) {
    circles.push_back({k.x - kKneeRadius, k.y - kKneeRadius, 2 * kKneeRadius, 2 * kKneeRadius});
  }
  const std::vector<LabelBox> placed = PlaceLabels(wanted, {col.left, row.top, kPanelWidth, kPanelHeight}, circles);
  for (size_t i = 0; i < knees.size(); ++i) {
    const Knee& k = knees[i];
    const LabelBox& b = placed[i];
    const double cx = b.x + b.width / 2;
    if (std::abs(b.y - wanted[i].y) > kKneeLabelHeight || std::abs(b.x - wanted[i].x) > 1) {
      const bool above = b.y + b.height <= k.y;
      const double y1 = above ? b.y + b.height : b.y, dy = k.y - y1, dx = k.x - cx;
      const double len = std::hypot(dx, dy);
      if (len > kKneeRadius) {  // from the label's edge to the circle's
        const double x2 = k.x - dx / len * kKneeRadius, y2 = k.y - dy / len * kKneeRadius;
        out << "<line class=\"knee-leader\" x1=\"" << Num(cx) << "\" y1=\"" << Num(y1) << "\" x2=\"" << Num(x2)
            << "\" y2=\"" << Num(y2) << "\" stroke=\"" << colors[k.series] << "\" stroke-width=\"0.8\"/>\n";
      }
    }
    out << "<text class=\"knee-label\" x=\"" << Num(cx) << "\" y=\"" << Num(b.y + 9.5) << "\" font-size=\""
        << Num(kKneeFont) << "\" text-anchor=\"middle\" fill=\"" << colors[k.series]
        << "\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">knee</text>\n";
  }
}

// The memory panel's content: one line per series through the points that have a figure.
void MemoryContent(std::ostringstream& out, const BenchPlot& plot, const Column& col, const Row& row, const XMap& x,
                   const std::vector<std::string>& colors) {
  for (size_t si : row.series) {
    const BenchPlotSeries& s = plot.series[si];
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < s.batches.size() && i < s.memory_mib.size(); ++i) {
      if (!Measured(s.memory_mib[i])) continue;
      pts.emplace_back(x.X(s.batches[i], col.left), row.Y(col.axis, s.memory_mib[i]));
      Dot(out, "memory-point", colors[si], pts.back().first, pts.back().second,
          PointTitle(s, i, Num(s.memory_mib[i]) + " MiB"));
    }
    if (!pts.empty()) Line(out, "memory-line", colors[si], "", s.label + ", " + plot.memory_title, pts);
  }
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

BenchPlot BenchPlotFromReport(const BenchReport& report) {
  BenchPlot plot;
  const bool server = report.run.server.has_value();
  plot.title = "ferry bench " + BenchTargetName(report);
  for (double p : report.options.percentiles) plot.percentile_names.push_back(PercentileName(p));
  plot.max_latency_ms = report.max_latency_ms;
  plot.bound_percentile_name = PercentileName(BoundPercentile(report.options));
  for (const BenchSeries& s : report.series) {
    BenchPlotSeries ps;
    ps.label = BenchSeriesLabel(report, s);
    ps.group = server ? "" : "threads " + (s.threads == 0 ? std::string("all") : std::to_string(s.threads));
    ps.key = "concurrency " + std::to_string(s.concurrency);
    ps.latency_ms.assign(report.options.percentiles.size(), {});
    std::map<int64_t, const BenchResult*> by_batch;
    for (const BenchResult& r : report.run.results) {
      if (r.config.threads == s.threads && r.config.concurrency == s.concurrency) by_batch[r.config.batch] = &r;
    }
    for (const auto& [batch, r] : by_batch) {
      ps.batches.push_back(batch);
      ps.throughput.push_back(r->throughput);
      for (size_t i = 0; i < ps.latency_ms.size(); ++i) {
        ps.latency_ms[i].push_back(i < r->latency.percentiles.size() ? r->latency.percentiles[i] : 0);
      }
      // A server's memory is its own: the client measures none.
      if (!server) ps.memory_mib.push_back(r->peak_rss_bytes >= 0 ? r->peak_rss_bytes / (1024.0 * 1024.0) : NAN);
    }
    if (s.knee && s.points.size() > 1) ps.knee_batch = s.knee->batch;
    plot.series.push_back(std::move(ps));
  }
  if (server) {
    plot.notes.push_back("memory: the server's own, not measured by ferry bench --server");
  } else if (!report.run.results.empty() && !report.run.results.front().rss_reset) {
    plot.notes.push_back("peak RSS: the process peak so far (VmHWM could not be reset per configuration)");
  } else if (!report.run.results.empty()) {
    plot.notes.push_back("peak RSS: the process' peak during each configuration (inputs, warm-up, measured runs)");
  }
  return plot;
}

std::string RenderBenchSvg(const BenchPlot& plot) {
  // Rows by group and colours by key, both in order of first appearance (a series without a key has its own).
  std::vector<Row> rows;
  std::map<std::string, size_t> key_index;
  std::vector<std::string> colors;
  std::set<int64_t> batches;
  std::vector<double> latencies, throughputs, memory;
  bool has_memory = false;
  for (size_t si = 0; si < plot.series.size(); ++si) {
    const BenchPlotSeries& s = plot.series[si];
    auto row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.group == s.group; });
    if (row == rows.end()) row = rows.insert(rows.end(), Row{s.group, {}, 0, 0});
    row->series.push_back(si);
    const std::string key = s.key.empty() ? "\x01" + s.label + "#" + std::to_string(si) : s.key;
    const size_t color = key_index.emplace(key, key_index.size()).first->second;
    colors.push_back(kColors[color % std::size(kColors)]);
    batches.insert(s.batches.begin(), s.batches.end());
    throughputs.insert(throughputs.end(), s.throughput.begin(), s.throughput.end());
    for (const auto& r : s.latency_ms) latencies.insert(latencies.end(), r.begin(), r.end());
    for (double m : s.memory_mib) {
      if (Measured(m)) {
        has_memory = true;
        memory.push_back(m);
      }
    }
  }
  if (rows.empty()) rows.push_back(Row{"", {}, 0, 0});
  if (plot.max_latency_ms) latencies.push_back(*plot.max_latency_ms);
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    rows[ri].top = kRowsTop + static_cast<double>(ri) * (kRowTitleHeight + kPanelHeight + kRowBelow) + kRowTitleHeight;
    rows[ri].bottom = rows[ri].top + kPanelHeight;
  }
  std::vector<Column> cols = {{"latency", "latency (ms)", ChooseBenchAxis(latencies), 0},
                              {"throughput", "throughput (inferences/s)", ChooseBenchAxis(throughputs), 0}};
  if (has_memory) cols.push_back({"memory", plot.memory_title, ChooseBenchAxis(memory), 0});
  for (size_t ci = 0; ci < cols.size(); ++ci) {
    cols[ci].left = kLeft + static_cast<double>(ci) * (kPanelWidth + kColumnGap);
  }
  const double panels_right = cols.back().left + kPanelWidth;
  const XMap x(batches);

  std::ostringstream body;
  body << "<text class=\"chart-title\" x=\"" << Num(kLeft) << "\" y=\"" << Num(kTitleY)
       << "\" font-size=\"15\" font-weight=\"bold\">" << XmlEscape(plot.title) << "</text>\n";
  for (const Column& col : cols) {
    body << "<text class=\"axis-title\" x=\"" << Num(col.left) << "\" y=\"" << Num(kHeadingY)
         << "\" font-weight=\"bold\">" << XmlEscape(col.heading) << "</text>\n";
    if (col.axis.log) {
      body << "<text class=\"axis-scale\" x=\"" << Num(col.left + TextWidth(col.heading, 12) + 6) << "\" y=\""
           << Num(kHeadingY) << "\" font-size=\"11\" fill=\"#555\">log scale</text>\n";
    }
  }
  for (const Row& row : rows) {
    if (row.group.empty()) continue;
    const double y = row.top - kRowTitleHeight + 12;
    body << "<text class=\"row-title\" x=\"12\" y=\"" << Num(y) << "\" font-weight=\"bold\">" << XmlEscape(row.group)
         << "</text>\n";
    HLine(body, "row-rule", 12 + TextWidth(row.group, 12) + 8, panels_right, y - 4, "#bbb");
  }
  for (const Column& col : cols) {
    body << "<g id=\"" << col.id << "\">\n";
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      OpenPanel(body, col, rows[ri], ri, x, batches, ri + 1 == rows.size());
      if (col.id == "latency") LatencyContent(body, plot, col, rows[ri], x, colors);
      else if (col.id == "throughput") ThroughputContent(body, plot, col, rows[ri], x, colors);
      else MemoryContent(body, plot, col, rows[ri], x, colors);
      body << "</g>\n";
    }
    body << "</g>\n";
  }

  // Legend: one colour per key with each series' knee, then one dash pattern per percentile.
  const double lx = panels_right + kLegendGap;
  double ly = kRowsTop + 10;
  body << "<g id=\"legend\">\n";
  for (size_t si = 0; si < plot.series.size(); ++si) {
    const BenchPlotSeries& s = plot.series[si];
    body << "<rect x=\"" << Num(lx) << "\" y=\"" << Num(ly - 9) << "\" width=\"14\" height=\"10\" fill=\"" << colors[si]
         << "\"/>\n";
    body << "<text class=\"legend-series\" x=\"" << Num(lx + 20) << "\" y=\"" << Num(ly) << "\">" << XmlEscape(s.label)
         << "</text>\n";
    ly += kLine;
    if (s.knee_batch) {
      body << "<text class=\"legend-knee\" x=\"" << Num(lx + 20) << "\" y=\"" << Num(ly - 2)
           << "\" font-size=\"11\" fill=\"#555\">knee at batch " << *s.knee_batch << "</text>\n";
      ly += kLine;
    }
  }
  ly += 8;
  for (size_t pi = 0; pi < plot.percentile_names.size(); ++pi) {
    const std::string dash = kDashes[pi % std::size(kDashes)];
    HLine(body, "legend-dash", lx, lx + 28, ly - 4, "#333",
          " stroke-width=\"2\"" + (dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\""));
    body << "<text class=\"legend-percentile\" x=\"" << Num(lx + 34) << "\" y=\"" << Num(ly) << "\">"
         << XmlEscape(plot.percentile_names[pi] + " latency") << "</text>\n";
    ly += kLine;
  }
  body << "</g>\n";

  // Notes and the footer, under the panels and the legend.
  std::vector<std::string> notes = plot.notes;
  if (!has_memory) notes.push_back("no memory panel: no configuration has a peak memory figure");
  std::vector<std::pair<std::string, std::string>> footer;  // (class, text)
  if (!plot.host.empty()) footer.emplace_back("footer-host", "host: " + plot.host);
  std::string made;
  if (!plot.ferry_version.empty()) made = "ferry " + plot.ferry_version;
  if (!plot.date.empty()) made += (made.empty() ? "" : ", ") + plot.date + " (UTC)";
  if (!made.empty()) footer.emplace_back("footer-made", made);
  double y = std::max(rows.back().bottom + kRowBelow + 20, ly) + 10;
  for (const std::string& n : notes) {
    body << "<text class=\"note\" x=\"12\" y=\"" << Num(y) << "\" font-size=\"11\" fill=\"#555\">" << XmlEscape(n)
         << "</text>\n";
    y += kLine;
  }
  if (!footer.empty()) {
    y += 4;
    HLine(body, "footer-rule", 12, panels_right + kLegendGap + kLegendWidth - 12, y - 12, "#ddd");
  }
  for (const auto& [cls, text] : footer) {
    body << "<text class=\"" << cls << "\" x=\"12\" y=\"" << Num(y) << "\" font-size=\"11\" fill=\"#333\">"
         << XmlEscape(text) << "</text>\n";
    y += kLine;
  }

  const double width = panels_right + kLegendGap + kLegendWidth, height = y;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << Num(width) << "\" height=\""
      << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<title>" << XmlEscape(plot.title) << "</title>\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << Num(width) << "\" height=\"" << Num(height) << "\" fill=\"white\"/>\n";
  out << body.str() << "</svg>\n";
  return out.str();
}

std::string CpuModelFromCpuinfo(std::string_view cpuinfo) {
  std::string fallback;
  size_t at = 0;
  while (at < cpuinfo.size()) {
    size_t end = cpuinfo.find('\n', at);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(at, end - at);
    at = end + 1;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
    auto trim = [](std::string_view s) {
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
      while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
      return s;
    };
    key = trim(key);
    value = trim(value);
    if (value.empty()) continue;
    if (key == "model name") return std::string(value);
    if (fallback.empty() && (key == "Hardware" || key == "Processor")) fallback = value;
  }
  return fallback;
}

std::string BenchHostDescription() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  std::string model = CpuModelFromCpuinfo(text.str());
  if (model.empty()) model = "unknown CPU";
  const unsigned cpus = std::thread::hardware_concurrency();
  if (cpus > 0) model += ", " + std::to_string(cpus) + " logical CPU" + (cpus == 1 ? "" : "s");
  return model + ", ISA " + DetectHostIsa().ToString();
}

std::string UtcDate(std::time_t t) {
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "";
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace ferry::tools
