// `ferry optimize`'s library side (tools/optimize.h), the PassManager's op deltas and instrument, and ONNX export
// with external data.
#include "tools/optimize.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using testing::ModelBuilder;
constexpr int32_t kF = onnx::TensorProto::FLOAT;

void ConvAttrs(onnx::NodeProto& n) {
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
}

// x[1,3,8,8] -> Conv -> Relu -> Conv -> Add(x-branch conv) -> Relu -> y: two Convs, two Relus, one Add.
ModelBuilder ConvNet() {
  ModelBuilder b;
  b.InputSym("x", kF, {-1, 3, 8, 8}, "N");
  std::vector<float> w(4 * 3 * 3 * 3), w2(4 * 4 * 3 * 3), bias{0.1f, -0.2f, 0.3f, 0.0f};
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.05f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.04f;
  b.FloatInitializer("w1", {4, 3, 3, 3}, w).FloatInitializer("b1", {4}, bias);
  b.FloatInitializer("w2", {4, 4, 3, 3}, w2).FloatInitializer("b2", {4}, bias);
  ConvAttrs(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"));
  b.Node("Relu", {"c1"}, {"r1"}, "relu1");
  ConvAttrs(b.Node("Conv", {"r1", "w2", "b2"}, {"c2"}, "conv2"));
  b.Node("Add", {"c2", "r1"}, {"a"}, "add");
  b.Node("Relu", {"a"}, {"y"}, "relu2");
  auto* out = b.graph().add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  return b;
}

std::string TempDir() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "/ferry_optimize_" + std::to_string(::getpid()) + "_" + test->name();
  std::filesystem::create_directories(dir);
  return dir;
}

std::string WriteModel(const ModelBuilder& b, const std::string& name) {
  const std::string path = TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << b.Bytes();
  return path;
}

std::set<std::string> Domains(const ir::Graph& g) {
  std::set<std::string> out;
  for (const auto& n : g.nodes()) out.insert(n->domain());
  return out;
}

TEST(OptimizeOpDelta, PassRunRecordsTheOpCountChangeAndTheInstrumentSeesEachChange) {
  const std::string bytes = ConvNet().Bytes();
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  runtime::InferTypes(*model);
  passes::PassContext ctx;
  ctx.level = 2;
  ctx.backends = {FindBackend("ref")};
  std::vector<std::string> calls;
  ctx.instrument = [&](const passes::PassRun* run, const ir::Model& m) {
    calls.push_back((run ? run->name : "(input)") + " " + std::to_string(m.graph->nodes().size()));
  };
  const passes::PassReport report = passes::OptimizeModel(*model, ctx);
  std::map<std::string, std::map<std::string, int>> deltas;
  std::vector<std::string> changed;
  for (const auto& run : report.runs) {
    if (run.changed) changed.push_back(run.name + " " + std::to_string(run.nodes_after));
    else EXPECT_TRUE(run.op_delta.empty()) << run.name;
    deltas[run.name] = run.op_delta;
  }
  using Delta = std::map<std::string, int>;
  EXPECT_EQ(deltas["fuse_conv_add"], (Delta{{"Add", -1}, {"Conv", -1}, {"ai.ferry::FusedConv", 1}}));
  EXPECT_EQ(deltas["fuse_conv_activation"], (Delta{{"Conv", -1}, {"Relu", -2}, {"ai.ferry::FusedConv", 1}}));
  EXPECT_EQ(passes::FormatOpDelta(deltas["fuse_conv_activation"]), "-1 Conv, -2 Relu, +1 ai.ferry::FusedConv");
  // The instrument: once before the first pass, then after each pass that changed something.
  std::vector<std::string> expected{"(input) 5"};
  expected.insert(expected.end(), changed.begin(), changed.end());
  EXPECT_EQ(calls, expected);
}

TEST(OptimizeOpDelta, CountOpsKeysByDomainAndCountsSubgraphs) {
  ModelBuilder b;
  b.Input("c", onnx::TensorProto::BOOL, {}).Input("x", kF, {2});
  auto& n = b.Node("If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* g = &ModelBuilder::GraphAttr(n, branch);
    auto* relu = g->add_node();
    relu->set_op_type("Relu");
    relu->add_input("x");
    relu->add_output(std::string(branch) + "_y");
    auto* o = g->add_output();
    o->set_name(std::string(branch) + "_y");
    o->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  b.Output("y", kF, {2});
  const std::string bytes = b.Bytes();
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  EXPECT_EQ(passes::CountOps(*model->graph), (std::map<std::string, int>{{"If", 1}, {"Relu", 2}}));
  EXPECT_EQ(passes::FormatOpDelta({{"ai.ferry::Gelu", 2}, {"Mul", -3}, {"Erf", -1}}), "-1 Erf, -3 Mul, +2 ai.ferry::Gelu");
}

TEST(OptimizeTool, PortableModeWritesStandardOnnxThatRunsLikeTheOriginal) {
  const std::string in = WriteModel(ConvNet(), "net.onnx");
  tools::OptimizeOptions options;
  options.shapes = {{"x", {1, 3, 8, 8}}};
  tools::OptimizeResult r = tools::OptimizeModelFile(in, options);
  EXPECT_TRUE(r.targets.empty());
  EXPECT_EQ(Domains(*r.model->graph), std::set<std::string>{""});
  EXPECT_EQ(r.model->opsets.count("ai.ferry"), 0u);
  EXPECT_EQ(r.model->graph->inputs()[0]->type().ToString(), "float32[1,3,8,8]");
  const std::string out = TempDir() + "/portable.onnx";
  tools::WriteOptimizedModel(r, out);
  EXPECT_EQ(r.output_path, out);

  // The written model loads back and computes what the original does.
  std::vector<float> xs(3 * 8 * 8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.1f;
  Tensor x(DataType::kFloat, {1, 3, 8, 8});
  std::copy(xs.begin(), xs.end(), x.data<float>());
  SessionOptions ref;
  ref.backends = {"ref"};
  ref.optimization_level = 0;
  const Tensor a = Session::Create(in, ref)->Run({{"x", x}})[0].second;
  const Tensor b = Session::Create(out, ref)->Run({{"x", x}})[0].second;
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f) << i;
}

TEST(OptimizeTool, TargetModeMayUseFerryOps) {
  const std::string in = WriteModel(ConvNet(), "net.onnx");
  tools::OptimizeOptions options;
  options.targets = {"ref"};
  tools::OptimizeResult r = tools::OptimizeModelFile(in, options);
  EXPECT_EQ(r.targets, std::vector<std::string>{"ref"});
  EXPECT_TRUE(Domains(*r.model->graph).count("ai.ferry"));
  EXPECT_EQ(r.ops_after.at("ai.ferry::FusedConv"), 2);
  EXPECT_EQ(r.nodes_before, 5);
  EXPECT_EQ(r.nodes_after, 2);
  // The JSON report.
  const auto j = nlohmann::json::parse(tools::FormatOptimizeJson(r));
  EXPECT_EQ(j["nodes_before"], 5);
  EXPECT_EQ(j["portable"], false);
  bool seen = false;
  for (const auto& p : j["passes"]) {
    if (p["name"] == "fuse_conv_add") {
      seen = true;
      EXPECT_EQ(p["op_delta"]["ai.ferry::FusedConv"], 1);
    }
  }
  EXPECT_TRUE(seen);
  const std::string text = tools::FormatOptimizeText(r);
  EXPECT_NE(text.find("nodes: 5 -> 2"), std::string::npos) << text;
  EXPECT_NE(text.find("-1 Add, -1 Conv, +1 ai.ferry::FusedConv"), std::string::npos) << text;
}

TEST(OptimizeTool, OptionsAreCheckedBeforeTheModelIsRead) {
  auto message = [](const tools::OptimizeOptions& o) {
    try {
      tools::ValidateOptimizeOptions(o);
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  tools::OptimizeOptions o;
  EXPECT_EQ(message(o), "(accepted)");
  o.level = 7;
  EXPECT_NE(message(o).find("--level 7"), std::string::npos);
  o = {};
  o.disabled = {"nosuchpass"};
  EXPECT_NE(message(o).find("unknown pass 'nosuchpass'"), std::string::npos);
  o = {};
  o.targets = {"gpu9"};
  EXPECT_NE(message(o).find("unknown backend 'gpu9'"), std::string::npos);
  o = {};
  o.isa = "avx2";
  EXPECT_NE(message(o).find("--isa"), std::string::npos);
}

TEST(OptimizeTool, PassListNamesEveryPassInOrder) {
  const std::string text = tools::PassListText(), md = tools::PassListMarkdown();
  size_t at_text = 0, at_md = 0;
  for (const auto& p : passes::AllPasses()) {
    const std::string name(p->name());
    at_text = text.find(name, at_text);
    ASSERT_NE(at_text, std::string::npos) << name;
    at_md = md.find("| `" + name + "` | " + std::to_string(p->level()) + " |", at_md);
    ASSERT_NE(at_md, std::string::npos) << name;
    EXPECT_FALSE(p->summary().empty()) << name;
  }
}

// Export with external data: large initializers go to OUT.data (location/offset/length, the >1 MiB ones at
// 64 KiB-aligned offsets), small ones stay inline, and the model imports back with the same values.
TEST(OptimizeExport, ExternalDataFollowsTheOnnxConvention) {
  ModelBuilder b;
  b.Input("x", kF, {1, 300000});
  std::vector<float> big(300000), medium(512), small(100);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000) * 0.5f;
  for (size_t i = 0; i < medium.size(); ++i) medium[i] = static_cast<float>(i);
  for (size_t i = 0; i < small.size(); ++i) small[i] = -static_cast<float>(i);
  b.FloatInitializer("medium", {512}, medium).FloatInitializer("big", {1, 300000}, big);
  b.FloatInitializer("small", {100}, small);
  b.Node("Add", {"x", "big"}, {"y"});
  b.Node("ReduceSum", {"medium"}, {"m"});
  b.Node("ReduceSum", {"small"}, {"s"});
  b.Output("y", kF, {1, 300000}).Output("m", kF, {1}).Output("s", kF, {1});
  const std::string bytes = b.Bytes();
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  const std::string path = TempDir() + "/ext.onnx";
  ir::ExportOptions options;
  options.external_data = true;
  ir::ExportStats stats;
  ir::ExportModelToFile(*model, path, options, &stats);
  EXPECT_EQ(stats.data_path, path + ".data");
  EXPECT_EQ(stats.external_tensors, 2);
  EXPECT_EQ(stats.external_bytes, (300000 + 512) * 4);
  EXPECT_EQ(std::filesystem::file_size(path + ".data"), 65536u + 300000u * 4);

  onnx::ModelProto proto;
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  std::map<std::string, std::map<std::string, std::string>> external;
  for (const auto& t : proto.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) {
      EXPECT_EQ(t.name(), "small");
      EXPECT_TRUE(t.has_raw_data());
      continue;
    }
    EXPECT_FALSE(t.has_raw_data()) << t.name();
    for (const auto& kv : t.external_data()) external[t.name()][kv.key()] = kv.value();
  }
  using Fields = std::map<std::string, std::string>;
  EXPECT_EQ(external["medium"], (Fields{{"length", "2048"}, {"location", "ext.onnx.data"}, {"offset", "0"}}));
  EXPECT_EQ(external["big"], (Fields{{"length", "1200000"}, {"location", "ext.onnx.data"}, {"offset", "65536"}}));

  auto back = ir::ImportModelFromFile(path);
  for (const ir::Value* v : back->graph->initializers()) {
    const ir::Value* orig = model->graph->FindValue(v->name());
    ASSERT_NE(orig, nullptr);
    ASSERT_EQ(v->initializer()->shape(), orig->initializer()->shape());
    EXPECT_EQ(0, std::memcmp(v->initializer()->raw_data(), orig->initializer()->raw_data(),
                             static_cast<size_t>(orig->initializer()->size() * 4)))
        << v->name();
  }
  // Writing again without external data: everything inline, the model still loads.
  ir::ExportModelToFile(*back, path);
  EXPECT_EQ(ir::ImportModelFromFile(path)->graph->initializers().size(), 3u);
}

}  // namespace
}  // namespace ferry
