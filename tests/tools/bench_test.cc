// `ferry bench`'s library (tools/bench*.h): nearest-rank percentiles and latency statistics, the knee and the
// best batch under a latency bound on synthetic curves, the batched input shapes, the SVG chart's text, and the
// runner on a tiny model (counts, modes, concurrency, errors). tests/e2e/bench_test.sh drives the CLI and
// parses the JSON, CSV and SVG it writes.
#include "tools/bench.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

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
  EXPECT_NE(svg.find("cx=\"350.00\""), std::string::npos) << svg;  // a single batch sits mid-axis
  BenchPlot empty;
  EXPECT_NE(RenderBenchSvg(empty).find("</svg>"), std::string::npos);
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
