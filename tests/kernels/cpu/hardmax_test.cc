// The cpu Hardmax kernel against ref: random ranks and axes (negative too), opset 13 (one axis) and opsets 1/11
// (2-D coercion at `axis`), edge values (NaN first or later, ±inf, ±0), ties, long rows and wide columns,
// threads 1/2, empty tensors and refused dtypes.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

TEST(CpuHardmax, RandomConfigurationsMatchRef) {
  std::mt19937 rng(99);
  const int64_t opsets[] = {13, 13, 11, 1};
  for (int i = 0; i < 60; ++i) {
    const int64_t opset = opsets[i % 4];
    const int64_t rank = Pick(rng, opset == 13 ? 0 : 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 70 : 9));
    Tensor x = i % 3 == 0 ? RandomTensor(DataType::kFloat, xs, rng, -3, 3) : RandomTensor(DataType::kFloat, xs, rng,
                                                                                           -1, 1, i % 3 == 1);
    if (i % 3 == 0) {
      for (int64_t j = 0; j < x.size(); ++j) x.data<float>()[j] = std::round(x.data<float>()[j]);  // ties
    }
    OpTest t{.op = "Hardmax", .opset = opset, .inputs = {In("x", x)}, .threads = 1 + i % 2};
    if (rank > 0 && Pick(rng, 0, 3) > 0) t.attributes.push_back(Int("axis", Pick(rng, -rank, rank - 1)));
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuHardmax, LongRowsWideColumnsAndNaN) {
  std::mt19937 rng(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int variant = 0; variant < 3; ++variant) {
    Tensor x = RandomTensor(DataType::kFloat, {3, 37, 1001}, rng, -5, 5);
    if (variant == 1) x.data<float>()[0] = nan, x.data<float>()[1001 * 37 + 500] = nan;
    if (variant == 2) std::fill(x.data<float>(), x.data<float>() + x.size(), 2.0f);
    for (int64_t axis : {-1, 1}) {
      for (int threads : {1, 2}) {
        OpTest t{.op = "Hardmax", .inputs = {In("x", x)}, .attributes = {Int("axis", axis)}, .threads = threads};
        EXPECT_TRUE(MatchesRef(t, "cpu")) << "variant " << variant << " axis " << axis;
      }
    }
  }
}

TEST(CpuHardmax, EmptyAndRefused) {
  std::mt19937 rng(3);
  OpTest empty{.op = "Hardmax", .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 0, 3}, rng))}};
  EXPECT_TRUE(MatchesRef(empty, "cpu"));
  OpTest bad_axis{.op = "Hardmax",
                  .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3}, rng))},
                  .attributes = {Int("axis", 2)}};
  EXPECT_THROW(RunOn(bad_axis, {"cpu"}, true, 1), InvalidArgumentError);
  OpTest f64{.op = "Hardmax", .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
