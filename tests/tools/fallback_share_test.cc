// The fallback share (tools/fallback_share.h): nodes, FLOPs and run time on the backends after the first, the
// ops that take it, and the warning past 5% that `ferry run --report`, `ferry bench` and `ferry check` print.
#include "tools/fallback_share.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry::tools {
namespace {

NodePlacementInfo Node(const std::string& name, const std::string& op, const std::string& backend, double flops) {
  NodePlacementInfo n;
  n.name = name;
  n.op = op;
  n.graph = "main";
  n.backend = backend;
  n.flops = flops;
  return n;
}

NodeTime Time(const std::string& node, const std::string& op, const std::string& backend, double ms,
              const std::string& graph = "main") {
  NodeTime t;
  t.node = node;
  t.op = op;
  t.backend = backend;
  t.ms = ms;
  t.graph = graph;
  return t;
}

PlacementReport FourNodes() {
  PlacementReport r;
  r.backends = {"cpu", "ref"};
  r.nodes = {Node("conv", "Conv", "cpu", 900), Node("r1", "Resize", "ref", 50), Node("r2", "Resize", "ref", 30),
             Node("hs", "HardSigmoid", "ref", 20)};
  return r;
}

TEST(FallbackShare, CountsNodesFlopsAndTime) {
  const std::vector<NodeTime> times = {Time("conv", "Conv", "cpu", 2.0), Time("r1", "Resize", "ref", 5.0),
                                       Time("copy", "copy", "copy", 0.5), Time("r2", "Resize", "ref", 2.0),
                                       Time("hs", "HardSigmoid", "ref", 0.5),
                                       // inside a Loop body: its time is already in the Loop step
                                       Time("inner", "Resize", "ref", 100.0, "body")};
  const FallbackShare s = MeasureFallbackShare(FourNodes(), &times);
  EXPECT_EQ(s.first_backend, "cpu");
  EXPECT_EQ(s.to, std::vector<std::string>{"ref"});
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.fallback_nodes, 3);
  EXPECT_DOUBLE_EQ(s.flop_share(), 0.1);
  EXPECT_TRUE(s.timed);
  EXPECT_DOUBLE_EQ(s.ms, 10.0);
  EXPECT_DOUBLE_EQ(s.fallback_ms, 7.5);
  ASSERT_EQ(s.ops.size(), 2u);
  EXPECT_EQ(s.ops[0].op, "Resize");
  EXPECT_EQ(s.ops[0].nodes, 2);
  EXPECT_DOUBLE_EQ(s.ops[0].ms, 7.0);
  EXPECT_EQ(s.ops[1].op, "HardSigmoid");
  const std::string line = FormatFallbackShare(s);
  EXPECT_NE(line.find("3 of 4 nodes (75.0%)"), std::string::npos) << line;
  EXPECT_NE(line.find("75.0% of the run time"), std::string::npos) << line;
  EXPECT_NE(line.find("Resize 70.0%"), std::string::npos) << line;
  const std::string w = FallbackWarning(s);
  EXPECT_NE(w.find("75.0% of the run time falls to ref"), std::string::npos) << w;
  const auto j = nlohmann::json::parse(FallbackShareJson(s));
  EXPECT_DOUBLE_EQ(j["time_share"].get<double>(), 0.75);
  EXPECT_EQ(j["ops"][0]["op"], "Resize");
  EXPECT_EQ(j["warning"], w);
}

TEST(FallbackShare, WarnsOnTimeWhenTimedElseOnFlopsElseOnNodes) {
  PlacementReport r = FourNodes();
  // 10% of the FLOPs, but only 4% of the time: the time decides, no warning.
  const std::vector<NodeTime> times = {Time("conv", "Conv", "cpu", 9.6), Time("r1", "Resize", "ref", 0.2),
                                       Time("r2", "Resize", "ref", 0.1), Time("hs", "HardSigmoid", "ref", 0.1)};
  EXPECT_EQ(FallbackWarning(MeasureFallbackShare(r, &times)), "");
  // Untimed: 10% of the FLOPs warns.
  const std::string w = FallbackWarning(MeasureFallbackShare(r));
  EXPECT_NE(w.find("10.0% of the estimated FLOPs"), std::string::npos) << w;
  // Exactly 5% of the FLOPs is within the limit.
  r.nodes = {Node("conv", "Conv", "cpu", 95), Node("hs", "HardSigmoid", "ref", 5)};
  EXPECT_EQ(FallbackWarning(MeasureFallbackShare(r)), "");
  // No FLOPs known: the nodes decide.
  r.nodes = {Node("a", "Relu", "cpu", 0), Node("b", "Det", "ref", 0)};
  EXPECT_NE(FallbackWarning(MeasureFallbackShare(r)).find("50.0% of the nodes"), std::string::npos);
  // Nothing falls back: no warning, whatever the figures.
  r.nodes = {Node("a", "Relu", "cpu", 0)};
  const FallbackShare none = MeasureFallbackShare(r);
  EXPECT_EQ(none.fallback_nodes, 0);
  EXPECT_EQ(FallbackWarning(none), "");
  EXPECT_NE(FormatFallbackShare(none).find("0 of 1 nodes (0.0%)"), std::string::npos);
}

// A plugin's own custom op runs natively on its plugin (placement's kind "native"): not a fallback, in nodes,
// FLOPs or time; a node pinned to a later backend is.
TEST(FallbackShare, APluginsOwnOpIsNoFallback) {
  PlacementReport r;
  r.backends = {"cpu", "ref", "plug"};
  r.nodes = {Node("conv", "Conv", "cpu", 900), Node("c", "Correlation", "plug", 100), Node("p", "Relu", "ref", 0)};
  r.nodes[0].kind = r.nodes[1].kind = "native";
  r.nodes[1].domain = "com.example";
  r.nodes[2].kind = "pinned";
  const std::vector<NodeTime> times = {Time("conv", "Conv", "cpu", 1.0),
                                       Time("c", "com.example::Correlation", "plug", 5.0), Time("p", "Relu", "ref", 0.5)};
  const FallbackShare s = MeasureFallbackShare(r, &times);
  EXPECT_EQ(s.fallback_nodes, 1);
  EXPECT_EQ(s.to, std::vector<std::string>{"ref"});
  EXPECT_DOUBLE_EQ(s.fallback_flops, 0);
  EXPECT_DOUBLE_EQ(s.fallback_ms, 0.5);
  EXPECT_EQ(FallbackWarning(s).find("plug"), std::string::npos) << FallbackWarning(s);
}

// A real session: Relu pinned to ref runs there, and the profiled run's time on ref is counted.
TEST(FallbackShare, FromASessionsProfiledRun) {
  SessionOptions options;
  options.pins = {{"Relu", "ref"}};
  auto session = Session::Create(std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx", options);
  std::vector<NamedValue> inputs;
  for (const IoInfo& in : session->inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 1 : d;
    inputs.emplace_back(in.name, Value(Tensor(in.dtype, dims)));
  }
  RunStats stats;
  stats.profile = true;
  session->RunValues(inputs, &stats);
  const FallbackShare s = MeasureFallbackShare(session->placement(), &stats.node_times);
  EXPECT_GT(s.fallback_nodes, 0);
  EXPECT_GT(s.fallback_ms, 0);
  EXPECT_LT(s.fallback_ms, s.ms);
  ASSERT_FALSE(s.ops.empty());
  EXPECT_EQ(s.ops[0].op, "Relu");
  EXPECT_EQ(s.to, std::vector<std::string>{"ref"});
}

}  // namespace
}  // namespace ferry::tools
