// adopt_ort_ops: ONNX Runtime's ops that are Ferry's own become Ferry's, so the later passes treat a file ONNX
// Runtime wrote like the model it came from (a com.microsoft::FusedConv gets the blocked layout, a MatMul +
// BiasGelu becomes one FusedMatMul, a LayerNormalization below opset 17 joins a residual Add), computing the same.
#include <gtest/gtest.h>

#include "passes/pass_test_util.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::OpList;
using pass_test::Optimized;
using testing::ModelBuilder;

void StringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void ImportMs(Net& net) {
  auto* imp = net.b.proto().add_opset_import();
  imp->set_domain("com.microsoft");
  imp->set_version(1);
}

onnx::NodeProto& Ms(Net& net, const std::string& op, std::initializer_list<std::string> in, const std::string& out) {
  onnx::NodeProto& n = net.b.Node(op, in, {out}, op + "_" + out);
  n.set_domain("com.microsoft");
  return n;
}

// x -> FusedConv(Relu) -> FusedConv(Clip 0..6) -> y: two convs ORT fused.
std::string TwoFusedConvs() {
  Net net;
  ImportMs(net);
  net.b.Input("x", kF, {1, 16, 8, 8}).Output("y", kF, {1, 16, 8, 8});
  net.Weights("w1", {16, 16, 3, 3}, -0.2f, 0.2f);
  net.Weights("b1", {16}, -0.1f, 0.1f);
  net.Weights("w2", {16, 16, 3, 3}, -0.2f, 0.2f);
  auto& c1 = Ms(net, "FusedConv", {"x", "w1", "b1"}, "h");
  pass_test::IntsAttr(c1, "pads", {1, 1, 1, 1});
  StringAttr(c1, "activation", "Relu");
  auto& c2 = Ms(net, "FusedConv", {"h", "w2"}, "y");
  pass_test::IntsAttr(c2, "pads", {1, 1, 1, 1});
  StringAttr(c2, "activation", "Clip");
  auto* p = c2.add_attribute();
  p->set_name("activation_params");
  p->set_type(onnx::AttributeProto::FLOATS);
  p->add_floats(0.0f);
  p->add_floats(6.0f);
  return net.b.Bytes();
}

TEST(AdoptOrtOps, OrtsFusedConvBecomesFerrysAndGetsTheBlockedLayout) {
  const std::string bytes = TwoFusedConvs();
  EXPECT_EQ(OpList(*Optimized(bytes, 1)), "ai.ferry::FusedConv ai.ferry::FusedConv");
  const std::string at3 = OpList(*Optimized(bytes, 3));
  EXPECT_NE(at3.find("ai.ferry::BlockedConv"), std::string::npos) << at3;
  EXPECT_EQ(at3.find("com.microsoft"), std::string::npos) << at3;
  pass_test::ExpectSameOutputs(bytes, 3, {"cpu", "ref"}, 1e-5, 1e-5);
}

TEST(AdoptOrtOps, ThePortableModeAndAFrozenNodeKeepOrtsOps) {
  const std::string bytes = TwoFusedConvs();
  EXPECT_EQ(OpList(*Optimized(bytes, 3, {})), "com.microsoft::FusedConv com.microsoft::FusedConv");
  EXPECT_EQ(OpList(*Optimized(bytes, 1, {"cpu", "ref"}, {"FusedConv_h"})),
            "com.microsoft::FusedConv ai.ferry::FusedConv");
}

TEST(AdoptOrtOps, BiasGeluAfterAMatMulFusesIntoOneFusedMatMul) {
  for (const char* op : {"BiasGelu", "FastGelu"}) {
    SCOPED_TRACE(op);
    Net net;
    ImportMs(net);
    net.b.Input("x", kF, {2, 5, 8}).Output("y", kF, {2, 5, 12});
    net.Weights("w", {8, 12}, -0.3f, 0.3f);
    net.Weights("bias", {12}, -0.2f, 0.2f);
    const std::string mm = net.Op("MatMul", {"x", "w"});
    Ms(net, op, {mm, "bias"}, "y");
    const std::string bytes = net.b.Bytes();
    auto m = Optimized(bytes, 2);
    EXPECT_EQ(OpList(*m), "ai.ferry::FusedMatMul");
    const auto fused = pass_test::NodesOf(*m, "FusedMatMul");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(fused[0]->GetString("activation", ""), std::string(op) == "FastGelu" ? "GeluTanh" : "Gelu");
    pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-5, 1e-5);
  }
}

TEST(AdoptOrtOps, BiasGeluWithoutAMatMulStaysOrts) {
  Net net;
  ImportMs(net);
  net.b.Input("x", kF, {2, 12}).Output("y", kF, {2, 12});
  net.Weights("bias", {12}, -0.2f, 0.2f);
  Ms(net, "BiasGelu", {"x", "bias"}, "y");
  EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 3)), "com.microsoft::BiasGelu");
}

TEST(AdoptOrtOps, GeluAndFastGeluBecomeFerrysGelu) {
  Net net;
  ImportMs(net);
  net.b.Input("x", kF, {3, 7}).Output("y", kF, {3, 7});
  Ms(net, "Gelu", {"x"}, "g");
  Ms(net, "FastGelu", {"g"}, "y");
  const std::string bytes = net.b.Bytes();
  auto m = Optimized(bytes, 1);
  EXPECT_EQ(OpList(*m), "ai.ferry::Gelu ai.ferry::Gelu");
  const auto gelus = pass_test::NodesOf(*m, "Gelu");
  ASSERT_EQ(gelus.size(), 2u);
  EXPECT_EQ(gelus[0]->GetString("approximate", ""), "none");
  EXPECT_EQ(gelus[1]->GetString("approximate", ""), "tanh");
  pass_test::ExpectSameOutputs(bytes, 1, {"cpu", "ref"}, 1e-6, 1e-6);
}

TEST(AdoptOrtOps, LayerNormalizationBelowOpset17JoinsTheResidualAdd) {
  Net net(14);
  net.b.Input("x", kF, {2, 4, 16}).Input("r", kF, {2, 4, 16}).Output("y", kF, {2, 4, 16});
  net.Weights("g", {16}, 0.5f, 1.5f);
  net.Weights("beta", {16}, -0.2f, 0.2f);
  const std::string sum = net.Op("Add", {"x", "r"});
  net.b.Node("LayerNormalization", {sum, "g", "beta"}, {"y"}, "ln");
  const std::string bytes = net.b.Bytes();
  EXPECT_EQ(OpList(*Optimized(bytes, 1)), "Add ai.ferry::LayerNormalization");
  EXPECT_EQ(OpList(*Optimized(bytes, 2)), "ai.ferry::SkipLayerNormalization");
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-5, 1e-5);
}


void FloatAttrTo(onnx::NodeProto& n, const std::string& name, float v) { pass_test::FloatAttr(n, name, v); }

TEST(AdoptOrtOps, BatchTransposedFusedMatMulsBecomeOneFerryAttention) {
  // ORT's form of attention at level `extended` (BERT, ViT): Q, K, V as [S, B*H, D], the head transposes folded
  // into transBatch, the scale into alpha.
  Net net;
  ImportMs(net);
  net.b.Input("q", kF, {6, 4, 8}).Input("k", kF, {6, 4, 8}).Input("v", kF, {6, 4, 8});
  net.b.Output("y", kF, {4, 6, 8});
  auto& qk = Ms(net, "FusedMatMul", {"q", "k"}, "scores");
  ModelBuilder::IntAttr(qk, "transBatchA", 1);
  ModelBuilder::IntAttr(qk, "transBatchB", 1);
  ModelBuilder::IntAttr(qk, "transB", 1);
  FloatAttrTo(qk, "alpha", 0.35f);
  net.b.Node("Softmax", {"scores"}, {"p"}, "softmax");
  ModelBuilder::IntAttr(Ms(net, "FusedMatMul", {"p", "v"}, "y"), "transBatchB", 1);
  const std::string bytes = net.b.Bytes();
  const std::string ops = OpList(*Optimized(bytes, 2));
  EXPECT_NE(ops.find("ai.ferry::Attention"), std::string::npos) << ops;
  EXPECT_EQ(ops.find("FusedMatMul"), std::string::npos) << ops;
  EXPECT_EQ(ops.find("Softmax"), std::string::npos) << ops;
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-5, 1e-5);
}

TEST(AdoptOrtOps, FuseAttentionTakesOrtsScaledProduct) {
  // GPT-2's form: Kᵀ by a Transpose of its own, the scale in a FusedMatMul's alpha.
  Net net;
  ImportMs(net);
  net.b.Input("q", kF, {1, 2, 5, 8}).Input("kt", kF, {1, 2, 8, 5}).Input("v", kF, {1, 2, 5, 8});
  net.b.Output("y", kF, {1, 2, 5, 8});
  FloatAttrTo(Ms(net, "FusedMatMul", {"q", "kt"}, "scores"), "alpha", 0.25f);
  net.b.Node("Softmax", {"scores"}, {"p"}, "softmax");
  net.b.Node("MatMul", {"p", "v"}, {"y"}, "pv");
  const std::string bytes = net.b.Bytes();
  auto m = Optimized(bytes, 2);
  EXPECT_EQ(OpList(*m), "ai.ferry::Attention");
  const auto att = pass_test::NodesOf(*m, "Attention");
  ASSERT_EQ(att.size(), 1u);
  EXPECT_FLOAT_EQ(att[0]->GetFloat("scale", 0), 0.25f);
  EXPECT_EQ(att[0]->GetInt("k_transposed", 0), 1);
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-5, 1e-5);
}

TEST(AdoptOrtOps, QuickGeluWithAlphaOneIsAConvsSilu) {
  for (float alpha : {1.0f, 1.702f}) {
    SCOPED_TRACE(alpha);
    Net net;
    ImportMs(net);
    net.b.Input("x", kF, {1, 16, 6, 6}).Output("y", kF, {1, 16, 6, 6});
    net.Weights("w1", {16, 16, 3, 3}, -0.2f, 0.2f);
    net.Weights("w2", {16, 16, 3, 3}, -0.2f, 0.2f);
    auto& c1 = net.b.Node("Conv", {"x", "w1"}, {"h"}, "conv1");
    pass_test::IntsAttr(c1, "pads", {1, 1, 1, 1});
    FloatAttrTo(Ms(net, "QuickGelu", {"h"}, "g"), "alpha", alpha);
    auto& c2 = net.b.Node("Conv", {"g", "w2"}, {"y"}, "conv2");
    pass_test::IntsAttr(c2, "pads", {1, 1, 1, 1});
    const std::string bytes = net.b.Bytes();
    const std::string at2 = OpList(*Optimized(bytes, 2));
    const std::string at3 = OpList(*Optimized(bytes, 3));
    if (alpha == 1.0f) {
      EXPECT_EQ(at2, "ai.ferry::FusedConv Conv");
    } else {
      // Not SiLU: it stays, and runs on the blocked tensor between the blocked convolutions.
      EXPECT_EQ(at2, "Conv com.microsoft::QuickGelu Conv");
      EXPECT_EQ(at3, "ai.ferry::ReorderToBlocked ai.ferry::BlockedConv com.microsoft::QuickGelu ai.ferry::BlockedConv "
                     "ai.ferry::ReorderFromBlocked");
    }
    pass_test::ExpectSameOutputs(bytes, 3, {"cpu", "ref"}, 1e-5, 1e-5);
  }
}

}  // namespace
}  // namespace ferry
