// The profiler (tools/profile.h): what the executor records per step when RunStats::profile is set, the Chrome
// trace of `ferry run --profile FILE` (valid JSON, one complete event per step per run inside its run's span),
// the summary of `--profile-summary`, reading a trace back (untrusted input), and the overlay of `ferry check
// --html --profile TRACE` (tools/profile_overlay.h).
#include "tools/profile.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "testing/fifo.h"
#include "tools/check.h"
#include "tools/check_html.h"
#include "tools/profile_overlay.h"

namespace ferry::tools {
namespace {

using Json = nlohmann::json;

std::string ModelPath() { return std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx"; }

std::string TempPath(const std::string& name) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return (std::filesystem::temp_directory_path() /
          ("ferry_profile_" + std::to_string(getpid()) + "_" + test->name() + "_" + name))
      .string();
}

void WriteFile(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

double SteadyUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Zeros for every input (symbolic dims 1).
std::vector<NamedValue> Zeros(const Session& session) {
  std::vector<NamedValue> inputs;
  for (const IoInfo& in : session.inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    inputs.emplace_back(in.name, Value(Tensor(in.dtype, dims)));
  }
  return inputs;
}

// `runs` profiled runs of the quickstart CNN (Conv, Relu, MaxPool, Gemm...) on zeros.
std::vector<ProfiledRun> ProfileQuickstart(int runs) {
  auto session = Session::Create(ModelPath());
  const std::vector<NamedValue> inputs = Zeros(*session);
  std::vector<ProfiledRun> out;
  for (int r = 0; r < runs; ++r) {
    ProfiledRun run;
    run.stats.profile = true;
    run.start_us = SteadyUs();
    session->RunValues(inputs, &run.stats);
    run.end_us = SteadyUs();
    out.push_back(std::move(run));
  }
  return out;
}

TEST(Profile, ExecutorRecordsBackendShapesAndBytesOnlyWhenProfiling) {
  auto runs = ProfileQuickstart(1);
  const RunStats& stats = runs[0].stats;
  ASSERT_FALSE(stats.node_times.empty());
  double previous_start = 0;
  for (const NodeTime& t : stats.node_times) {
    EXPECT_FALSE(t.node.empty());
    EXPECT_EQ(t.graph, "main");
    EXPECT_TRUE(t.backend == "cpu" || t.backend == "ref") << t.node << ": " << t.backend;
    EXPECT_GE(t.ms, 0);
    EXPECT_GE(t.start_us, runs[0].start_us);
    EXPECT_LE(t.start_us + t.ms * 1000, runs[0].end_us + 1);
    EXPECT_GE(t.start_us, previous_start) << "steps in run order";
    previous_start = t.start_us;
    ASSERT_FALSE(t.outputs.empty()) << t.node;
    int64_t out_bytes = 0;
    for (const StepValue& v : t.outputs) {
      EXPECT_FALSE(v.name.empty());
      EXPECT_EQ(v.dtype, "float32") << t.node;
      const int64_t elements = std::accumulate(v.shape.begin(), v.shape.end(), int64_t{1}, std::multiplies<>());
      EXPECT_EQ(v.bytes, elements * 4) << t.node << " " << v.name;
      out_bytes += v.bytes;
    }
    EXPECT_EQ(t.output_bytes, out_bytes);
    int64_t in_bytes = 0;
    for (const StepValue& v : t.inputs) in_bytes += v.bytes;
    EXPECT_EQ(t.input_bytes, in_bytes);
    EXPECT_GT(t.input_bytes, 0) << t.node;
  }
  // The first step reads the model input, with its shape.
  ASSERT_FALSE(stats.node_times.front().inputs.empty());
  EXPECT_EQ(stats.node_times.front().inputs[0].name, "input");
  EXPECT_EQ(stats.node_times.front().inputs[0].shape.size(), 4u);

  auto session = Session::Create(ModelPath());
  RunStats off;
  session->RunValues(Zeros(*session), &off);
  EXPECT_TRUE(off.node_times.empty());
}

TEST(Profile, TraceIsAChromeTraceWithOneEventPerStepInsideItsRun) {
  const auto runs = ProfileQuickstart(3);
  const Json trace = Json::parse(ProfileTraceJson(runs, "ferry quickstart_cnn.onnx"));
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  const Json& events = trace["traceEvents"];
  int metadata = 0;
  std::vector<std::pair<double, double>> spans;   // per run: [ts, ts + dur]
  std::vector<std::vector<const Json*>> steps(runs.size());
  for (const Json& e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("name") && e.contains("pid") && e.contains("tid")) << e.dump();
    if (e["ph"] == "M") {
      ++metadata;
      EXPECT_EQ(e["args"]["name"], "ferry quickstart_cnn.onnx");
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e.dump();
    EXPECT_GE(e["dur"].get<double>(), 0) << e.dump();
    EXPECT_TRUE(e.contains("cat"));
    if (e["cat"] == "run") {
      spans.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
      continue;
    }
    const Json& args = e["args"];
    for (const char* key :
         {"op", "node", "backend", "graph", "run", "inputs", "outputs", "input_bytes", "output_bytes"}) {
      EXPECT_TRUE(args.contains(key)) << key << " in " << e.dump();
    }
    const int run = args["run"].get<int>();
    ASSERT_GE(run, 1);
    ASSERT_LE(run, static_cast<int>(runs.size()));
    steps[static_cast<size_t>(run - 1)].push_back(&e);
  }
  EXPECT_EQ(metadata, 2) << "process_name and thread_name";
  ASSERT_EQ(spans.size(), runs.size());
  EXPECT_EQ(spans[0].first, 0) << "the trace starts at the first run";
  for (size_t r = 0; r < runs.size(); ++r) {
    ASSERT_EQ(steps[r].size(), runs[r].stats.node_times.size()) << "run " << r + 1;
    for (size_t k = 0; k < steps[r].size(); ++k) {
      const Json& e = *steps[r][k];
      const NodeTime& t = runs[r].stats.node_times[k];
      EXPECT_EQ(e["name"], t.node);
      EXPECT_EQ(e["args"]["op"], t.op);
      EXPECT_EQ(e["args"]["backend"], t.backend);
      EXPECT_EQ(e["args"]["outputs"].size(), t.outputs.size());
      EXPECT_EQ(e["args"]["outputs"][0]["shape"].get<std::vector<int64_t>>(), t.outputs[0].shape);
      EXPECT_EQ(e["args"]["outputs"][0]["dtype"], "float32");
      EXPECT_EQ(e["args"]["output_bytes"].get<int64_t>(), t.output_bytes);
      const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
      EXPECT_GE(ts, spans[r].first) << e.dump();
      EXPECT_LE(end, spans[r].second + 1e-9) << e.dump();
    }
  }
}

TEST(Profile, SummarySharesSumToAHundred) {
  auto runs = ProfileQuickstart(3);
  std::vector<RunStats> stats;
  for (auto& r : runs) stats.push_back(r.stats);
  const Profile p = SummarizeProfile(stats);
  EXPECT_EQ(p.runs, 3);
  EXPECT_EQ(p.steps, stats[0].node_times.size());
  EXPECT_EQ(p.nodes.size(), stats[0].node_times.size());
  EXPECT_GT(p.total_ms, 0);
  double by_op = 0, by_node = 0;
  for (const ProfileRow& r : p.by_op) by_op += r.percent;
  for (const ProfileRow& r : p.nodes) {
    by_node += r.percent;
    EXPECT_EQ(r.count, 1);
    EXPECT_FALSE(r.backend.empty());
  }
  EXPECT_NEAR(by_op, 100, 1e-6);
  EXPECT_NEAR(by_node, 100, 1e-6);
  for (size_t i = 1; i < p.nodes.size(); ++i) EXPECT_GE(p.nodes[i - 1].ms, p.nodes[i].ms) << "descending";
  const std::string text = FormatProfile(p, 3);
  EXPECT_NE(text.find("profile: median of 3 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("backend"), std::string::npos) << text;
  EXPECT_NE(text.find("slowest nodes (3 of"), std::string::npos) << text;
  EXPECT_NE(text.find(p.nodes[0].name), std::string::npos) << text;
  const Json j = Json::parse(FormatProfileJson(p));
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["nodes"].size(), p.nodes.size());
  EXPECT_EQ(j["nodes"][0]["backend"], p.nodes[0].backend);
  EXPECT_TRUE(j["by_op"][0].contains("percent"));
}

TEST(Profile, SummaryAddsUpANodeThatRunsSeveralTimesPerRun) {
  auto step = [](std::string node, double ms) {
    NodeTime t;
    t.node = std::move(node);
    t.op = "Add";
    t.graph = "body";
    t.backend = "ref";
    t.ms = ms;
    return t;
  };
  RunStats a, b;
  a.node_times = {step("add", 1), step("add", 2), step("mul", 1)};
  b.node_times = {step("add", 2), step("add", 2), step("add", 2), step("mul", 3)};  // one more iteration
  const Profile p = SummarizeProfile({a, b});
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[0].name, "add");
  EXPECT_EQ(p.nodes[0].count, 3);
  EXPECT_DOUBLE_EQ(p.nodes[0].ms, 6);  // median of {3, 6}: the upper one
  EXPECT_EQ(p.nodes[0].graph, "body");
  ASSERT_EQ(p.by_op.size(), 1u);
  EXPECT_EQ(p.by_op[0].count, 2);
  EXPECT_EQ(p.by_op[0].backend, "ref");
  EXPECT_NE(FormatProfile(p).find(" in body"), std::string::npos);
}

TEST(Profile, SummaryCountsAStepMissingFromARunAsZero) {
  auto step = [](std::string node, double ms) {
    NodeTime t;
    t.node = std::move(node);
    t.op = "Relu";
    t.graph = "main";
    t.ms = ms;
    return t;
  };
  RunStats a, b, c;
  a.node_times = {step("x", 1), step("rare", 9)};
  b.node_times = {step("x", 2)};
  c.node_times = {step("x", 3), step("rare", 5)};
  const Profile p = SummarizeProfile({a, b, c});
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.nodes[0].name, "rare");
  EXPECT_DOUBLE_EQ(p.nodes[0].ms, 5);  // median of {9, 0, 5}
  EXPECT_DOUBLE_EQ(p.nodes[1].ms, 2);
  RunStats d;
  d.node_times = {step("x", 4)};
  EXPECT_DOUBLE_EQ(SummarizeProfile({a, b, d}).nodes[1].ms, 0) << "rare: median of {9, 0, 0}";
}

TEST(Profile, TraceRoundTrips) {
  const auto runs = ProfileQuickstart(2);
  const std::string path = TempPath("trace.json");
  WriteProfileTrace(runs, "ferry test", path);
  const std::vector<RunStats> loaded = LoadProfileTrace(path);
  ASSERT_EQ(loaded.size(), 2u);
  ASSERT_EQ(loaded[0].node_times.size(), runs[0].stats.node_times.size());
  const NodeTime& a = runs[0].stats.node_times[0];
  const NodeTime& b = loaded[0].node_times[0];
  EXPECT_EQ(b.node, a.node);
  EXPECT_EQ(b.op, a.op);
  EXPECT_EQ(b.backend, a.backend);
  EXPECT_EQ(b.graph, "main");
  EXPECT_NEAR(b.ms, a.ms, 1e-5);
  ASSERT_EQ(b.outputs.size(), a.outputs.size());
  EXPECT_EQ(b.outputs[0].name, a.outputs[0].name);
  const Profile p = SummarizeProfile(loaded);
  EXPECT_EQ(p.runs, 2);
  EXPECT_EQ(p.nodes.size(), runs[0].stats.node_times.size());
  std::filesystem::remove(path);
  EXPECT_THROW(WriteProfileTrace(runs, "x", "/nonexistent-dir/t.json"), InvalidArgumentError);
}

TEST(Profile, TraceRecordsItsModel) {
  const auto runs = ProfileQuickstart(1);
  const std::string path = TempPath("trace_model.json");
  WriteProfileTrace(runs, "ferry test", path, "fnv1a64:0123456789abcdef:42");
  EXPECT_EQ(ProfileTraceModel(path), "fnv1a64:0123456789abcdef:42");
  EXPECT_EQ(LoadProfileTrace(path).size(), 1u);  // the reader is unchanged by it
  WriteProfileTrace(runs, "ferry test", path);
  EXPECT_EQ(ProfileTraceModel(path), "") << "no model recorded";
  std::filesystem::remove(path);
  EXPECT_THROW(ProfileTraceModel(path), InvalidArgumentError);  // no trace at all
}

TEST(Profile, LoadRejectsBadTracesNamingTheFile) {
  const std::string path = TempPath("bad.json");
  const std::string good_event =
      R"({"name":"n","cat":"node","ph":"X","ts":0,"dur":5,"pid":1,"tid":1,"args":{"node":"n","op":"Relu","run":1}})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty"},
      {"{\"traceEvents\": [", "not valid JSON"},
      {"\xff\xfe{}", "not valid JSON"},
      {"42", "expected a JSON object"},
      {"{\"events\": []}", "no \"traceEvents\""},
      {"{\"traceEvents\": {}}", "not an array"},
      {"{\"traceEvents\": [1]}", "event 0 is not an object"},
      {"{\"traceEvents\": []}", "no node events"},
      {"{\"traceEvents\": [{\"ph\":\"X\",\"ts\":0,\"dur\":1,\"name\":\"other tool\"}]}", "no node events"},
      {R"({"traceEvents": [{"ph":"X","ts":0,"dur":-1,"args":{"node":"conv"}}]})", "node 'conv'.*negative"},
      {R"({"traceEvents": [{"ph":"X","ts":0,"dur":"5","args":{"node":"conv"}}]})", "no numeric \"dur\""},
      {R"({"traceEvents": [{"ph":"X","dur":5,"args":{"node":"conv"}}]})", "no numeric \"ts\""},
      {R"({"traceEvents": [{"ph":"X","ts":0,"dur":5,"args":{"node":7}}]})", "args.node is not a string"},
      {R"({"traceEvents": [{"ph":"X","ts":0,"dur":5,"args":{"node":"a","run":"one"}}]})", "args.run"},
      {std::string(100000, '[') + std::string(100000, ']'), "nested deeper"},
  };
  for (const auto& [text, want] : cases) {
    WriteFile(path, text);
    try {
      LoadProfileTrace(path);
      ADD_FAILURE() << "accepted: " << text.substr(0, 80);
    } catch (const InvalidArgumentError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_TRUE(::testing::internal::RE::PartialMatch(message, ::testing::internal::RE(want)))
          << message << " (want /" << want << "/)";
    }
  }
  // A bare array of events is the Trace Event Format's other form.
  WriteFile(path, "[" + good_event + "]");
  EXPECT_EQ(LoadProfileTrace(path).size(), 1u);
  std::filesystem::remove(path);
  try {
    LoadProfileTrace(path);
    ADD_FAILURE() << "a missing file loaded";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // `ferry check --html --profile pipe` must not wait on a FIFO for a trace that never comes.
  ferry::testing::Fifo fifo(path);
  try {
    LoadProfileTrace(path);
    ADD_FAILURE() << "a FIFO loaded";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO, not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fifo.fired()) << "the trace reader blocked on the FIFO";
}

// conv -> relu -> pool -> orphan: the profile ran conv with relu fused (writing relu's output "r") and pool;
// orphan has no step; a layout reorder step matches no node.
CheckReport SmallReport() {
  auto node = [](std::string name, std::string op, std::vector<std::string> in, std::vector<std::string> out) {
    NodeCheck n;
    n.name = std::move(name);
    n.op = std::move(op);
    n.graph = "main";
    n.verdict = Verdict::kNative;
    n.backend = "cpu";
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    return n;
  };
  CheckReport r;
  r.model_path = "small.onnx";
  r.backends = {"cpu", "ref"};
  r.nodes = {node("conv", "Conv", {"x", "w"}, {"c"}), node("relu", "Relu", {"c"}, {"r"}),
             node("pool", "MaxPool", {"r"}, {"p"}), node("orphan", "Shape", {"p"}, {"s"})};
  r.native = 4;
  r.node_count = 4;
  return r;
}

Profile SmallProfile() {
  auto step = [](std::string node, std::string op, double ms, std::string out) {
    NodeTime t;
    t.node = std::move(node);
    t.op = std::move(op);
    t.graph = "main";
    t.backend = "cpu";
    t.ms = ms;
    t.outputs.push_back({std::move(out), "float32", {1}, 4});
    return t;
  };
  RunStats run;
  run.node_times = {step("x_to_blocked", "ai.ferry::ReorderToBlocked", 0.5, "x_blocked"),
                    step("conv", "ai.ferry::FusedConv", 7, "r"), step("pool", "MaxPool", 2.5, "p")};
  return SummarizeProfile({run});
}

TEST(ProfileOverlay, MatchesByNameAndFindsFusedNodes) {
  const ProfileOverlay o = MatchProfile(SmallReport(), SmallProfile());
  ASSERT_EQ(o.nodes.size(), 4u);
  EXPECT_EQ(o.nodes[0].kind, NodeTiming::Kind::kTimed);
  EXPECT_NEAR(o.nodes[0].percent, 70, 1e-9);
  EXPECT_EQ(o.nodes[0].ran_as, "ai.ferry::FusedConv");
  EXPECT_EQ(o.nodes[0].backend, "cpu");
  EXPECT_EQ(o.nodes[1].kind, NodeTiming::Kind::kFused);
  EXPECT_EQ(o.nodes[1].fused_into, "conv");
  EXPECT_EQ(o.nodes[2].kind, NodeTiming::Kind::kTimed);
  EXPECT_EQ(o.nodes[2].ran_as, "");
  EXPECT_EQ(o.nodes[3].kind, NodeTiming::Kind::kNone);
  EXPECT_NEAR(o.other_percent, 5, 1e-9);
  EXPECT_NEAR(o.max_percent, 70, 1e-9);
  EXPECT_EQ(o.timed, 2);
  EXPECT_EQ(o.fused, 1);
  EXPECT_EQ(o.none, 1);
}

TEST(ProfileOverlay, HtmlShowsSharesLegendAndGreyNodes) {
  const Profile p = SmallProfile();
  CheckHtmlOptions options;
  options.profile = &p;
  options.profile_source = "trace.json";
  for (size_t max_layout : {size_t{5000}, size_t{1}}) {  // the Graphviz drawing and the grid
    options.max_layout_nodes = max_layout;
    const std::string html = CheckHtml(SmallReport(), options);
    EXPECT_NE(html.find("id=\"time-legend\""), std::string::npos);
    EXPECT_NE(html.find("share of run time"), std::string::npos);
    EXPECT_NE(html.find("data-time=\"70.0%"), std::string::npos) << "conv's share";
    EXPECT_NE(html.find("data-time=\"fused into conv\""), std::string::npos);
    EXPECT_NE(html.find("data-time=\"no time recorded\""), std::string::npos);
    EXPECT_NE(html.find("#e4e6ea"), std::string::npos) << "grey for nodes without time";
    EXPECT_NE(html.find("id=\"time-table\""), std::string::npos);
    EXPECT_NE(html.find("\"time\":\"70.0% of the run time"), std::string::npos) << "details";
    EXPECT_NE(html.find("5.0% of the time is in steps that are no node"), std::string::npos);
  }
  const std::string plain = CheckHtml(SmallReport());
  EXPECT_EQ(plain.find("time-legend"), std::string::npos);
  EXPECT_EQ(plain.find("data-time="), std::string::npos);
}

// The whole path on a real model: run it profiled, write the trace, read it back, overlay it on `ferry check`'s
// report of the model as written (level 3 fuses the Relus into the convolutions).
TEST(ProfileOverlay, RealModelTraceOnCheckReport) {
  const auto runs = ProfileQuickstart(2);
  const std::string path = TempPath("trace.json");
  WriteProfileTrace(runs, "ferry quickstart", path);
  const Profile p = SummarizeProfile(LoadProfileTrace(path));
  std::filesystem::remove(path);
  const CheckReport report = CheckModel(ModelPath(), CheckOptions{});
  const ProfileOverlay o = MatchProfile(report, p);
  EXPECT_GT(o.timed, 0);
  double percent = 0;
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    if (o.nodes[i].kind == NodeTiming::Kind::kTimed) percent += o.nodes[i].percent;
    if (report.nodes[i].op == "Relu") {
      EXPECT_EQ(o.nodes[i].kind, NodeTiming::Kind::kFused) << report.nodes[i].name;
    }
  }
  EXPECT_NEAR(percent + o.other_percent, 100, 1e-6);
  CheckHtmlOptions options;
  options.profile = &p;
  options.profile_source = "trace.json";
  const std::string html = CheckHtml(report, options);
  EXPECT_NE(html.find("fused into"), std::string::npos);
  EXPECT_NE(html.find("id=\"time-legend\""), std::string::npos);
}

}  // namespace
}  // namespace ferry::tools
