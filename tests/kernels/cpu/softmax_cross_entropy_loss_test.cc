// The cpu SoftmaxCrossEntropyLoss kernel against ref: random ranks (N, C, d1..d3), every reduction, weights or none,
// ignore_index in range and negative, with and without the log_prob output, float32 (the AVX2 log-softmax, in
// float: tolerance 1e-5) and float64/float16 (ref's log-softmax in double), opsets 12 and 13, threads 1/2; rows
// and column blocks of many classes; edge values; the double path of float32 (--isa without AVX2); errors.
#include "kernels/cpu/negative_log_likelihood_loss_test_util.h"

namespace ferry::testing {
namespace {

constexpr const char* kOp = "SoftmaxCrossEntropyLoss";

OpTest SceTest(int64_t opset, const LossCase& c, std::mt19937& rng, bool log_prob, bool edges = false) {
  OpTest t = LossTest(kOp, opset, c, rng, edges, log_prob ? 2 : 1);
  if (c.dtype == DataType::kFloat) t.atol = 1e-5;  // float log-softmax against ref's double
  return t;
}

TEST(CpuSoftmaxCrossEntropyLoss, RandomConfigurationsMatchRef) {
  std::mt19937 rng(13);
  const std::vector<DataType> types = {DataType::kFloat, DataType::kDouble, DataType::kFloat, DataType::kFloat16};
  for (int i = 0; i < 90; ++i) {
    const LossCase c = RandomLossCase(rng, types, i);
    OpTest t = SceTest(i % 5 ? 13 : 12, c, rng, i % 2 == 0);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuSoftmaxCrossEntropyLoss, ManyClassesBlocksAndThreadsMatchRef) {
  std::mt19937 rng(5);
  for (const Shape& xs : {Shape{3, 1000, 70}, Shape{2, 5, 9000}, Shape{4000, 37}, Shape{3, 3000}}) {
    for (const char* reduction : {"none", "mean"}) {
      for (int threads : {1, 2}) {
        LossCase c{.input = xs, .weight = threads == 2, .reduction = reduction, .has_ignore = true, .ignore = 2,
                   .threads = threads};
        OpTest t = SceTest(13, c, rng, threads == 1);
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
      }
    }
  }
}

TEST(CpuSoftmaxCrossEntropyLoss, EdgeValuesMatchRef) {
  std::mt19937 rng(9);
  for (const Shape& xs : {Shape{6, 20}, Shape{3, 9, 13}}) {
    LossCase c{.input = xs, .reduction = "none"};
    EXPECT_TRUE(MatchesRef(SceTest(13, c, rng, true, true), "cpu")) << ShapeToString(xs);
  }
}

TEST(CpuSoftmaxCrossEntropyLoss, Float32WithoutAvx2MatchesRef) {
  std::mt19937 rng(10);
  LossCase c{.input = {3, 6, 5}, .weight = true, .reduction = "sum", .has_ignore = true, .ignore = -5};
  OpTest t = SceTest(13, c, rng, true);
  const auto cpu = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "none")->Run(Feeds(t));
  const auto ref = RunOn(t, {"ref"}, true, 1);
  ASSERT_EQ(cpu.size(), ref.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(TensorsClose(cpu[i].second, ref[i].second, t.rtol, t.atol)) << cpu[i].first;
  }
}

TEST(CpuSoftmaxCrossEntropyLoss, ErrorsNameTheNode) {
  std::mt19937 rng(7);
  LossCase c{.input = {2, 3, 4}, .weight = true};
  OpTest bad_target = SceTest(13, c, rng, false);
  bad_target.inputs[1].value = Tensor(DataType::kInt64, {3, 4});
  OpTest bad_rank = SceTest(13, c, rng, false);
  bad_rank.inputs[0].value = RandomTensor(DataType::kFloat, {2}, rng);
  bad_rank.inputs[1].value = Tensor(DataType::kInt64, {});
  OpTest out_of_range = SceTest(13, c, rng, true);
  out_of_range.inputs[1].value.data<int64_t>()[5] = -1;
  for (const OpTest& t : {bad_target, bad_rank, out_of_range}) {
    try {
      RunOn(t, {"cpu"}, true, 1);
      ADD_FAILURE() << "expected an error: " << DescribeCase(t);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ferry::testing
