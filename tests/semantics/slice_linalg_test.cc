// Slice's per-axis resolution and Gemm's and MatMul's operand geometry in the op-semantics layer
// (src/semantics/slice.h, gemm.h, matmul.h): the ONNX clamping rules, negative and huge steps, transposes, 1-D
// promotion, batch broadcasting, and the refusals with their reasons.
#include <gtest/gtest.h>

#include <climits>

#include "ferry/error.h"
#include "semantics/gemm.h"
#include "semantics/matmul.h"
#include "semantics/slice.h"

namespace ferry::semantics {
namespace {

::testing::AssertionResult Is(const SliceAxis& got, int64_t begin, int64_t length, int64_t step) {
  if (got.begin == begin && got.length == length && got.step == step) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got {" << got.begin << ", " << got.length << ", " << got.step << "}";
}

TEST(SemanticsSlice, ClampsPerTheStepsDirection) {
  EXPECT_TRUE(Is(ResolveSliceAxis(10, 2, 8, 3), 2, 2, 3));            // 2, 5
  EXPECT_TRUE(Is(ResolveSliceAxis(10, -3, INT64_MAX, 1), 7, 3, 1));   // the last three
  EXPECT_TRUE(Is(ResolveSliceAxis(10, INT64_MAX, INT64_MIN, -1), 9, 10, -1));  // reversed
  EXPECT_TRUE(Is(ResolveSliceAxis(10, 8, 2, -2), 8, 3, -2));          // 8, 6, 4
  EXPECT_TRUE(Is(ResolveSliceAxis(10, 5, 5, 1), 0, 0, 1));            // empty: begin 0
  EXPECT_TRUE(Is(ResolveSliceAxis(0, 0, 5, 1), 0, 0, 1));
}

TEST(SemanticsSlice, AStepBeyondTheDimSelectsOneElement) {
  EXPECT_TRUE(Is(ResolveSliceAxis(4, 1, 4, INT64_MAX), 1, 1, 4));
  EXPECT_TRUE(Is(ResolveSliceAxis(4, -1, INT64_MIN, INT64_MIN), 3, 1, -4));
}

TEST(SemanticsGemm, TransposesPickTheAxes) {
  constexpr GemmAxes plain = GemmAxesOf(false, false), both = GemmAxesOf(true, true);
  EXPECT_EQ(plain.a_m, 0u);
  EXPECT_EQ(plain.b_n, 1u);
  EXPECT_EQ(both.a_m, 1u);
  EXPECT_EQ(both.a_k, 0u);
  EXPECT_EQ(both.b_k, 1u);
  EXPECT_EQ(both.b_n, 0u);
}

TEST(SemanticsGemm, ResolvesDimsAndHowCBroadcasts) {
  const Shape c_row{5}, c_full{3, 5}, c_col{3, 1};
  const GemmShape s = ResolveGemm({4, 3}, {5, 4}, &c_row, true, true, "node 'g'");
  EXPECT_EQ(s.m, 3);
  EXPECT_EQ(s.k, 4);
  EXPECT_EQ(s.n, 5);
  EXPECT_EQ(s.c_row_stride, 0);
  EXPECT_EQ(s.c_col_stride, 1);
  const GemmShape full = ResolveGemm({3, 4}, {4, 5}, &c_full, false, false, "node 'g'");
  EXPECT_EQ(full.c_row_stride, 5);
  const GemmShape col = ResolveGemm({3, 4}, {4, 5}, &c_col, false, false, "node 'g'");
  EXPECT_EQ(col.c_row_stride, 1);
  EXPECT_EQ(col.c_col_stride, 0);
  EXPECT_EQ(ResolveGemm({3, 4}, {4, 5}, nullptr, false, false, "node 'g'").c_rows, 1);
}

TEST(SemanticsGemm, RefusesWithTheReason) {
  std::string error;
  EXPECT_EQ(GemmShapeOf({3, 4}, {5, 4}, nullptr, false, false, &error), std::nullopt);
  EXPECT_EQ(error, "inner dimensions do not match: op(A) is 3x4, op(B) is 5x4");
  const Shape bad_c{2, 5};
  EXPECT_EQ(GemmShapeOf({3, 4}, {4, 5}, &bad_c, false, false, &error), std::nullopt);
  EXPECT_EQ(error, "C [2,5] cannot be broadcast to [3,5]");
  try {
    ResolveGemm({3}, {3, 4}, nullptr, false, false, "node 'g'");
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), "node 'g': A [3] and B [3,4] must be 2-D");
  }
}

TEST(SemanticsMatMul, PromotesOneDOperandsAndBroadcastsTheBatch) {
  const MatMulShape s = ResolveMatMul({2, 1, 3, 4}, {5, 4, 6}, "node 'm'");
  EXPECT_EQ(s.m, 3);
  EXPECT_EQ(s.k, 4);
  EXPECT_EQ(s.n, 6);
  EXPECT_EQ(s.batch_a, (Shape{2, 1}));
  EXPECT_EQ(s.batch_b, (Shape{5}));
  EXPECT_EQ(s.batch, (Shape{2, 5}));
  EXPECT_EQ(s.y_shape, (Shape{2, 5, 3, 6}));
  EXPECT_EQ(ResolveMatMul({4}, {4}, "node 'm'").y_shape, Shape{});
  EXPECT_EQ(ResolveMatMul({4}, {2, 4, 3}, "node 'm'").y_shape, (Shape{2, 3}));
  EXPECT_EQ(ResolveMatMul({2, 3, 4}, {4}, "node 'm'").y_shape, (Shape{2, 3}));
}

TEST(SemanticsMatMul, RefusesWithTheReason) {
  std::string error;
  EXPECT_EQ(MatMulShapeOf({}, {3}, &error), std::nullopt);
  EXPECT_EQ(error, "MatMul inputs must have rank >= 1, got [] and [3]");
  EXPECT_EQ(MatMulShapeOf({2, 3}, {4, 5}, &error), std::nullopt);
  EXPECT_EQ(error, "inner dimensions do not match: A [2,3] and B [4,5]");
  EXPECT_EQ(MatMulShapeOf({2, 2, 3}, {3, 3, 5}, &error), std::nullopt);
  EXPECT_EQ(error, "batch dimensions of A [2,2,3] and B [3,3,5] do not broadcast");
}

}  // namespace
}  // namespace ferry::semantics
