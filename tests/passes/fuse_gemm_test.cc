// fuse_gemm: MatMul(A, B) -> Add(., C) => Gemm(A, B, C) in the portable mode (no target backends).
#include <gtest/gtest.h>

#include "passes/pass_list.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

// in [4, 16] -> MatMul(., w [16, 8]) -> Add(., c) -> Relu; `c_first`: Add(c, .).
std::string Linear(std::initializer_list<int64_t> c_dims, bool c_first = false, int64_t opset = 17) {
  Net net(opset);
  net.b.Input("in", kF, {4, 16});
  net.Weights("w", {16, 8}, -0.5f, 0.5f);
  net.Weights("c", c_dims, -0.5f, 0.5f);
  const std::string mm = net.Op("MatMul", {"in", "w"});
  const std::string y = c_first ? net.Op("Add", {"c", mm}) : net.Op("Add", {mm, "c"});
  net.b.Output(net.Op("Relu", {y}), kF, {});
  return net.b.Bytes();
}

TEST(FuseGemm, MatMulAddBecomesGemmInThePortableMode) {
  const auto m = Optimized(Linear({8}), 2, {});
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (in: float32[4,16]) -> (Relu3: float32[4,8]) {\n"
            "  %w = initializer float32[16,8]\n"
            "  %c = initializer float32[8]\n"
            "  %Add2 = Gemm(%in, %w, %c)   # MatMul_1, opset 17\n"
            "  %Relu3 = Relu(%Add2)   # Relu_3, opset 17\n"
            "}\n");
  // With a target the linear layer is fuse_matmul's (FusedMatMul with the Relu); level 1 leaves it.
  EXPECT_EQ(OpList(*Optimized(Linear({8}), 2)), "ai.ferry::FusedMatMul");
  EXPECT_EQ(OpList(*Optimized(Linear({8}), 1, {})), "MatMul Add Relu");
}

TEST(FuseGemm, BiasShapesThatBroadcastToTheProduct) {
  for (const auto& [dims, c_first] : std::vector<std::pair<std::vector<int64_t>, bool>>{
           {{8}, true}, {{1, 8}, false}, {{4, 8}, true}, {{4, 1}, false}, {{1}, false}, {{}, true}}) {
    SCOPED_TRACE(dims.size());
    Net net;
    net.b.Input("in", kF, {4, 16});
    net.Weights("w", {16, 8}, -0.5f, 0.5f);
    auto& c = *net.b.graph().add_initializer();
    c.set_name("c");
    c.set_data_type(kF);
    int64_t count = 1;
    for (int64_t d : dims) {
      c.add_dims(d);
      count *= d;
    }
    for (float v : net.Random(static_cast<size_t>(count), 0.5f)) c.add_float_data(v);
    const std::string mm = net.Op("MatMul", {"in", "w"});
    net.b.Output(c_first ? net.Op("Add", {"c", mm}) : net.Op("Add", {mm, "c"}), kF, {});
    const std::string bytes = net.b.Bytes();
    const auto m = Optimized(bytes, 2, {});
    EXPECT_EQ(OpList(*m), "Gemm");
    EXPECT_EQ(m->graph->outputs()[0]->name(), "Add2");
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"ref"}, {"cpu", "ref"}}) {
      pass_test::ExpectSamePortableOutputs(bytes, 2, backends);
    }
  }
}

TEST(FuseGemm, Idempotent) {
  const passes::Pass* pass = nullptr;
  for (const auto& p : passes::AllPasses()) {
    if (p->name() == "fuse_gemm") pass = p.get();
  }
  ASSERT_NE(pass, nullptr);
  auto m = pass_test::Import(Linear({8}));
  const auto ctx = pass_test::Context(2, {});
  EXPECT_TRUE(pass->Apply(*m, ctx));
  const std::string once = ir::DumpGraph(*m->graph);
  EXPECT_FALSE(pass->Apply(*m, ctx));
  EXPECT_EQ(ir::DumpGraph(*m->graph), once);
}

TEST(FuseGemm, OtherShapesReadersAndFrozenNodesAreLeftAlone) {
  // A bias that would grow the product ([2, 4, 8]) and a 3-D A.
  EXPECT_EQ(OpList(*Optimized(Linear({2, 4, 8}), 2, {})), "MatMul Add Relu");
  {
    Net net;
    net.b.Input("in", kF, {2, 4, 16});
    net.Weights("w", {16, 8}, -0.5f, 0.5f);
    net.Weights("c", {8}, -0.5f, 0.5f);
    net.b.Output(net.Op("Add", {net.Op("MatMul", {"in", "w"}), "c"}), kF, {});
    EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2, {})), "MatMul Add");
  }
  // B not a constant (a graph input), and a product that is also a result.
  {
    Net net;
    net.b.Input("in", kF, {4, 16});
    net.b.Input("w", kF, {16, 8});
    net.Weights("c", {8}, -0.5f, 0.5f);
    net.b.Output(net.Op("Add", {net.Op("MatMul", {"in", "w"}), "c"}), kF, {});
    EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2, {})), "MatMul Add");
  }
  {
    Net net;
    net.b.Input("in", kF, {4, 16});
    net.Weights("w", {16, 8}, -0.5f, 0.5f);
    net.Weights("c", {8}, -0.5f, 0.5f);
    const std::string mm = net.Op("MatMul", {"in", "w"});
    net.b.Output(net.Op("Add", {mm, "c"}), kF, {});
    net.b.Output(mm, kF, {});
    EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2, {})), "MatMul Add");
  }
  for (const char* pin : {"MatMul", "Add_2"}) {
    EXPECT_EQ(OpList(*Optimized(Linear({8}), 2, {}, {pin})), "MatMul Add Relu") << pin;
  }
}

}  // namespace
}  // namespace ferry
