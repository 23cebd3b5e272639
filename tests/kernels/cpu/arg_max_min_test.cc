// The cpu ArgMax and ArgMin kernels against ref: random ranks and axes (negative too), keepdims 0/1,
// select_last_index, every opset, float32 with edge values (NaN, ±inf, ±0) and ties, int32/int64, long rows and
// wide columns (the vector paths and their tails), threads 1/2, empty tensors, Prepare errors and refused dtypes.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

TEST(CpuArgMaxMin, RandomConfigurationsMatchRef) {
  std::mt19937 rng(42);
  const int64_t opsets[] = {1, 11, 12, 13};
  for (int i = 0; i < 80; ++i) {
    const int64_t opset = opsets[i % 4];
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 60 : 11));
    const DataType dt = i % 5 == 4 ? (i % 10 == 4 ? DataType::kInt32 : DataType::kInt64) : DataType::kFloat;
    // Few distinct values make ties common; edges bring NaN, ±inf and ±0.
    Tensor x = i % 3 == 0 ? RandomTensor(dt, xs, rng, -3, 3) : RandomTensor(dt, xs, rng, -1, 1, i % 3 == 1);
    for (const char* op : {"ArgMax", "ArgMin"}) {
      OpTest t{.op = op, .opset = opset, .inputs = {In("x", x)}, .threads = 1 + i % 2};
      t.attributes.push_back(Int("axis", Pick(rng, -rank, rank - 1)));
      t.attributes.push_back(Int("keepdims", Pick(rng, 0, 1)));
      if (opset >= 12) t.attributes.push_back(Int("select_last_index", Pick(rng, 0, 1)));
      EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
    }
  }
}

TEST(CpuArgMaxMin, LongRowsAndWideColumnsMatchRef) {
  std::mt19937 rng(7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Shape& xs : {Shape{3, 1000}, Shape{2, 37, 129}, Shape{1, 5, 1000}}) {
    for (int variant = 0; variant < 4; ++variant) {
      Tensor x = RandomTensor(DataType::kFloat, xs, rng, -2, 2);
      float* p = x.data<float>();
      if (variant == 1) p[x.size() / 2] = nan, p[x.size() - 1] = nan;  // NaN in the middle and the tail
      if (variant == 2) std::fill(p, p + x.size(), 0.5f);              // every element ties
      if (variant == 3) p[0] = nan;
      for (const char* op : {"ArgMax", "ArgMin"}) {
        for (int64_t axis : {-1, 1}) {
          for (int64_t last : {0, 1}) {
            for (int threads : {1, 2}) {
              OpTest t{.op = op,
                       .opset = 13,
                       .inputs = {In("x", x)},
                       .attributes = {Int("axis", axis), Int("select_last_index", last)},
                       .threads = threads};
              EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t) << " variant " << variant;
            }
          }
        }
      }
    }
  }
}

TEST(CpuArgMaxMin, EmptyTensors) {
  std::mt19937 rng(3);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    OpTest t{.op = op, .opset = 13, .inputs = {In("x", RandomTensor(DataType::kFloat, {0, 4}, rng))},
             .attributes = {Int("axis", 1)}};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
  }
}

TEST(CpuArgMaxMin, PrepareErrorsNameTheNode) {
  std::mt19937 rng(1);
  OpTest empty_axis{.op = "ArgMax",
                    .opset = 13,
                    .inputs = {In("x", RandomTensor(DataType::kFloat, {3, 0}, rng))},
                    .attributes = {Int("axis", 1)}};
  try {
    RunOn(empty_axis, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for the arg max of an empty axis";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("empty axis 1"), std::string::npos) << e.what();
  }
  OpTest bad_axis{.op = "ArgMin",
                  .opset = 13,
                  .inputs = {In("x", RandomTensor(DataType::kFloat, {3, 2}, rng))},
                  .attributes = {Int("axis", 2)}};
  EXPECT_THROW(RunOn(bad_axis, {"cpu"}, true, 1), InvalidModelError);  // shape inference rejects it first
}

TEST(CpuArgMaxMin, RefusedDtypesFallBackToRef) {
  std::mt19937 rng(2);
  OpTest f64{.op = "ArgMax", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32, int32, int64}");
}

}  // namespace
}  // namespace ferry::testing
