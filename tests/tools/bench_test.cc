// `ferry bench`'s library (tools/bench*.h): nearest-rank percentiles and latency statistics, the knee and the
// best batch under a latency bound on synthetic curves, the batched input shapes, the SVG chart (its axes, rows
// of panels, knee labels, memory panel and footer, and the layout helpers behind them), and the runner on a tiny
// model (counts, modes, concurrency, errors). tests/e2e/bench_test.sh drives the CLI and parses the JSON, CSV and
// SVG it writes.
#include "tools/bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "ferry/error.h"
#include "ferry/limits.h"
#include "testing/model_builder.h"
#include "tools/bench_report.h"
#include "tools/bench_stats.h"
#include "tools/bench_svg.h"

namespace ferry::tools {
namespace {

using ::ferry::testing::ModelBuilder;

TEST(BenchStats, NearestRankPercentiles) {
  const std::vector<double> ten = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(PercentileNearestRank(ten, 50), 5);   // rank ceil(5) = 5
  EXPECT_EQ(PercentileNearestRank(ten, 90), 9);
  EXPECT_EQ(PercentileNearestRank(ten, 99), 10);  // rank ceil(9.9) = 10
  EXPECT_EQ(PercentileNearestRank(ten, 100), 10);
  EXPECT_EQ(PercentileNearestRank(ten, 10), 1);
  EXPECT_EQ(PercentileNearestRank(ten, 11), 2);
  EXPECT_EQ(PercentileNearestRank(ten, 0), 1);
  const std::vector<double> one = {3.5};
  EXPECT_EQ(PercentileNearestRank(one, 50), 3.5);
  EXPECT_EQ(PercentileNearestRank(one, 99), 3.5);
  EXPECT_EQ(PercentileNearestRank({}, 50), 0);
  EXPECT_EQ(PercentileName(50), "p50");
  EXPECT_EQ(PercentileName(99.9), "p99.9");
}

TEST(BenchStats, SummarizeLatencies) {
  const std::vector<double> ps = {50, 90};
  LatencyStats s = SummarizeLatencies({9, 2, 4, 4, 5, 4, 5, 7}, ps);
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);  // sample standard deviation
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  ASSERT_EQ(s.percentiles.size(), 2u);
  EXPECT_EQ(s.percentiles[0], 4);  // sorted 2 4 4 4 5 5 7 9: rank 4
  EXPECT_EQ(s.percentiles[1], 9);  // rank ceil(7.2) = 8
  LatencyStats single = SummarizeLatencies({1.5}, ps);
  EXPECT_EQ(single.stddev, 0);
  EXPECT_EQ(single.percentiles[1], 1.5);
  LatencyStats none = SummarizeLatencies({}, ps);
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mean, 0);
  EXPECT_EQ(none.percentiles, std::vector<double>({0, 0}));
}

std::vector<CurvePoint> Curve(std::initializer_list<std::pair<int64_t, double>> points) {
  std::vector<CurvePoint> out;
  for (auto [b, tp] : points) out.push_back({b, tp, 0});
  return out;
}

TEST(BenchKnee, LinearCurveHasItsKneeAtTheEndUnsaturated) {
  auto k = FindKnee(Curve({{1, 100}, {2, 200}, {4, 400}, {8, 800}}), 0.10);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->batch, 8);
  EXPECT_EQ(k->reference_batch, 4);
  ASSERT_TRUE(k->gain);
  EXPECT_NEAR(*k->gain, 1.0, 1e-12);
  EXPECT_FALSE(k->saturated);  // still growing: the real knee may be beyond the sweep
}

TEST(BenchKnee, SaturatingCurve) {
  // gains: 2: +90%, 4: +58%, 8: +6.7%, 16: +1.6%
  auto k = FindKnee(Curve({{16, 325}, {1, 100}, {4, 300}, {2, 190}, {8, 320}}), 0.10);  // any order
  ASSERT_TRUE(k);
  EXPECT_EQ(k->batch, 4);
  EXPECT_EQ(k->reference_batch, 2);
  EXPECT_NEAR(*k->gain, 300.0 / 190.0 - 1, 1e-12);
  EXPECT_TRUE(k->saturated);
  // A lower threshold moves the knee out.
  EXPECT_EQ(FindKnee(Curve({{1, 100}, {2, 190}, {4, 300}, {8, 320}, {16, 325}}), 0.05)->batch, 8);
}

TEST(BenchKnee, NoisyDipDoesNotCountAsAGain) {
  // 4 dips; 8 recovers to +27% over 4 but only +5.6% over the best smaller batch (2): the knee stays at 2.
  auto k = FindKnee(Curve({{1, 100}, {2, 180}, {4, 150}, {8, 190}}), 0.10);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->batch, 2);
  EXPECT_EQ(k->reference_batch, 1);
  EXPECT_TRUE(k->saturated);
  // A real gain after the dip still counts, measured from the best before it.
  auto later = FindKnee(Curve({{1, 100}, {2, 180}, {4, 150}, {8, 190}, {16, 260}}), 0.10);
  EXPECT_EQ(later->batch, 16);
  EXPECT_EQ(later->reference_batch, 8);
  EXPECT_NEAR(*later->gain, 260.0 / 190.0 - 1, 1e-12);
  EXPECT_FALSE(later->saturated);
}

TEST(BenchKnee, SinglePointFlatEmptyAndZero) {
  auto single = FindKnee(Curve({{4, 50}}), 0.10);
  ASSERT_TRUE(single);
  EXPECT_EQ(single->batch, 4);
  EXPECT_FALSE(single->gain);
  EXPECT_FALSE(single->saturated);
  auto flat = FindKnee(Curve({{1, 100}, {2, 100}, {4, 100}}), 0.10);
  EXPECT_EQ(flat->batch, 1);  // batching never paid
  EXPECT_FALSE(flat->gain);
  EXPECT_TRUE(flat->saturated);
  auto falling = FindKnee(Curve({{1, 100}, {2, 90}, {4, 50}}), 0.10);
  EXPECT_EQ(falling->batch, 1);
  EXPECT_FALSE(FindKnee({}, 0.10));
  auto from_zero = FindKnee(Curve({{1, 0}, {2, 0}, {4, 50}}), 0.10);
  EXPECT_EQ(from_zero->batch, 4);
  EXPECT_FALSE(from_zero->gain);  // unbounded
  EXPECT_THROW(FindKnee(Curve({{1, 10}, {1, 20}}), 0.10), InvalidArgumentError);
}

TEST(BenchKnee, BestUnderLatency) {
  const std::vector<CurvePoint> points = {{1, 100, 2}, {2, 180, 3}, {4, 300, 6}, {8, 320, 12}, {16, 310, 24}};
  auto best = BestUnderLatency(points, 10);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->batch, 4);
  EXPECT_EQ(BestUnderLatency(points, 12)->batch, 8);  // at most the bound
  EXPECT_EQ(BestUnderLatency(points, 1e9)->batch, 8);
  EXPECT_FALSE(BestUnderLatency(points, 1.5));  // none under the bound
  EXPECT_FALSE(BestUnderLatency({}, 10));
  const std::vector<CurvePoint> tie = {{2, 100, 1}, {1, 100, 1}};
  EXPECT_EQ(BestUnderLatency(tie, 5)->batch, 1);
  const std::vector<CurvePoint> nan = {{1, 100, NAN}};
  EXPECT_FALSE(BestUnderLatency(nan, 5));
}

IoInfo Input(const std::string& name, std::vector<int64_t> dims, std::vector<std::string> names = {}) {
  IoInfo i;
  i.name = name;
  i.dtype = DataType::kFloat;
  i.has_shape = true;
  i.dims = std::move(dims);
  i.dim_names = names.empty() ? std::vector<std::string>(i.dims.size()) : std::move(names);
  return i;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BenchInputs, BatchedInputShapes) {
  const std::vector<IoInfo> sym = {Input("x", {-1, 3, 8, 8}, {"N", "", "", ""})};
  EXPECT_EQ(BatchedInputShapes(sym, {}, 4).at("x"), std::vector<int64_t>({4, 3, 8, 8}));
  // Inputs without a symbolic dim 0 (a fixed one, a scalar) keep their shapes, beside a batched input too.
  const std::vector<IoInfo> fixed = {Input("x", {1, 3})};
  EXPECT_EQ(BatchedInputShapes(fixed, {}, 1).at("x"), std::vector<int64_t>({1, 3}));
  EXPECT_EQ(BatchedInputShapes(fixed, {}, 4).at("x"), std::vector<int64_t>({1, 3}));
  const std::vector<IoInfo> mixed = {sym[0], Input("s", {}), Input("w", {5, 3})};
  const auto m = BatchedInputShapes(mixed, {}, 2);
  EXPECT_EQ(m.at("x"), std::vector<int64_t>({2, 3, 8, 8}));
  EXPECT_EQ(m.at("s"), std::vector<int64_t>());
  EXPECT_EQ(m.at("w"), std::vector<int64_t>({5, 3}));
  const std::vector<IoInfo> seq = {Input("ids", {-1, -1}, {"batch", "seq"})};
  const std::string symbolic = ErrorOf([&] { BatchedInputShapes(seq, {}, 2); });
  EXPECT_NE(symbolic.find("dimension 1 ('seq') is symbolic; give --shape ids=DIMS"), std::string::npos) << symbolic;
  EXPECT_EQ(BatchedInputShapes(seq, {{"ids", {1, 128}}}, 8).at("ids"), std::vector<int64_t>({8, 128}));
  const std::string fixed_symbolic = ErrorOf([&] { BatchedInputShapes({Input("t", {4, -1}, {"", "T"})}, {}, 2); });
  EXPECT_NE(fixed_symbolic.find("input 't': dimension 1 ('T') is symbolic"), std::string::npos) << fixed_symbolic;
  IoInfo unknown = Input("u", {});
  unknown.has_shape = false;
  EXPECT_NE(ErrorOf([&] { BatchedInputShapes({unknown}, {}, 2); }).find("'u' has no declared shape"), std::string::npos);
  EXPECT_EQ(BatchedInputShapes({unknown}, {{"u", {1, 7}}}, 3).at("u"), std::vector<int64_t>({3, 7}));
  EXPECT_NE(ErrorOf([&] { BatchedInputShapes(sym, {{"nope", {1}}}, 2); }).find("no input 'nope' (inputs: x)"),
            std::string::npos);
}

TEST(BenchInputs, PlanBatchSweepRunsTheModelsOwnBatchWhenItFixesIt) {
  const std::vector<int64_t> requested = {1, 2, 8};
  const std::vector<IoInfo> sym = {Input("x", {-1, 3}, {"N", ""}), Input("s", {})};
  BatchSweep swept = PlanBatchSweep(sym, {}, requested);
  EXPECT_EQ(swept.batches, requested);
  EXPECT_EQ(swept.fixed, "");
  // Every input fixes dim 0, the same size: that is the batch.
  BatchSweep four = PlanBatchSweep({Input("x", {4, 3}), Input("y", {4, 8}), Input("s", {})}, {}, requested);
  EXPECT_EQ(four.batches, std::vector<int64_t>({4}));
  EXPECT_EQ(four.fixed, "no input has a symbolic dim 0 (x: 4x3, y: 4x8, s: scalar)");
  // Scalars only, or different leading sizes: one inference per request.
  EXPECT_EQ(PlanBatchSweep({Input("s", {})}, {}, requested).batches, std::vector<int64_t>({1}));
  BatchSweep differ = PlanBatchSweep({Input("x", {4, 3}), Input("v", {7})}, {}, requested);
  EXPECT_EQ(differ.batches, std::vector<int64_t>({1}));
  EXPECT_NE(differ.fixed, "");
  // --shape decides for an input whose shape the model leaves unknown.
  IoInfo unknown = Input("u", {});
  unknown.has_shape = false;
  EXPECT_EQ(PlanBatchSweep({unknown}, {{"u", {1, 7}}}, requested).batches, requested);
  EXPECT_EQ(PlanBatchSweep({unknown}, {{"u", {}}}, requested).batches, std::vector<int64_t>({1}));
}

TEST(BenchSvg, NiceTicksAndEscaping) {
  const auto unit = NiceTicks(0);  // 0..1 for no positive maximum
  ASSERT_EQ(unit.size(), 6u);
  EXPECT_EQ(unit.front(), 0);
  EXPECT_NEAR(unit.back(), 1, 1e-12);
  EXPECT_EQ(NiceTicks(NAN), NiceTicks(0));
  EXPECT_EQ(NiceTicks(10), std::vector<double>({0, 2, 4, 6, 8, 10}));
  const auto t = NiceTicks(7.3);
  EXPECT_GE(t.back(), 7.3);
  EXPECT_LE(t.size(), 7u);
  EXPECT_EQ(t.front(), 0);
  const auto big = NiceTicks(1234.0);
  EXPECT_EQ(big.back(), 1250);  // steps of 250
  EXPECT_EQ(XmlEscape("a<b>&\"c'\x01"), "a&lt;b&gt;&amp;&quot;c&apos; ");
}

BenchPlot TwoSeriesPlot() {
  BenchPlot plot;
  plot.title = "ferry bench <model> & co";
  plot.percentile_names = {"p50", "p99"};
  plot.max_latency_ms = 20;
  plot.bound_percentile_name = "p99";
  plot.series.push_back({"threads 1, concurrency 1", {1, 2, 4}, {100, 180, 200}, {{1, 2, 4}, {2, 3, 6}}, 2});
  plot.series.push_back({"threads 2, concurrency 1", {1, 2, 4}, {150, 250, 260}, {{1, 1.5, 3}, {1, 2, 5}}, {}});
  return plot;
}

TEST(BenchSvg, ChartHasBothPanelsAndEveryLine) {
  const std::string svg = RenderBenchSvg(TwoSeriesPlot());
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"latency\""), std::string::npos);
  EXPECT_NE(svg.find("id=\"throughput\""), std::string::npos);
  EXPECT_NE(svg.find("ferry bench &lt;model&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(svg.find("<model>"), std::string::npos);
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t at = svg.find(s); at != std::string::npos; at = svg.find(s, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("class=\"latency-line\""), 4u);     // 2 series x 2 percentiles
  EXPECT_EQ(count("class=\"throughput-line\""), 2u);
  EXPECT_EQ(count("class=\"knee\""), 1u);
  EXPECT_EQ(count("class=\"bound\""), 1u);
  EXPECT_EQ(count("<g"), count("</g>"));
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf\""), std::string::npos);
}

TEST(BenchSvg, DegenerateValuesGiveFiniteCoordinates) {
  BenchPlot plot;
  plot.title = "zeros";
  plot.percentile_names = {"p50"};
  plot.series.push_back({"one batch", {8}, {0}, {{0}}, {}});
  plot.series.push_back({"bad values", {8}, {NAN}, {{INFINITY}}, {}});
  const std::string svg = RenderBenchSvg(plot);
  for (const char* bad : {"nan", "inf\"", "inf,", "inf "}) EXPECT_EQ(svg.find(bad), std::string::npos) << bad << svg;
  EXPECT_NE(svg.find("n/a inferences/s"), std::string::npos);
  EXPECT_NE(svg.find("cx=\"172.00\""), std::string::npos) << svg;  // a single batch sits mid-axis (72 + 200 / 2)
  BenchPlot empty;
  EXPECT_NE(RenderBenchSvg(empty).find("</svg>"), std::string::npos);
}

// The elements <TAG ...> of an SVG document (of class `cls` when given): their attributes and text.
struct SvgElement {
  std::map<std::string, std::string> attrs;
  std::string text;
};
std::vector<SvgElement> SvgElements(const std::string& svg, const std::string& tag, const std::string& cls = "") {
  std::vector<SvgElement> out;
  const std::regex element("<" + tag + R"(\s([^>]*?)(/?)>)"), attr(R"re(([\w:-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element); it != std::sregex_iterator(); ++it) {
    SvgElement e;
    const std::string attrs = (*it)[1];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr); a != std::sregex_iterator(); ++a) {
      e.attrs[(*a)[1]] = (*a)[2];
    }
    if ((*it)[2].length() == 0) {
      const size_t from = static_cast<size_t>(it->position() + it->length());
      e.text = svg.substr(from, svg.find('<', from) - from);
    }
    if (cls.empty() || e.attrs["class"] == cls) out.push_back(std::move(e));
  }
  return out;
}

// The text of the panel <g id="ID" ...> up to its end (panels hold no inner groups).
std::string SvgPanel(const std::string& svg, const std::string& id) {
  const size_t at = svg.find("<g id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return svg.substr(at, svg.find("</g>", at) - at);
}

// Well-formed XML as far as this writer goes: every element closed in order, no stray '&' or '<'.
void ExpectWellFormed(const std::string& svg) {
  std::vector<std::string> open;
  for (size_t at = svg.find('<'); at != std::string::npos; at = svg.find('<', at + 1)) {
    const size_t end = svg.find('>', at);
    ASSERT_NE(end, std::string::npos);
    const std::string tag = svg.substr(at + 1, end - at - 1);
    ASSERT_EQ(tag.find('<'), std::string::npos) << tag;
    if (tag[0] == '?') continue;
    const std::string name = tag.substr(tag[0] == '/', tag.find_first_of(" />", 1) - (tag[0] == '/'));
    if (tag[0] == '/') {
      ASSERT_FALSE(open.empty()) << tag;
      EXPECT_EQ(open.back(), name);
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_TRUE(std::regex_search(svg, std::regex("^<\\?xml[^>]*\\?>\n<svg ")));
  EXPECT_FALSE(std::regex_search(svg, std::regex("&(?!(amp|lt|gt|quot|apos);)")));
}

BenchPlotSeries Series(const std::string& group, int concurrency, std::vector<double> throughput,
                       std::vector<double> p50, std::optional<int64_t> knee = {}, std::vector<double> memory = {}) {
  BenchPlotSeries s;
  s.key = "concurrency " + std::to_string(concurrency);
  s.group = group;
  s.label = group + ", " + s.key;
  s.batches = {1, 2, 4, 8};
  s.throughput = std::move(throughput);
  s.latency_ms = {std::move(p50)};
  s.knee_batch = knee;
  s.memory_mib = std::move(memory);
  return s;
}

TEST(BenchSvgLayout, LogAxisWithNiceTicksOnceTheValuesSpanMoreThanADecade) {
  const BenchAxis decades = ChooseBenchAxis({2, 4, NAN, 0, -1, 3000});  // 1-2-5 ticks would be 11: decades
  EXPECT_TRUE(decades.log);
  EXPECT_EQ(decades.ticks, std::vector<double>({1, 10, 100, 1000, 10000}));
  EXPECT_EQ(decades.lo, 1);
  EXPECT_EQ(decades.hi, 10000);
  EXPECT_NEAR(decades.Fraction(100), 0.5, 1e-12);
  EXPECT_EQ(decades.Fraction(0), 0);  // the bottom: non-positive and non-finite values
  EXPECT_EQ(decades.Fraction(NAN), 0);
  EXPECT_EQ(decades.Fraction(1e6), 1);  // clamped
  const BenchAxis narrow = ChooseBenchAxis({3, 80});
  EXPECT_TRUE(narrow.log);
  ASSERT_EQ(narrow.ticks.size(), 6u);
  const std::vector<double> want = {2, 5, 10, 20, 50, 100};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(narrow.ticks[i], want[i], 1e-9) << i;
  const BenchAxis small = ChooseBenchAxis({0.5, 12});
  EXPECT_TRUE(small.log);
  EXPECT_NEAR(small.lo, 0.5, 1e-12);
  EXPECT_NEAR(small.hi, 20, 1e-9);
  const BenchAxis wide = ChooseBenchAxis({1e-3, 1e9});  // 12 decades: every other one
  EXPECT_TRUE(wide.log);
  EXPECT_LE(wide.ticks.size(), 9u);
  EXPECT_LE(wide.lo, 1e-3);
  EXPECT_GE(wide.hi, 1e9);
  for (size_t i = 1; i < wide.ticks.size(); ++i) EXPECT_NEAR(wide.ticks[i] / wide.ticks[i - 1], 100, 1e-6);
  // A decade or less: linear from 0, as NiceTicks.
  for (const std::vector<double>& v : {std::vector<double>{5, 10, 20}, {1, 10}, {}, {NAN}}) {
    const BenchAxis linear = ChooseBenchAxis(v);
    EXPECT_FALSE(linear.log);
    EXPECT_EQ(linear.lo, 0);
    EXPECT_EQ(linear.ticks, NiceTicks(v.empty() ? 0 : v.back()));
  }
  EXPECT_NEAR(ChooseBenchAxis({5, 10, 20}).Fraction(10), 0.5, 1e-12);
}

TEST(BenchSvg, AnOutlierGivesTheLatencyColumnALogAxis) {
  BenchPlot plot;
  plot.title = "outlier";
  plot.percentile_names = {"p50"};
  plot.series.push_back(Series("threads 1", 1, {10, 20, 30, 40}, {1, 2, 4, 900}));
  const std::string svg = RenderBenchSvg(plot);
  ExpectWellFormed(svg);
  std::vector<std::string> ticks;
  for (const SvgElement& e : SvgElements(SvgPanel(svg, "latency-1"), "text", "ytick")) ticks.push_back(e.text);
  EXPECT_EQ(ticks, std::vector<std::string>({"1", "10", "100", "1000"})) << svg;
  // Each point where the log axis puts it: 1 at the bottom, 10 a third of the way up, 900 near the top.
  std::vector<double> ys;
  for (const SvgElement& e : SvgElements(SvgPanel(svg, "latency-1"), "circle", "latency-point")) {
    ys.push_back(std::stod(e.attrs.at("cy")));
  }
  ASSERT_EQ(ys.size(), 4u);
  const double bottom = ys[0], decade = (ys[0] - ys[1]) / std::log10(2.0);
  EXPECT_NEAR(ys[3], bottom - decade * std::log10(900.0), 0.1);
  const auto scales = SvgElements(svg, "text", "axis-scale");
  ASSERT_EQ(scales.size(), 1u);  // the latency column only: throughput spans 4x
  EXPECT_EQ(scales[0].text, "log scale");
}

TEST(BenchSvg, OneRowOfPanelsPerThreadCountColouredByConcurrency) {
  BenchPlot plot;
  plot.title = "groups";
  plot.percentile_names = {"p50"};
  for (const char* g : {"threads 1", "threads 2", "threads 4"}) {
    for (int c : {1, 2}) plot.series.push_back(Series(g, c, {10, 20, 30, 40}, {1, 2, 3, 4}));
  }
  const std::string svg = RenderBenchSvg(plot);
  ExpectWellFormed(svg);
  for (int row = 1; row <= 3; ++row) {
    const std::string group = "threads " + std::to_string(1 << (row - 1));
    for (const char* metric : {"latency", "throughput"}) {
      const std::string panel = SvgPanel(svg, std::string(metric) + "-" + std::to_string(row));
      ASSERT_NE(panel, "") << metric << row;
      EXPECT_NE(panel.find("data-group=\"" + group + "\""), std::string::npos);
      const auto lines = SvgElements(panel, "polyline", std::string(metric) + "-line");
      ASSERT_EQ(lines.size(), 2u) << metric << row;  // the group's two series, no other
      // The same concurrency has the same colour in every row; the two in a row differ.
      EXPECT_EQ(lines[0].attrs.at("stroke"), "#1f77b4");
      EXPECT_EQ(lines[1].attrs.at("stroke"), "#d62728");
    }
    EXPECT_EQ(SvgPanel(svg, "latency-" + std::to_string(row)).find(row == 1 ? "threads 2," : "threads 1,"),
              std::string::npos);
  }
  EXPECT_EQ(SvgPanel(svg, "latency-4"), "");
  std::vector<std::string> rows;
  for (const SvgElement& e : SvgElements(svg, "text", "row-title")) rows.push_back(e.text);
  EXPECT_EQ(rows, std::vector<std::string>({"threads 1", "threads 2", "threads 4"}));
  // Rows stack: each row's panels lie below the previous row's.
  const auto first = SvgElements(SvgPanel(svg, "throughput-1"), "circle", "throughput-point");
  const auto second = SvgElements(SvgPanel(svg, "throughput-2"), "circle", "throughput-point");
  EXPECT_GT(std::stod(second[0].attrs.at("cy")), std::stod(first[0].attrs.at("cy")) + 150);
  EXPECT_EQ(SvgElements(svg, "text", "legend-series").size(), 6u);
}

// Every pair of "knee" labels (text-anchor middle, 11 px) as boxes: none intersects another.
void ExpectKneeLabelsApart(const std::string& svg, size_t expected) {
  const auto labels = SvgElements(svg, "text", "knee-label");
  ASSERT_EQ(labels.size(), expected);
  const double w = 0.6 * 11 * 4, h = 12;  // "knee": 4 characters; ascent 10, descent 2
  std::vector<LabelBox> boxes;
  for (const SvgElement& e : labels) {
    EXPECT_EQ(e.text, "knee");
    boxes.push_back({std::stod(e.attrs.at("x")) - w / 2, std::stod(e.attrs.at("y")) - 10, w, h});
  }
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      EXPECT_FALSE(BoxesOverlap(boxes[i], boxes[j])) << i << " and " << j << " at " << boxes[i].x << ","
                                                     << boxes[i].y << " and " << boxes[j].x << "," << boxes[j].y;
    }
  }
}

TEST(BenchSvg, KneeLabelsAtTheSameBatchDoNotOverlap) {
  BenchPlot plot;
  plot.title = "knees";
  plot.percentile_names = {"p50"};
  for (int c = 1; c <= 8; ++c) plot.series.push_back(Series("threads 1", c, {100, 180, 200, 201}, {1, 2, 3, 4}, 4));
  // Near-identical curves in a second row: labels only compete within their own panel.
  for (int c = 1; c <= 4; ++c) {
    const double d = c;
    plot.series.push_back(Series("threads 2", c, {100, 180 + d, 200 + d, 201 + d}, {1, 2, 3, 4}, 4));
  }
  const std::string svg = RenderBenchSvg(plot);
  ExpectWellFormed(svg);
  ExpectKneeLabelsApart(svg, 12);
  EXPECT_EQ(SvgElements(svg, "circle", "knee").size(), 12u);
  EXPECT_EQ(SvgElements(svg, "text", "legend-knee").size(), 12u);
  EXPECT_EQ(SvgElements(svg, "text", "legend-knee")[0].text, "knee at batch 4");
  // Knees at the top of the panel (the highest throughput): the labels still fit inside it, without overlaps.
  BenchPlot top = plot;
  for (auto& s : top.series) s.throughput = {1, 2, 3, 1000};
  for (auto& s : top.series) s.knee_batch = 8;
  const std::string high = RenderBenchSvg(top);
  ExpectKneeLabelsApart(high, 12);
  for (const SvgElement& e : SvgElements(high, "text", "knee-label")) EXPECT_GT(std::stod(e.attrs.at("y")), 70);
}

TEST(BenchSvgLayout, PlaceLabelsKeepsBoxesApartAndInside) {
  const LabelBox area{0, 0, 100, 100};
  const std::vector<LabelBox> same(12, LabelBox{40, 40, 20, 12});
  const std::vector<LabelBox> placed = PlaceLabels(same, area);
  ASSERT_EQ(placed.size(), 12u);
  EXPECT_EQ(placed[0].x, 40);  // the first keeps its place
  EXPECT_EQ(placed[0].y, 40);
  for (size_t i = 0; i < placed.size(); ++i) {
    EXPECT_GE(placed[i].x, 0);
    EXPECT_GE(placed[i].y, 0);
    EXPECT_LE(placed[i].x + placed[i].width, 100);
    EXPECT_LE(placed[i].y + placed[i].height, 100);
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(BoxesOverlap(placed[i], placed[j])) << i << " " << j;
  }
  // Apart already: nothing moves; a box wanted outside the area is clamped in.
  const auto apart = PlaceLabels({{0, 0, 10, 10}, {50, 50, 10, 10}, {95, -5, 10, 10}}, area);
  EXPECT_EQ(apart[1].x, 50);
  EXPECT_EQ(apart[1].y, 50);
  EXPECT_EQ(apart[2].x, 90);
  EXPECT_EQ(apart[2].y, 0);
  EXPECT_FALSE(BoxesOverlap({0, 0, 10, 10}, {10, 0, 10, 10}));  // touching edges
  EXPECT_TRUE(BoxesOverlap({0, 0, 10, 10}, {9, 9, 10, 10}));
}

TEST(BenchSvg, MemoryPanelWhenMeasuredAndANoteWhenNot) {
  BenchPlot plot;
  plot.title = "memory";
  plot.percentile_names = {"p50"};
  plot.series.push_back(Series("threads 1", 1, {10, 20, 30, 40}, {1, 2, 3, 4}, {}, {60, 80, NAN, 200}));
  plot.series.push_back(Series("threads 2", 1, {10, 20, 30, 40}, {1, 2, 3, 4}, {}, {70, 90, 120, 210}));
  const std::string svg = RenderBenchSvg(plot);
  ExpectWellFormed(svg);
  EXPECT_NE(svg.find("<g id=\"memory\">"), std::string::npos);
  EXPECT_NE(SvgPanel(svg, "memory-2"), "");
  const auto lines = SvgElements(svg, "polyline", "memory-line");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(std::count(lines[0].attrs.at("points").begin(), lines[0].attrs.at("points").end(), ','), 3);  // no NaN
  EXPECT_EQ(SvgElements(svg, "circle", "memory-point").size(), 7u);
  EXPECT_NE(svg.find(">peak RSS (MiB)</text>"), std::string::npos);
  EXPECT_NE(svg.find("threads 2, concurrency 1: batch 8, 210.00 MiB"), std::string::npos);
  EXPECT_EQ(svg.find("no memory panel"), std::string::npos);
  // No figure for any point: no panel, and a note that says so.
  for (auto& s : plot.series) s.memory_mib = {-1, NAN, -1, -1};
  plot.series[1].memory_mib.clear();
  const std::string none = RenderBenchSvg(plot);
  ExpectWellFormed(none);
  EXPECT_EQ(none.find("id=\"memory"), std::string::npos);
  EXPECT_TRUE(SvgElements(none, "polyline", "memory-line").empty());
  const auto notes = SvgElements(none, "text", "note");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].text, "no memory panel: no configuration has a peak memory figure");
}

TEST(BenchSvg, FooterNamesTheHostTheVersionAndTheDate) {
  BenchPlot plot = TwoSeriesPlot();
  plot.host = "Test CPU <x86> @ 3 GHz, 4 logical CPUs, ISA avx2";
  plot.ferry_version = "9.8.7";
  plot.date = "2030-01-02";
  const std::string svg = RenderBenchSvg(plot);
  ExpectWellFormed(svg);
  const auto host = SvgElements(svg, "text", "footer-host"), made = SvgElements(svg, "text", "footer-made");
  ASSERT_EQ(host.size(), 1u);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(host[0].text, "host: Test CPU &lt;x86&gt; @ 3 GHz, 4 logical CPUs, ISA avx2");
  EXPECT_EQ(made[0].text, "ferry 9.8.7, 2030-01-02 (UTC)");
  // Under everything else: the footer's baseline is the lowest, inside the figure's height.
  const double y = std::stod(made[0].attrs.at("y"));
  for (const SvgElement& e : SvgElements(svg, "text")) EXPECT_LE(std::stod(e.attrs.at("y")), y) << e.text;
  EXPECT_LT(y, std::stod(SvgElements(svg, "svg")[0].attrs.at("height")));
  EXPECT_TRUE(SvgElements(RenderBenchSvg(TwoSeriesPlot()), "text", "footer-host").empty());  // empty: left out
  EXPECT_EQ(UtcDate(0), "1970-01-01");
  EXPECT_EQ(UtcDate(1700000000), "2023-11-14");
  EXPECT_EQ(CpuModelFromCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ "
                                "2.20GHz\r\nflags\t: fpu\nmodel name\t: other\n"),
            "Intel(R) Xeon(R) CPU @ 2.20GHz");
  EXPECT_EQ(CpuModelFromCpuinfo("processor : 0\nBogoMIPS : 50.00\nHardware : BCM2835\n"), "BCM2835");
  EXPECT_EQ(CpuModelFromCpuinfo(""), "");
  const std::string here = BenchHostDescription();
  EXPECT_NE(here.find("logical CPU"), std::string::npos) << here;
  EXPECT_NE(here.find(", ISA "), std::string::npos) << here;
}

TEST(BenchSvg, PlotFromReportGroupsByThreadsWithPeakRss) {
  BenchReport report;
  report.options.model = "m.onnx";
  report.options.percentiles = {50, 99};
  for (int threads : {1, 2}) {
    for (int64_t batch : {1, 2}) {
      BenchResult r;
      r.config = {batch, threads, 1};
      r.throughput = 100.0 * static_cast<double>(batch);
      r.latency.percentiles = {1, 2};
      r.peak_rss_bytes = batch == 2 && threads == 2 ? -1 : batch * 64 * 1024 * 1024;
      r.rss_reset = true;
      report.run.results.push_back(r);
    }
  }
  AnalyzeBench(report);
  const BenchPlot plot = BenchPlotFromReport(report);
  ASSERT_EQ(plot.series.size(), 2u);
  EXPECT_EQ(plot.series[0].group, "threads 1");
  EXPECT_EQ(plot.series[1].group, "threads 2");
  EXPECT_EQ(plot.series[1].key, "concurrency 1");
  EXPECT_EQ(plot.series[0].memory_mib, std::vector<double>({64, 128}));
  ASSERT_EQ(plot.series[1].memory_mib.size(), 2u);
  EXPECT_TRUE(std::isnan(plot.series[1].memory_mib[1]));  // not readable: no point drawn
  EXPECT_EQ(plot.host, "");  // the CLI's to fill in
  const std::string svg = RenderBenchSvg(plot);
  EXPECT_NE(svg.find("<g id=\"memory\">"), std::string::npos);
  EXPECT_EQ(SvgElements(svg, "circle", "memory-point").size(), 3u);
  // A server run: one row, no memory figures.
  report.run.server = BenchServerInfo{"http://h:1", "m", "", "http", "binary", -1};
  report.run.results.resize(2);  // one sweep: a server has no thread counts of ours
  for (BenchResult& r : report.run.results) r.config.threads = 0;
  AnalyzeBench(report);
  const BenchPlot served = BenchPlotFromReport(report);
  ASSERT_EQ(served.series.size(), 1u);
  EXPECT_EQ(served.series[0].group, "");
  EXPECT_TRUE(served.series[0].memory_mib.empty());
  const std::string server_svg = RenderBenchSvg(served);
  EXPECT_EQ(server_svg.find("id=\"memory"), std::string::npos);
  EXPECT_NE(server_svg.find("memory: the server&apos;s own"), std::string::npos);
}

// y = Relu(x) with x: float32[N, 4].
std::string TinyModel(bool symbolic_batch) {
  ModelBuilder b;
  if (symbolic_batch) b.InputSym("x", onnx::TensorProto::FLOAT, {-1, 4}, "N");
  else b.Input("x", onnx::TensorProto::FLOAT, {1, 4});
  b.Output("y", onnx::TensorProto::FLOAT, {});
  b.Node("Relu", {"x"}, {"y"});
  return ferry::testing::WriteTempFile(b.Bytes(), symbolic_batch ? "bench_sym.onnx" : "bench_fixed.onnx");
}

TEST(BenchRunner, IterationsOverTheCrossProduct) {
  BenchOptions o;
  o.model = TinyModel(true);
  o.batches = {1, 3};
  o.threads = {1};
  o.concurrency = {1, 2};
  o.warmup = 1;
  o.iterations = 5;
  int progress_calls = 0;
  BenchRun run = RunBench(o, [&](const BenchProgress& p) {
    ++progress_calls;
    EXPECT_EQ(p.total, 4u);
  });
  ASSERT_EQ(run.results.size(), 4u);
  EXPECT_GE(progress_calls, 4);  // at least once per configuration
  EXPECT_EQ(run.backends.front(), "cpu");
  const std::vector<std::pair<int64_t, int>> order = {{1, 1}, {1, 2}, {3, 1}, {3, 2}};
  for (size_t i = 0; i < run.results.size(); ++i) {
    const BenchResult& r = run.results[i];
    EXPECT_EQ(r.config.batch, order[i].first);
    EXPECT_EQ(r.config.concurrency, order[i].second);
    EXPECT_EQ(r.requests, 5);  // all workers together
    EXPECT_EQ(r.inferences, 5 * r.config.batch);
    EXPECT_EQ(r.latency.count, 5u);
    EXPECT_GT(r.throughput, 0);
    EXPECT_GT(r.wall_s, 0);
    EXPECT_GT(r.session_ms, 0);
    EXPECT_GT(r.peak_rss_bytes, 0);
    EXPECT_LE(r.latency.min, r.latency.percentiles[0]);
    EXPECT_LE(r.latency.percentiles[2], r.latency.max);
  }
  BenchReport report;
  report.options = o;
  report.run = run;
  report.max_latency_ms = 1e6;
  AnalyzeBench(report);
  ASSERT_EQ(report.series.size(), 2u);  // (1 thread, concurrency 1) and (1 thread, concurrency 2)
  EXPECT_EQ(report.series[0].points.size(), 2u);
  EXPECT_TRUE(report.series[0].best_under_latency);
  const auto j = nlohmann::json::parse(FormatBenchJson(report));
  EXPECT_EQ(j["configurations"].size(), 4u);
  EXPECT_TRUE(j["configurations"][0]["latency_ms"].contains("p99"));
  EXPECT_EQ(j["analysis"]["series"].size(), 2u);
  const std::string csv = FormatBenchCsv(report);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);  // header + 4 rows
  const std::string table = FormatBenchTable(report);
  EXPECT_NE(table.find("knee (threads 1, concurrency 1): batch"), std::string::npos) << table;
}

TEST(BenchRunner, DurationModeRunsAtLeastOneRequestPerWorker) {
  BenchOptions o;
  o.model = TinyModel(true);
  o.concurrency = {3};
  o.threads = {1};
  o.warmup = 0;
  o.duration_s = 0.05;
  BenchRun run = RunBench(o);
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_GE(run.results[0].requests, 3);
  EXPECT_GT(run.results[0].throughput, 0);
}

// y = x * s with x: float32[4, 3] (a batch the model fixes at 4) and s a scalar: no input takes --batch.
std::string FixedBatchScalarModel() {
  ModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {4, 3});
  b.Input("s", onnx::TensorProto::FLOAT, {});
  b.graph().mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape();  // rank 0, not unknown
  b.Output("y", onnx::TensorProto::FLOAT, {4, 3});
  b.Node("Mul", {"x", "s"}, {"y"});
  return ferry::testing::WriteTempFile(b.Bytes(), "bench_fixed_scalar.onnx");
}

TEST(BenchRunner, AModelThatFixesItsBatchRunsAtItsOwnShapes) {
  BenchOptions o;
  o.model = FixedBatchScalarModel();
  o.batches = {1, 2};  // not the model's: reported, not an error
  o.threads = {1};
  o.concurrency = {1, 2};
  o.warmup = 1;
  o.iterations = 3;
  size_t total = 0;
  BenchRun run = RunBench(o, [&](const BenchProgress& p) { total = p.total; });
  ASSERT_EQ(run.results.size(), 2u);  // one batch x two concurrency levels
  EXPECT_EQ(total, 2u);
  for (const BenchResult& r : run.results) {
    EXPECT_EQ(r.config.batch, 4);
    EXPECT_EQ(r.requests, 3);
    EXPECT_EQ(r.inferences, 12);
  }
  EXPECT_EQ(run.fixed_batch, "no input has a symbolic dim 0 (x: 4x3, s: scalar)");
  BenchReport report;
  report.options = o;
  report.run = run;
  AnalyzeBench(report);
  const std::string table = FormatBenchTable(report);
  EXPECT_NE(table.find("batch 4, fixed by the model: no input has a symbolic dim 0 (x: 4x3, s: scalar); --batch "
                       "does not apply"),
            std::string::npos)
      << table;
  const auto j = nlohmann::json::parse(FormatBenchJson(report));
  EXPECT_EQ(j["fixed_batch"]["batch"], 4);
  EXPECT_EQ(j["analysis"]["series"][0]["batches"], nlohmann::json::array({4}));
  // A swept model reports no fixed batch.
  o.model = TinyModel(true);
  report.run = RunBench(o);
  EXPECT_EQ(report.run.fixed_batch, "");
  EXPECT_TRUE(nlohmann::json::parse(FormatBenchJson(report))["fixed_batch"].is_null());
}

TEST(BenchRunner, ThreadCountsAndConcurrencyAreBounded) {
  BenchOptions o;
  o.model = TinyModel(true);
  o.iterations = 1;
  for (int bad : {-1, kMaxThreads + 1, 100000}) {
    o.threads = {bad};
    const std::string e = ErrorOf([&] { RunBench(o); });
    EXPECT_NE(e.find("--threads: thread counts must be 0 (all cores) to 1024, got " + std::to_string(bad)),
              std::string::npos)
        << e;
  }
  o.threads = {1};
  o.concurrency = {kMaxThreads + 1};
  const std::string e = ErrorOf([&] { RunBench(o); });
  EXPECT_NE(e.find("--concurrency: must be 1 to 1024, got 1025"), std::string::npos) << e;
}

TEST(BenchRunner, ErrorsNameTheProblem) {
  BenchOptions o;
  o.model = TinyModel(true);
  o.iterations = 1;
  o.inputs.shapes = {{"nope", {1, 4}}};
  const std::string e = ErrorOf([&] { RunBench(o); });
  EXPECT_NE(e.find("--shape: the model has no input 'nope' (inputs: x)"), std::string::npos) << e;
  o.inputs.shapes.clear();
  o.duration_s = 1;  // and iterations
  EXPECT_NE(ErrorOf([&] { RunBench(o); }).find("either a number of iterations or a duration"), std::string::npos);
  o.duration_s = 0;
  o.batches = {0};
  EXPECT_NE(ErrorOf([&] { RunBench(o); }).find("--batch"), std::string::npos);
  o.batches = {1};
  o.model = "/no/such/model.onnx";
  EXPECT_THROW(RunBench(o), Error);
}

}  // namespace
}  // namespace ferry::tools
