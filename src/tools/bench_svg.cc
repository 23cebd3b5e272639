#include "tools/bench_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace ferry::tools {
namespace {

// Geometry (px): the plot area of both panels spans [kLeft, kRight] horizontally; the legend sits right of it.
constexpr double kWidth = 860, kHeight = 640;
constexpr double kLeft = 80, kRight = 620;
constexpr double kLatencyTop = 60, kLatencyBottom = 280;
constexpr double kThroughputTop = 360, kThroughputBottom = 580;
constexpr double kPad = 24;  // between the axis ends and the first and last batch

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

double Clean(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

struct Axis {
  double top, bottom, max;
  double Y(double v) const { return bottom - Clean(v) / max * (bottom - top); }
};

class XMap {
 public:
  explicit XMap(const std::set<int64_t>& batches) {
    if (!batches.empty()) {
      lo_ = std::log2(static_cast<double>(std::max<int64_t>(1, *batches.begin())));
      hi_ = std::log2(static_cast<double>(std::max<int64_t>(1, *batches.rbegin())));
    }
  }
  double X(int64_t batch) const {
    if (!(hi_ > lo_)) return (kLeft + kRight) / 2;
    const double t = (std::log2(static_cast<double>(std::max<int64_t>(1, batch))) - lo_) / (hi_ - lo_);
    return kLeft + kPad + t * (kRight - kLeft - 2 * kPad);
  }

 private:
  double lo_ = 0, hi_ = 0;
};

// Axes, grid, ticks and titles of one panel.
void Panel(std::ostringstream& out, const std::string& id, const std::string& y_title, const Axis& axis,
           const std::vector<double>& yticks, const XMap& x, const std::set<int64_t>& batches) {
  out << "<g id=\"" << id << "\" class=\"panel\">\n";
  for (double t : yticks) {
    const std::string y = Num(axis.Y(t));
    out << "<line class=\"grid\" x1=\"" << Num(kLeft) << "\" y1=\"" << y << "\" x2=\"" << Num(kRight) << "\" y2=\"" << y
        << "\" stroke=\"#e5e5e5\"/>\n";
    out << "<text class=\"ytick\" x=\"" << Num(kLeft - 6) << "\" y=\"" << Num(axis.Y(t) + 4)
        << "\" text-anchor=\"end\">" << XmlEscape(Label(t)) << "</text>\n";
  }
  double last_label = -1e9;
  for (int64_t b : batches) {
    const double px = x.X(b);
    out << "<line class=\"xtick\" x1=\"" << Num(px) << "\" y1=\"" << Num(axis.bottom) << "\" x2=\"" << Num(px)
        << "\" y2=\"" << Num(axis.bottom + 5) << "\" stroke=\"#333\"/>\n";
    if (px - last_label >= 22) {  // skip labels that would overlap on a crowded log axis
      out << "<text class=\"xlabel\" x=\"" << Num(px) << "\" y=\"" << Num(axis.bottom + 18)
          << "\" text-anchor=\"middle\">" << b << "</text>\n";
      last_label = px;
    }
  }
  out << "<line class=\"axis\" x1=\"" << Num(kLeft) << "\" y1=\"" << Num(axis.bottom) << "\" x2=\"" << Num(kRight)
      << "\" y2=\"" << Num(axis.bottom) << "\" stroke=\"#333\"/>\n";
  out << "<line class=\"axis\" x1=\"" << Num(kLeft) << "\" y1=\"" << Num(axis.top) << "\" x2=\"" << Num(kLeft)
      << "\" y2=\"" << Num(axis.bottom) << "\" stroke=\"#333\"/>\n";
  const double mid = (axis.top + axis.bottom) / 2;
  out << "<text class=\"axis-title\" x=\"" << Num(kLeft - 55) << "\" y=\"" << Num(mid) << "\" transform=\"rotate(-90 "
      << Num(kLeft - 55) << " " << Num(mid) << ")\" text-anchor=\"middle\">" << XmlEscape(y_title) << "</text>\n";
  out << "<text class=\"axis-title\" x=\"" << Num((kLeft + kRight) / 2) << "\" y=\"" << Num(axis.bottom + 36)
      << "\" text-anchor=\"middle\">batch size</text>\n";
}

void Line(std::ostringstream& out, const std::string& cls, const std::string& color, const std::string& dash,
          const std::string& title, const std::vector<std::pair<double, double>>& points) {
  out << "<polyline class=\"" << cls << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\"";
  if (!dash.empty()) out << " stroke-dasharray=\"" << dash << "\"";
  out << " points=\"";
  for (size_t i = 0; i < points.size(); ++i) out << (i ? " " : "") << Num(points[i].first) << "," << Num(points[i].second);
  out << "\"><title>" << XmlEscape(title) << "</title></polyline>\n";
}

void Dot(std::ostringstream& out, const std::string& cls, const std::string& color, double x, double y,
         const std::string& title) {
  out << "<circle class=\"" << cls << "\" cx=\"" << Num(x) << "\" cy=\"" << Num(y) << "\" r=\"3\" fill=\"" << color
      << "\"><title>" << XmlEscape(title) << "</title></circle>\n";
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

std::vector<double> NiceTicks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) max = 1;
  target = std::max(1, target);
  const double raw = max / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  const int n = static_cast<int>(std::ceil(max / step - 1e-9));
  std::vector<double> ticks;
  for (int i = 0; i <= std::max(1, n); ++i) ticks.push_back(i * step);
  return ticks;
}

BenchPlot BenchPlotFromReport(const BenchReport& report) {
  BenchPlot plot;
  plot.title = "ferry bench " + BenchTargetName(report);
  for (double p : report.options.percentiles) plot.percentile_names.push_back(PercentileName(p));
  plot.max_latency_ms = report.max_latency_ms;
  plot.bound_percentile_name = PercentileName(BoundPercentile(report.options));
  for (const BenchSeries& s : report.series) {
    BenchPlotSeries ps;
    ps.label = BenchSeriesLabel(report, s);
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
    }
    if (s.knee && s.points.size() > 1) ps.knee_batch = s.knee->batch;
    plot.series.push_back(std::move(ps));
  }
  return plot;
}

std::string RenderBenchSvg(const BenchPlot& plot) {
  std::set<int64_t> batches;
  double max_latency = 0, max_throughput = 0;
  for (const auto& s : plot.series) {
    batches.insert(s.batches.begin(), s.batches.end());
    for (double v : s.throughput) max_throughput = std::max(max_throughput, Clean(v));
    for (const auto& row : s.latency_ms) {
      for (double v : row) max_latency = std::max(max_latency, Clean(v));
    }
  }
  if (plot.max_latency_ms) max_latency = std::max(max_latency, Clean(*plot.max_latency_ms));
  const std::vector<double> lat_ticks = NiceTicks(max_latency), tp_ticks = NiceTicks(max_throughput);
  const Axis lat{kLatencyTop, kLatencyBottom, lat_ticks.back()};
  const Axis tp{kThroughputTop, kThroughputBottom, tp_ticks.back()};
  const XMap x(batches);

  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << Num(kWidth) << "\" height=\""
      << Num(kHeight) << "\" viewBox=\"0 0 " << Num(kWidth) << " " << Num(kHeight)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<title>" << XmlEscape(plot.title) << "</title>\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << Num(kWidth) << "\" height=\"" << Num(kHeight) << "\" fill=\"white\"/>\n";
  out << "<text class=\"chart-title\" x=\"" << Num(kLeft) << "\" y=\"28\" font-size=\"15\" font-weight=\"bold\">"
      << XmlEscape(plot.title) << "</text>\n";

  Panel(out, "latency", "latency (ms)", lat, lat_ticks, x, batches);
  if (plot.max_latency_ms) {
    const std::string y = Num(lat.Y(*plot.max_latency_ms));
    out << "<line class=\"bound\" x1=\"" << Num(kLeft) << "\" y1=\"" << y << "\" x2=\"" << Num(kRight) << "\" y2=\"" << y
        << "\" stroke=\"#888\" stroke-dasharray=\"3 3\"/>\n";
    // At the left end, where latency is usually lowest, so the label rarely crosses a curve.
    out << "<text class=\"bound-label\" x=\"" << Num(kLeft + 4) << "\" y=\"" << Num(lat.Y(*plot.max_latency_ms) - 4)
        << "\" fill=\"#555\">" << XmlEscape("max-latency " + Label(*plot.max_latency_ms) + " ms (" +
                                                               plot.bound_percentile_name + ")")
        << "</text>\n";
  }
  for (size_t si = 0; si < plot.series.size(); ++si) {
    const BenchPlotSeries& s = plot.series[si];
    const std::string color = kColors[si % std::size(kColors)];
    for (size_t pi = 0; pi < s.latency_ms.size(); ++pi) {
      const std::string name = pi < plot.percentile_names.size() ? plot.percentile_names[pi] : "p?";
      std::vector<std::pair<double, double>> pts;
      for (size_t i = 0; i < s.batches.size() && i < s.latency_ms[pi].size(); ++i) {
        pts.emplace_back(x.X(s.batches[i]), lat.Y(s.latency_ms[pi][i]));
        Dot(out, "latency-point", color, pts.back().first, pts.back().second,
            s.label + ": batch " + std::to_string(s.batches[i]) + ", " + name + " " + ValueText(s.latency_ms[pi][i]) + " ms");
      }
      Line(out, "latency-line", color, kDashes[pi % std::size(kDashes)], s.label + ", " + name, pts);
    }
  }
  out << "</g>\n";

  Panel(out, "throughput", "throughput (inferences/s)", tp, tp_ticks, x, batches);
  for (size_t si = 0; si < plot.series.size(); ++si) {
    const BenchPlotSeries& s = plot.series[si];
    const std::string color = kColors[si % std::size(kColors)];
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < s.batches.size() && i < s.throughput.size(); ++i) {
      pts.emplace_back(x.X(s.batches[i]), tp.Y(s.throughput[i]));
      Dot(out, "throughput-point", color, pts.back().first, pts.back().second,
          s.label + ": batch " + std::to_string(s.batches[i]) + ", " + ValueText(s.throughput[i]) + " inferences/s");
      if (s.knee_batch && *s.knee_batch == s.batches[i]) {
        out << "<circle class=\"knee\" cx=\"" << Num(pts.back().first) << "\" cy=\"" << Num(pts.back().second)
            << "\" r=\"8\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"><title>"
            << XmlEscape(s.label + ": knee at batch " + std::to_string(s.batches[i])) << "</title></circle>\n";
        out << "<text class=\"knee-label\" x=\"" << Num(pts.back().first) << "\" y=\"" << Num(pts.back().second - 12)
            << "\" text-anchor=\"middle\" fill=\"" << color << "\">knee</text>\n";
      }
    }
    Line(out, "throughput-line", color, "", s.label + ", throughput", pts);
  }
  out << "</g>\n";

  // Legend: one colour per series, one dash pattern per percentile.
  double ly = kLatencyTop;
  const double lx = kRight + 24;
  out << "<g id=\"legend\">\n";
  for (size_t si = 0; si < plot.series.size(); ++si) {
    const std::string color = kColors[si % std::size(kColors)];
    out << "<rect x=\"" << Num(lx) << "\" y=\"" << Num(ly - 9) << "\" width=\"14\" height=\"10\" fill=\"" << color
        << "\"/>\n";
    out << "<text class=\"legend-series\" x=\"" << Num(lx + 20) << "\" y=\"" << Num(ly) << "\">"
        << XmlEscape(plot.series[si].label) << "</text>\n";
    ly += 18;
  }
  ly += 8;
  for (size_t pi = 0; pi < plot.percentile_names.size(); ++pi) {
    out << "<line x1=\"" << Num(lx) << "\" y1=\"" << Num(ly - 4) << "\" x2=\"" << Num(lx + 28) << "\" y2=\"" << Num(ly - 4)
        << "\" stroke=\"#333\" stroke-width=\"2\"";
    const std::string dash = kDashes[pi % std::size(kDashes)];
    if (!dash.empty()) out << " stroke-dasharray=\"" << dash << "\"";
    out << "/>\n<text class=\"legend-percentile\" x=\"" << Num(lx + 34) << "\" y=\"" << Num(ly) << "\">"
        << XmlEscape(plot.percentile_names[pi] + " latency") << "</text>\n";
    ly += 18;
  }
  out << "</g>\n</svg>\n";
  return out.str();
}

}  // namespace ferry::tools
