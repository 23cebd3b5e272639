// The cpu NegativeLogLikelihoodLoss kernel against ref: random ranks (N, C, d1..d3), every reduction, weights or
// none, ignore_index in range and negative, float32/float64/float16, int32/int64 targets, opsets 13 and 22,
// threads 1/2; positions over several blocks; every target ignored (mean: NaN); Prepare and run-time errors.
#include "kernels/cpu/negative_log_likelihood_loss_test_util.h"

namespace ferry::testing {
namespace {

constexpr const char* kOp = "NegativeLogLikelihoodLoss";

TEST(CpuNegativeLogLikelihoodLoss, RandomConfigurationsMatchRef) {
  std::mt19937 rng(12);
  const std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kFloat, DataType::kFloat16};
  for (int i = 0; i < 90; ++i) {
    const LossCase c = RandomLossCase(rng, types, i);
    OpTest t = LossTest(kOp, i % 2 ? 22 : 13, c, rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuNegativeLogLikelihoodLoss, ManyBlocksAndThreadsMatchRef) {
  std::mt19937 rng(5);
  for (const Shape& xs : {Shape{3, 4, 40000}, Shape{2, 3, 100, 300}, Shape{50000, 7}}) {
    for (const char* reduction : {"none", "sum", "mean"}) {
      for (int threads : {1, 2}) {
        LossCase c{.input = xs, .weight = true, .reduction = reduction, .has_ignore = true, .ignore = 1,
                   .threads = threads};
        OpTest t = LossTest(kOp, 13, c, rng);
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
      }
    }
  }
}

TEST(CpuNegativeLogLikelihoodLoss, EveryTargetIgnoredAndEmpty) {
  std::mt19937 rng(6);
  LossCase c{.input = {2, 3, 4}, .reduction = "mean", .has_ignore = true, .ignore = -1};
  OpTest t = LossTest(kOp, 13, c, rng);
  t.inputs[1].value = Tensor(DataType::kInt64, {2, 4});
  std::fill(t.inputs[1].value.data<int64_t>(), t.inputs[1].value.data<int64_t>() + 8, int64_t{-1});
  const auto got = RunOn(t, {"cpu"}, true, 1);
  EXPECT_TRUE(std::isnan(got[0].second.data<float>()[0]));
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  for (const char* reduction : {"none", "sum"}) {
    LossCase e{.input = {0, 3, 2}, .reduction = reduction};
    EXPECT_TRUE(MatchesRef(LossTest(kOp, 13, e, rng), "cpu")) << reduction;
  }
}

TEST(CpuNegativeLogLikelihoodLoss, ErrorsNameTheNode) {
  std::mt19937 rng(7);
  LossCase c{.input = {2, 3, 4}, .weight = true};
  OpTest bad_target = LossTest(kOp, 13, c, rng);
  bad_target.inputs[1].value = Tensor(DataType::kInt64, {2, 5});
  OpTest bad_weight = LossTest(kOp, 13, c, rng);
  bad_weight.inputs[2].value = RandomTensor(DataType::kFloat, {4}, rng);
  OpTest out_of_range = LossTest(kOp, 13, c, rng);
  out_of_range.inputs[1].value.data<int64_t>()[3] = 3;
  for (const OpTest& t : {bad_target, bad_weight, out_of_range}) {
    try {
      RunOn(t, {"cpu"}, true, 1);
      ADD_FAILURE() << "expected an error: " << DescribeCase(t);
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ferry::testing
