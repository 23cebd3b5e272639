// The per-op FLOPs table (src/semantics/flops.h) on one-node models with static shapes: convolutions, products,
// pools, reductions, elementwise ops, recurrent ops, attention, Einsum, Resize, and the ops and domains it does
// not count.
#include "semantics/flops.h"

#include <gtest/gtest.h>

#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "testing/op_harness.h"

namespace ferry::semantics {
namespace {

using namespace ferry::testing;  // NOLINT: the op harness vocabulary

Tensor Zeros(const Shape& shape) {
  const std::vector<float> zeros(static_cast<size_t>(ShapeElementCount(shape)));
  return Tensor::FromVector(DataType::kFloat, shape, zeros);
}

// FLOPs of the node of `t` after import and shape inference.
double FlopsOf(const OpTest& t) {
  const std::string bytes = OneNodeModel(t);
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "m");
  runtime::InferTypes(*model);
  return EstimateFlops(*model->graph->nodes().front());
}

TEST(SemanticsFlops, ConvolutionsAndProducts) {
  // Y [1, 4, 6, 6]; W [4, 2, 3, 3]: 2 * 144 * 18
  OpTest conv{.op = "Conv", .inputs = {In("x", Zeros({1, 2, 8, 8})), Const("w", Zeros({4, 2, 3, 3}))}};
  EXPECT_EQ(FlopsOf(conv), 2.0 * 144 * 18);
  // X [1, 2, 3, 3], W [2, 4, 2, 2]: 2 * 18 * 16
  OpTest deconv{.op = "ConvTranspose", .inputs = {In("x", Zeros({1, 2, 3, 3})), Const("w", Zeros({2, 4, 2, 2}))}};
  EXPECT_EQ(FlopsOf(deconv), 2.0 * 18 * 16);
  OpTest matmul{.op = "MatMul", .inputs = {In("a", Zeros({2, 3, 5})), In("b", Zeros({5, 7}))}};
  EXPECT_EQ(FlopsOf(matmul), 2.0 * 42 * 5);
  OpTest gemm{.op = "Gemm", .inputs = {In("a", Zeros({5, 3})), In("b", Zeros({5, 7}))},
              .attributes = {Int("transA", 1)}};
  EXPECT_EQ(FlopsOf(gemm), 2.0 * 21 * 5);
}

TEST(SemanticsFlops, PoolsReductionsAndElementwise) {
  OpTest pool{.op = "MaxPool", .inputs = {In("x", Zeros({1, 2, 4, 4}))}, .attributes = {Ints("kernel_shape", {2, 2})}};
  EXPECT_EQ(FlopsOf(pool), 18.0 * 4);
  OpTest reduce{.op = "ReduceSum", .inputs = {In("x", Zeros({3, 4}))}};
  EXPECT_EQ(FlopsOf(reduce), 12.0);
  OpTest relu{.op = "Relu", .inputs = {In("x", Zeros({3, 4}))}};
  EXPECT_EQ(FlopsOf(relu), 12.0);
  OpTest softmax{.op = "Softmax", .inputs = {In("x", Zeros({3, 4}))}};
  EXPECT_EQ(FlopsOf(softmax), 36.0);
  OpTest reshape{.op = "Identity", .inputs = {In("x", Zeros({3, 4}))}};
  EXPECT_EQ(FlopsOf(reshape), 0.0);
  EXPECT_TRUE(HasFlops("", "Conv"));
  EXPECT_TRUE(HasFlops("ai.onnx", "ReduceLogSumExp"));
  EXPECT_FALSE(HasFlops("", "Reshape"));
  EXPECT_FALSE(HasFlops("com.example", "Conv"));
}

TEST(SemanticsFlops, RecurrentOpsCountTheirProductsAndGates) {
  // X [seq 5, batch 2, input 3], 2 directions, hidden 4: per step and direction 2*2*gates*4*(3+4) + per*2*4.
  const auto recurrent = [](const std::string& op, int64_t gates) {
    return OpTest{.op = op,
                  .inputs = {In("x", Zeros({5, 2, 3})), Const("w", Zeros({2, gates * 4, 3})),
                             Const("r", Zeros({2, gates * 4, 4}))},
                  .attributes = {Int("hidden_size", 4), Str("direction", "bidirectional")},
                  .num_outputs = 1};
  };
  EXPECT_EQ(FlopsOf(recurrent("LSTM", 4)), 5.0 * 2 * (2 * 2 * 4 * 4 * 7 + 13 * 2 * 4));
  EXPECT_EQ(FlopsOf(recurrent("GRU", 3)), 5.0 * 2 * (2 * 2 * 3 * 4 * 7 + 10 * 2 * 4));
  EXPECT_EQ(FlopsOf(recurrent("RNN", 1)), 5.0 * 2 * (2 * 2 * 1 * 4 * 7 + 2 * 2 * 4));
  // layout = 1: X is [batch, seq, input]; the same cost with batch and seq read from the other axes.
  OpTest batch_first = recurrent("LSTM", 4);
  batch_first.opset = 14;
  batch_first.inputs[0] = In("x", Zeros({2, 5, 3}));
  batch_first.attributes.push_back(Int("layout", 1));
  EXPECT_EQ(FlopsOf(batch_first), 5.0 * 2 * (2 * 2 * 4 * 4 * 7 + 13 * 2 * 4));
  EXPECT_TRUE(HasFlops("", "LSTM"));
}

TEST(SemanticsFlops, AttentionEinsumAndResize) {
  // 4-D: batch 1, 2 heads, 3 queries, 5 keys, head size 4 (K and V): 2*1*3*5*(8+8) + 3*1*2*3*5.
  OpTest attention{.op = "Attention", .opset = 23,
                   .inputs = {In("q", Zeros({1, 2, 3, 4})), In("k", Zeros({1, 2, 5, 4})),
                              In("v", Zeros({1, 2, 5, 4}))}};
  EXPECT_EQ(FlopsOf(attention), 2.0 * 3 * 5 * 16 + 3.0 * 2 * 3 * 5);
  // 3-D with grouped heads: 4 query heads of size 2 on 2 key/value heads of size 2 (V width 4 -> 8 per query).
  OpTest grouped{.op = "Attention", .opset = 23,
                 .inputs = {In("q", Zeros({1, 3, 8})), In("k", Zeros({1, 5, 4})), In("v", Zeros({1, 5, 4}))},
                 .attributes = {Int("q_num_heads", 4), Int("kv_num_heads", 2)}};
  EXPECT_EQ(FlopsOf(grouped), 2.0 * 3 * 5 * (8 + 8) + 3.0 * 4 * 3 * 5);
  OpTest einsum{.op = "Einsum", .inputs = {In("a", Zeros({3, 4})), In("b", Zeros({4, 5}))},
                .attributes = {Str("equation", "ij,jk->ik")}};
  EXPECT_EQ(FlopsOf(einsum), 2.0 * 3 * 4 * 5);
  OpTest ellipsis{.op = "Einsum", .inputs = {In("a", Zeros({3, 4})), In("b", Zeros({4, 5}))},
                  .attributes = {Str("equation", "...j,jk->...k")}};
  EXPECT_EQ(FlopsOf(ellipsis), 0.0);
  // Bilinear 2x2 -> 4x4 on the two spatial axes: 4 taps, 2 operations each, per output element.
  Tensor sizes = Tensor::FromVector(DataType::kInt64, {4}, std::vector<int64_t>{1, 1, 4, 4});
  OpTest resize{.op = "Resize", .inputs = {In("x", Zeros({1, 1, 2, 2})), Omitted(), Omitted(), Const("sizes", sizes)},
                .attributes = {Str("mode", "linear")}};
  EXPECT_EQ(FlopsOf(resize), 2.0 * 4 * 16);
}

// Ferry's own ops (what the optimizer fuses and the blocked layout makes) count as the ops they stand for, so a
// run's FLOPs total after optimization is the model's (`ferry run --report` against `ferry check`).
TEST(SemanticsFlops, FerryOpsCountAsWhatTheyStandFor) {
  OpTest fused{.op = "FusedConv", .domain = "ai.ferry", .opset = 1,
               .inputs = {In("x", Zeros({1, 2, 8, 8})), Const("w", Zeros({4, 2, 3, 3}))}};
  EXPECT_EQ(FlopsOf(fused), 2.0 * 144 * 18);
  // Blocked by 8: Y [1, 1, 6, 6, 8] holds 4 real channels of 8.
  OpTest blocked{.op = "BlockedConv", .domain = "ai.ferry", .opset = 1,
                 .inputs = {In("x", Zeros({1, 1, 8, 8, 8})), Const("w", Zeros({4, 2, 3, 3}))},
                 .attributes = {Int("block", 8), Int("plain_input", 0)}};
  EXPECT_EQ(FlopsOf(blocked), 2.0 * 144 * 18);
  OpTest matmul{.op = "FusedMatMul", .domain = "ai.ferry", .opset = 1,
                .inputs = {In("a", Zeros({2, 3, 5})), In("b", Zeros({5, 7}))}};
  EXPECT_EQ(FlopsOf(matmul), 2.0 * 42 * 5);
  // [batch 2, queries 3, head 4] against 5 keys: 2*2*3*5*(4+4) + 3*2*3*5.
  OpTest attention{.op = "Attention", .domain = "ai.ferry", .opset = 1,
                   .inputs = {In("q", Zeros({2, 3, 4})), In("k", Zeros({2, 5, 4})), In("v", Zeros({2, 5, 4}))}};
  EXPECT_EQ(FlopsOf(attention), 2.0 * 2 * 3 * 5 * 8 + 3.0 * 2 * 3 * 5);
  OpTest norm{.op = "LayerNormalization", .domain = "ai.ferry", .opset = 1,
              .inputs = {In("x", Zeros({3, 4})), Const("s", Zeros({4}))}};
  EXPECT_EQ(FlopsOf(norm), 24.0);
  EXPECT_TRUE(HasFlops("ai.ferry", "BlockedConv"));
  EXPECT_FALSE(HasFlops("ai.ferry", "ReorderToBlocked"));
}

}  // namespace
}  // namespace ferry::semantics
