// convert::ConvertToOrtOps (`ferry optimize --target ort`): each ai.ferry op written in ONNX Runtime's ops (the
// op, its attributes, the parameters ORT needs written out), the forms that fall back to ONNX primitives, and the
// converted model computing what the ai.ferry model computes (on ref, which runs both). The end-to-end check
// against ONNX Runtime itself is tests/python/test_optimize_ort.py.
#include "convert/ort_ops.h"

#include <gtest/gtest.h>

#include "ferry/error.h"
#include "ir/onnx_export.h"
#include "passes/pass_test_util.h"
#include "runtime/type_inference.h"

namespace ferry {
namespace {

using pass_test::Import;
using pass_test::kF;
using pass_test::OpList;
using testing::ModelBuilder;

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void FloatsAttr(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float x : v) a->add_floats(x);
}

ModelBuilder FerryModel(int64_t opset = 17) {
  ModelBuilder b(opset);
  auto* imp = b.proto().add_opset_import();
  imp->set_domain("ai.ferry");
  imp->set_version(1);
  return b;
}

onnx::NodeProto& FerryNode(ModelBuilder& b, const std::string& op, std::initializer_list<std::string> in,
                           std::initializer_list<std::string> out) {
  onnx::NodeProto& n = b.Node(op, in, out, op + "_node");
  n.set_domain("ai.ferry");
  return n;
}

std::vector<float> Ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>((i * 7) % 11) - 5.0f);
  return v;
}

std::unique_ptr<ir::Model> Converted(const std::string& bytes, convert::OrtConversion* report = nullptr) {
  auto model = Import(bytes);
  runtime::InferTypes(*model);
  convert::OrtConversion r = convert::ConvertToOrtOps(*model);
  runtime::InferTypes(*model);
  if (report) *report = r;
  return model;
}

const ir::Node* Find(const ir::Model& m, const std::string& op) {
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type() == op) return n.get();
  }
  return nullptr;
}

// The converted model computes what the original computes, on ref (which runs ai.ferry and ORT's ops).
void ExpectSameOnRef(const std::string& bytes, const ir::Model& converted) {
  const std::string out = ir::ExportModelBytes(converted);
  const auto feeds = pass_test::RandomFeeds(bytes);
  SessionOptions o;
  o.threads = 1;
  o.backends = {"ref"};
  o.optimization_level = 0;
  auto session = [&](const std::string& b) {
    return Session::CreateFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(b.data()), b.size()), o);
  };
  const auto want = session(bytes)->Run(feeds);
  const auto got = session(out)->Run(feeds);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-5, 1e-5)) << "output " << want[i].first;
  }
}

std::string ConvModel(const std::string& activation, std::vector<float> params = {}, bool with_z = false) {
  ModelBuilder b = FerryModel();
  b.Input("x", kF, {1, 4, 5, 5}).Output("y", kF, {1, 4, 5, 5});
  b.FloatInitializer("w", {4, 4, 3, 3}, Ramp(144, 0.05f)).FloatInitializer("bias", {4}, Ramp(4, 0.1f));
  if (with_z) b.Input("z", kF, {1, 4, 5, 5});
  auto& n = with_z ? FerryNode(b, "FusedConv", {"x", "w", "bias", "z"}, {"y"})
                   : FerryNode(b, "FusedConv", {"x", "w", "bias"}, {"y"});
  pass_test::IntsAttr(n, "pads", {1, 1, 1, 1});
  if (!activation.empty()) StringAttr(n, "activation", activation);
  if (!params.empty()) FloatsAttr(n, "activation_params", params);
  return b.Bytes();
}

TEST(OrtOps, FusedConvWithAnOrtActivationIsComMicrosoftFusedConvWithItsParametersWrittenOut) {
  for (const auto& [act, want] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"Relu", {}}, {"LeakyRelu", {0.01f}}, {"HardSigmoid", {0.2f, 0.5f}}, {"Tanh", {}}, {"Sigmoid", {}}}) {
    SCOPED_TRACE(act);
    const std::string bytes = ConvModel(act);
    convert::OrtConversion r;
    auto m = Converted(bytes, &r);
    EXPECT_EQ(OpList(*m), "com.microsoft::FusedConv");
    EXPECT_EQ(r.mapped, 1);
    EXPECT_EQ(r.decomposed, 0);
    const ir::Node* n = Find(*m, "FusedConv");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->GetString("activation", ""), act);
    EXPECT_EQ(n->GetFloats("activation_params"), want);  // the table's defaults, which ORT does not apply itself
    EXPECT_EQ(n->GetInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(m->opsets.at("com.microsoft"), 1);
    ExpectSameOnRef(bytes, *m);
  }
}

TEST(OrtOps, FusedConvClipKeepsItsBoundsAndTheSumInput) {
  const std::string bytes = ConvModel("Clip", {0.0f, 6.0f}, /*with_z=*/true);
  auto m = Converted(bytes);
  EXPECT_EQ(OpList(*m), "com.microsoft::FusedConv");
  const ir::Node* n = Find(*m, "FusedConv");
  EXPECT_EQ(n->num_inputs(), 4u);
  EXPECT_EQ(n->GetFloats("activation_params"), (std::vector<float>{0.0f, 6.0f}));
  ExpectSameOnRef(bytes, *m);
}

TEST(OrtOps, FusedConvWithAnotherActivationKeepsTheConvFusedAndTheActivationApart) {
  struct Case {
    std::string act, ops;
  };
  for (const Case& c : {Case{"Silu", "com.microsoft::FusedConv com.microsoft::QuickGelu"},
                        Case{"Gelu", "com.microsoft::FusedConv com.microsoft::Gelu"},
                        Case{"GeluTanh", "com.microsoft::FusedConv com.microsoft::FastGelu"},
                        Case{"HardSwish", "com.microsoft::FusedConv HardSwish"}}) {
    SCOPED_TRACE(c.act);
    const std::string bytes = ConvModel(c.act);
    auto m = Converted(bytes);
    EXPECT_EQ(OpList(*m), c.ops);
    EXPECT_FALSE(Find(*m, "FusedConv")->has_attr("activation"));
    EXPECT_EQ(m->graph->outputs()[0]->name(), "y");  // the graph output keeps its name
    if (c.act == "Silu") EXPECT_FLOAT_EQ(Find(*m, "QuickGelu")->GetFloat("alpha", 0), 1.0f);
    ExpectSameOnRef(bytes, *m);
  }
}

std::string MatMulModel(const std::string& activation, bool bias) {
  ModelBuilder b = FerryModel();
  b.Input("a", kF, {2, 3, 8}).Output("y", kF, {2, 3, 6});
  b.FloatInitializer("w", {8, 6}, Ramp(48, 0.1f)).FloatInitializer("c", {6}, Ramp(6, 0.2f));
  auto& n = bias ? FerryNode(b, "FusedMatMul", {"a", "w", "c"}, {"y"}) : FerryNode(b, "FusedMatMul", {"a", "w"}, {"y"});
  if (!activation.empty()) StringAttr(n, "activation", activation);
  return b.Bytes();
}

TEST(OrtOps, FusedMatMulIsMatMulThenOrtsBiasedActivation) {
  struct Case {
    std::string act;
    bool bias;
    std::string ops;
  };
  for (const Case& c : {Case{"Gelu", true, "MatMul com.microsoft::BiasGelu"},
                        Case{"Gelu", false, "MatMul com.microsoft::Gelu"},
                        Case{"GeluTanh", true, "MatMul com.microsoft::FastGelu"},
                        Case{"", true, "MatMul Add"}, Case{"Relu", true, "MatMul Add Relu"},
                        Case{"Silu", true, "MatMul Add com.microsoft::QuickGelu"}}) {
    SCOPED_TRACE(c.act + (c.bias ? " with bias" : ""));
    const std::string bytes = MatMulModel(c.act, c.bias);
    auto m = Converted(bytes);
    EXPECT_EQ(OpList(*m), c.ops);
    ExpectSameOnRef(bytes, *m);
  }
}

TEST(OrtOps, NormalizationsBecomeTheDefaultDomainOpsOrtRegisters) {
  for (int64_t opset : {14, 17}) {
    SCOPED_TRACE(opset);
    ModelBuilder b = FerryModel(opset);
    b.Input("x", kF, {2, 4, 8}).Output("y", kF, {2, 4, 8}).Output("r", kF, {2, 4, 8});
    b.FloatInitializer("g", {8}, Ramp(8, 0.3f)).FloatInitializer("beta", {8}, Ramp(8, 0.1f));
    FerryNode(b, "LayerNormalization", {"x", "g", "beta"}, {"y"});
    FerryNode(b, "RMSNormalization", {"x", "g"}, {"r"});
    const std::string bytes = b.Bytes();
    auto m = Converted(bytes);
    EXPECT_EQ(OpList(*m), "LayerNormalization SimplifiedLayerNormalization");
    EXPECT_EQ(Find(*m, "LayerNormalization")->opset(), opset);
    ExpectSameOnRef(bytes, *m);
  }
}

TEST(OrtOps, SkipLayerNormalizationMovesItsSumToOutputThree) {
  ModelBuilder b = FerryModel();
  b.Input("x", kF, {2, 4, 8}).Input("s", kF, {2, 4, 8}).Output("y", kF, {2, 4, 8}).Output("sum", kF, {2, 4, 8});
  b.FloatInitializer("g", {8}, Ramp(8, 0.3f)).FloatInitializer("beta", {8}, Ramp(8, 0.1f));
  FerryNode(b, "SkipLayerNormalization", {"x", "s", "g", "beta"}, {"y", "sum"});
  const std::string bytes = b.Bytes();
  auto m = Converted(bytes);
  EXPECT_EQ(OpList(*m), "com.microsoft::SkipLayerNormalization");
  const ir::Node* n = Find(*m, "SkipLayerNormalization");
  ASSERT_EQ(n->num_outputs(), 4u);
  EXPECT_EQ(n->output(1), nullptr);
  EXPECT_EQ(n->output(2), nullptr);
  EXPECT_EQ(n->output(3)->name(), "sum");
  ExpectSameOnRef(bytes, *m);
}

TEST(OrtOps, SkipLayerNormalizationWithABroadcastSkipIsDecomposed) {
  ModelBuilder b = FerryModel();
  b.Input("x", kF, {2, 4, 8}).Input("s", kF, {4, 8}).Output("y", kF, {2, 4, 8});
  b.FloatInitializer("g", {8}, Ramp(8, 0.3f));
  FerryNode(b, "SkipLayerNormalization", {"x", "s", "g"}, {"y"});
  const std::string bytes = b.Bytes();
  convert::OrtConversion r;
  auto m = Converted(bytes, &r);
  EXPECT_EQ(r.decomposed, 1);
  EXPECT_EQ(OpList(*m).find("ai.ferry"), std::string::npos) << OpList(*m);
  ExpectSameOnRef(bytes, *m);
}

TEST(OrtOps, ScaleShiftBecomesMulAddAndItsActivation) {
  ModelBuilder b = FerryModel();
  b.Input("x", kF, {1, 2, 4, 4}).Output("y", kF, {1, 2, 4, 4});
  b.FloatInitializer("s", {1, 2, 1, 1}, {0.5f, 2.0f}).FloatInitializer("t", {1, 2, 1, 1}, {0.1f, -0.3f});
  StringAttr(FerryNode(b, "ScaleShift", {"x", "s", "t"}, {"y"}), "activation", "Relu");
  const std::string bytes = b.Bytes();
  convert::OrtConversion r;
  auto m = Converted(bytes, &r);
  EXPECT_EQ(OpList(*m), "Mul Add Relu");
  EXPECT_EQ(r.decomposed, 1);
  EXPECT_EQ(r.by_rewrite.size(), 1u);
  ExpectSameOnRef(bytes, *m);
}

TEST(OrtOps, AttentionBecomesOnnxPrimitives) {
  ModelBuilder b = FerryModel();
  b.Input("q", kF, {1, 2, 4, 8}).Input("k", kF, {1, 2, 4, 8}).Input("v", kF, {1, 2, 4, 8});
  b.Output("y", kF, {1, 2, 4, 8});
  pass_test::FloatAttr(FerryNode(b, "Attention", {"q", "k", "v"}, {"y"}), "scale", 0.35f);
  const std::string bytes = b.Bytes();
  convert::OrtConversion r;
  auto m = Converted(bytes, &r);
  EXPECT_EQ(r.decomposed, 1);
  EXPECT_NE(OpList(*m).find("Softmax"), std::string::npos) << OpList(*m);
  EXPECT_EQ(OpList(*m).find("ai.ferry"), std::string::npos) << OpList(*m);
  ExpectSameOnRef(bytes, *m);
}

}  // namespace
}  // namespace ferry
