// The cpu Swish kernels against ref: float32 with edge values (NaN, ±inf, ±0, large magnitudes), default and given
// alpha (negative and zero included), on every ISA variant (the vector ones within the harness tolerance through
// simd_kernels.inc's Sigmoid, the scalar one bit for bit), threads 1 and 2, sizes that leave SIMD tails and cross the
// threading threshold; a type cpu leaves to ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

OpTest SwishTest(const Shape& shape, float alpha, bool with_alpha, int threads, std::mt19937& rng) {
  OpTest t{.op = "Swish",
           .opset = 24,
           .inputs = {In("x", MapRandom(DataType::kFloat, shape, rng, -20, 20))},
           .threads = threads};
  if (with_alpha) t.attributes = {Float("alpha", alpha)};
  return t;
}

TEST(CpuSwish, MatchesRef) {
  std::mt19937 rng(111);
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{7}, Shape{33}, Shape{3, 1023}, Shape{70001}}) {
    for (int a = 0; a < 4; ++a) {
      const float alphas[] = {1.0f, 1.702f, -0.5f, 0.0f};
      OpTest t = SwishTest(shape, alphas[a], a > 0, 1 + a % 2, rng);
      EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_swish", ".24")) << ShapeToString(shape) << " alpha " << alphas[a];
      t.rtol = 0;
      t.atol = 0;
      EXPECT_TRUE(MatchesRefWithKernel(t, kEwScalar.isa, "cpu.f32_swish__scalar.24")) << "scalar, exactly";
    }
  }
}

TEST(CpuSwish, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  OpTest t{.op = "Swish",
           .opset = 24,
           .inputs = {In("x", Tensor::FromVector<float>(DataType::kFloat, {6}, {0.0f, -0.0f, inf, nan, -100, 100}))}};
  EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_swish", ".24"));
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const float* y = out[0].second.data<float>();
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[2], inf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[5], 100.0f);
  EXPECT_LE(std::fabs(y[4]), 1e-40f);
}

TEST(CpuSwish, Float64FallsBackToRef) {
  std::mt19937 rng(112);
  ExpectRefusedAndFallsBack(
      {.op = "Swish", .opset = 24, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}}, "float64");
}

}  // namespace
}  // namespace ferry::testing
