// fuse_matmul on Gemm: Gemm(A, B, C) {transA 0, alpha 1, beta 1} -> activation => ai.ferry::FusedMatMul with B
// transposed once when transB = 1 and C as [N].
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "passes/pass_list.h"

namespace ferry {
namespace {

using pass_test::ExpectSameOutputs;
using pass_test::kF;
using pass_test::Net;
using pass_test::Optimized;
using pass_test::OpList;

struct GemmSpec {
  bool trans_b = true;
  std::vector<int64_t> c_dims = {8};  // empty: no C
  float alpha = 1.0f;
  std::string activation = "Relu";  // "": none
  bool constant_b = true;
};

// in [4, 16] -> Gemm(., w, c) -> activation: a torch Linear layer as the exporter writes it (transB = 1).
std::string GemmModel(const GemmSpec& s) {
  Net net;
  net.b.Input("in", kF, {4, 16});
  if (s.constant_b) {
    net.Weights("w", s.trans_b ? std::initializer_list<int64_t>{8, 16} : std::initializer_list<int64_t>{16, 8},
                -0.5f, 0.5f);
  } else {
    if (s.trans_b) {
      net.b.Input("w", kF, {8, 16});
    } else {
      net.b.Input("w", kF, {16, 8});
    }
  }
  std::string y;
  if (!s.c_dims.empty()) {
    auto& c = *net.b.graph().add_initializer();
    c.set_name("c");
    c.set_data_type(kF);
    int64_t count = 1;
    for (int64_t d : s.c_dims) {
      c.add_dims(d);
      count *= d;
    }
    for (float v : net.Random(static_cast<size_t>(count), 0.5f)) c.add_float_data(v);
  }
  auto& gemm = s.c_dims.empty() ? net.Node("Gemm", {"in", "w"}, &y) : net.Node("Gemm", {"in", "w", "c"}, &y);
  if (s.trans_b) testing::ModelBuilder::IntAttr(gemm, "transB", 1);
  if (s.alpha != 1.0f) pass_test::FloatAttr(gemm, "alpha", s.alpha);
  net.b.Output(s.activation.empty() ? y : net.Op(s.activation, {y}), kF, {});
  return net.b.Bytes();
}

TEST(FuseMatMulGemm, LinearLayerWithActivationBecomesOneFusedMatMul) {
  for (const GemmSpec& s : {GemmSpec{}, GemmSpec{.trans_b = false, .c_dims = {1, 8}, .activation = "Tanh"},
                            GemmSpec{.c_dims = {}, .activation = "Sigmoid"}}) {
    SCOPED_TRACE(s.activation);
    const std::string bytes = GemmModel(s);
    const auto m = Optimized(bytes, 2);
    ASSERT_EQ(OpList(*m), "ai.ferry::FusedMatMul");
    const ir::Node& fused = *pass_test::NodesOf(*m, "FusedMatMul")[0];
    EXPECT_EQ(fused.GetString("activation", ""), s.activation);
    EXPECT_EQ(fused.attr("transB"), nullptr);  // Gemm's attributes do not travel
    // B is read as [K, N] = [16, 8]; the transposed copy replaces the original, which nothing reads any more.
    ASSERT_TRUE(fused.input(1)->initializer());
    EXPECT_EQ(fused.input(1)->initializer()->shape(), (Shape{16, 8}));
    EXPECT_EQ(m->graph->initializers().size(), s.c_dims.empty() ? 1u : 2u);
    ExpectSameOutputs(bytes, 2, {"cpu", "ref"});
    ExpectSameOutputs(bytes, 2, {"ref"});
    // Idempotent: optimizing the optimized graph again changes nothing.
    auto again = Optimized(bytes, 2);
    EXPECT_FALSE(passes::MakeFuseMatMul()->Apply(*again, pass_test::Context(2, {"cpu", "ref"})));
  }
}

TEST(FuseMatMulGemm, LeftAloneWhenTheIdentityDoesNotHold) {
  // alpha != 1, no activation, a non-constant B, a C that is not [N]: the Gemm stays.
  EXPECT_EQ(OpList(*Optimized(GemmModel({.alpha = 0.5f}), 2)), "Gemm Relu");
  EXPECT_EQ(OpList(*Optimized(GemmModel({.activation = ""}), 2)), "Gemm");
  EXPECT_EQ(OpList(*Optimized(GemmModel({.constant_b = false}), 2)), "Gemm Relu");
  EXPECT_EQ(OpList(*Optimized(GemmModel({.c_dims = {4, 8}}), 2)), "Gemm Relu");
  // Portable mode: no Ferry op is made.
  EXPECT_EQ(OpList(*Optimized(GemmModel({}), 2, {})), "Gemm Relu");
  // A frozen activation keeps the pair apart.
  EXPECT_EQ(OpList(*Optimized(GemmModel({}), 2, {"cpu", "ref"}, {"Relu"})), "Gemm Relu");
}

}  // namespace
}  // namespace ferry
