// fuse_conv_activation (and fuse_matmul, through the same ActivationPattern) with Mish, as YOLOv4-style models
// write it: the Mish-18 op, or x * tanh(softplus(x)) (either operand order) at any opset => FusedConv / FusedMatMul
// with activation Mish; left alone when the conv output, or the softplus or tanh in between, has another reader.
#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

// How the Mish after the conv (or linear layer) is written, and who else reads its intermediates.
struct MishForm {
  bool op = false;            // the Mish op (opset 18); else Mul(y, Tanh(Softplus(y)))
  bool y_second = false;      // Mul(Tanh(Softplus(y)), y)
  bool y_read = false;        // y is a graph output too
  bool softplus_read = false;  // the Softplus output is a graph output too
  bool tanh_read = false;      // the Tanh output is a graph output too
};

// mish(y) of y -> "out" (intermediates that are read elsewhere become graph outputs).
void AddMish(Net& net, const std::string& y, const MishForm& f) {
  if (f.op) {
    net.b.Node("Mish", {y}, {"out"}, "Mish_out");
  } else {
    const std::string softplus = net.Op("Softplus", {y});
    const std::string tanh = net.Op("Tanh", {softplus});
    if (f.y_second) net.b.Node("Mul", {tanh, y}, {"out"}, "Mul_out");
    else net.b.Node("Mul", {y, tanh}, {"out"}, "Mul_out");
    if (f.softplus_read) net.b.Output(softplus, kF, {});
    if (f.tanh_read) net.b.Output(tanh, kF, {});
  }
  net.b.Output("out", kF, {});
  if (f.y_read) net.b.Output(y, kF, {});
}

// x [1, 8, 12, 12] -> Conv(8 -> 16, 3x3, pads 1, bias) -> mish, at opset 18 (the Mish op) or 17.
std::string ConvMish(const MishForm& f) {
  Net net(f.op ? 18 : 17);
  net.b.Input("x", kF, {1, 8, 12, 12});
  pass_test::IntsAttr(net.b.Node("Conv", {"x", net.Weights("w", {16, 8, 3, 3}, -0.5f, 0.5f),
                                          net.Weights("bias", {16}, -1, 1)},
                                 {"y"}, "Conv_y"),
                      "pads", {1, 1, 1, 1});
  AddMish(net, "y", f);
  return net.b.Bytes();
}

TEST(FuseConvActivationMish, TheOpAndTheExportedFormBecomeOneFusedConv) {
  for (const MishForm& f : {MishForm{.op = true}, MishForm{}, MishForm{.y_second = true}}) {
    SCOPED_TRACE(f.op ? "Mish op" : f.y_second ? "Mul(tanh(softplus(y)), y)" : "Mul(y, tanh(softplus(y)))");
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(ConvMish(f), 2, backends);
      EXPECT_EQ(OpList(*m), "ai.ferry::FusedConv");
      const auto fused = NodesOf(*m, "FusedConv");
      ASSERT_EQ(fused.size(), 1u);
      EXPECT_EQ(fused[0]->GetString("activation", ""), "Mish");
      EXPECT_TRUE(fused[0]->GetFloats("activation_params").empty());
      EXPECT_EQ(fused[0]->output(0)->name(), "out");
      // Conv outputs in about [-6, 6]: Mish's steep and flat parts both.
      pass_test::ExpectSameOutputs(ConvMish(f), 2, backends);
    }
  }
}

TEST(FuseConvActivationMish, DisablingThePassKeepsTheMish) {
  const auto model = pass_test::Import(ConvMish({}));
  passes::PassContext ctx = pass_test::Context(2, {"cpu", "ref"});
  ctx.disabled.insert("fuse_conv_activation");
  passes::OptimizeModel(*model, ctx);
  EXPECT_EQ(OpList(*model), "Conv Softplus Tanh Mul");
}

TEST(FuseConvActivationMish, AnotherReaderOfTheConvOrAnIntermediateKeepsItUnfused) {
  for (const MishForm& f : {MishForm{.op = true, .y_read = true}, MishForm{.y_read = true},
                            MishForm{.softplus_read = true}, MishForm{.tanh_read = true}}) {
    const auto m = Optimized(ConvMish(f), 2);
    EXPECT_TRUE(NodesOf(*m, "FusedConv").empty()) << OpList(*m);
    EXPECT_EQ(NodesOf(*m, "Conv").size(), 1u) << OpList(*m);
    EXPECT_EQ(NodesOf(*m, f.op ? "Mish" : "Mul").size(), 1u) << OpList(*m);
    pass_test::ExpectSameOutputs(ConvMish(f), 2, {"cpu", "ref"});
  }
}

// The same activation after a linear layer: MatMul, bias and Mish => one FusedMatMul (fuse_matmul reads
// MatchActivation, the same pattern).
std::string LinearMish(const MishForm& f) {
  Net net(f.op ? 18 : 17);
  net.b.Input("in", kF, {2, 8, 16});
  const std::string y = net.Op("Add", {net.Op("MatMul", {"in", net.Weights("w", {16, 24}, -0.5f, 0.5f)}),
                                       net.Weights("bias", {24}, -1, 1)});
  AddMish(net, y, f);
  return net.b.Bytes();
}

TEST(FuseConvActivationMish, AfterALinearLayerBecomesOneFusedMatMul) {
  for (const MishForm& f : {MishForm{.op = true}, MishForm{}, MishForm{.y_second = true}}) {
    SCOPED_TRACE(f.op ? "Mish op" : f.y_second ? "Mul(tanh(softplus(y)), y)" : "Mul(y, tanh(softplus(y)))");
    const auto m = Optimized(LinearMish(f), 2);
    EXPECT_EQ(OpList(*m), "ai.ferry::FusedMatMul");
    const auto fused = NodesOf(*m, "FusedMatMul");
    ASSERT_EQ(fused.size(), 1u);
    EXPECT_EQ(fused[0]->GetString("activation", ""), "Mish");
    pass_test::ExpectSameOutputs(LinearMish(f), 2, {"cpu", "ref"});
  }
  // The Softplus read elsewhere: the bias still fuses, the activation stays outside.
  const auto m = Optimized(LinearMish({.softplus_read = true}), 2);
  EXPECT_EQ(OpList(*m), "ai.ferry::FusedMatMul Softplus Tanh Mul");
  EXPECT_EQ(NodesOf(*m, "FusedMatMul")[0]->GetString("activation", ""), "");
}

}  // namespace
}  // namespace ferry
