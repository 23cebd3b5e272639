// The per-op FLOPs table (src/semantics/flops.h) on one-node models with static shapes: convolutions, products,
// pools, reductions, elementwise ops, and the ops and domains it does not count.
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
  EXPECT_TRUE(HasFlops("Conv"));
  EXPECT_TRUE(HasFlops("ReduceLogSumExp"));
  EXPECT_FALSE(HasFlops("Reshape"));
}

}  // namespace
}  // namespace ferry::semantics
