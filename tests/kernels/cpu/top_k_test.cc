// The cpu TopK kernel against ref: random ranks, axes (negative too), k from 0 to n (small k takes the one-pass
// buffer, large k the partial sort), largest 0/1, every opset (k attribute at 1, K input from 10: constant or a
// runtime input, int32 or int64), float32 with edge values and ties, int32/int64, strided axes, threads 1/2, empty
// tensors, Prepare errors and refused dtypes.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor KTensor(int64_t k, DataType dt = DataType::kInt64) {
  Tensor t(dt, {1});
  if (dt == DataType::kInt64) {
    t.data<int64_t>()[0] = k;
  } else {
    t.data<int32_t>()[0] = static_cast<int32_t>(k);
  }
  return t;
}

// A TopK case: opset 1 takes k as the attribute, later opsets as input K (constant unless `runtime_k`).
OpTest MakeCase(int64_t opset, Tensor x, int64_t k, int64_t axis, int64_t largest, bool runtime_k, int threads) {
  OpTest t{.op = "TopK", .opset = opset, .inputs = {In("x", std::move(x))}, .num_outputs = 2, .threads = threads};
  t.attributes.push_back(Int("axis", axis));
  if (opset < 10) {
    t.attributes.push_back(Int("k", k));
  } else {
    t.inputs.push_back(runtime_k ? In("k", KTensor(k)) : Const("k", KTensor(k)));
  }
  if (opset >= 11) t.attributes.push_back(Int("largest", largest));
  return t;
}

TEST(CpuTopK, RandomConfigurationsMatchRef) {
  std::mt19937 rng(11);
  const int64_t opsets[] = {1, 10, 11, 24};
  for (int i = 0; i < 80; ++i) {
    const int64_t opset = opsets[i % 4];
    const int64_t rank = Pick(rng, 1, 3);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank == 1 ? 300 : 40));
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const int64_t n = xs[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
    const int64_t k = Pick(rng, 0, 2) == 0 ? Pick(rng, 0, n) : Pick(rng, 1, std::min<int64_t>(n, 5));
    const DataType dt = opset >= 11 && i % 5 == 4 ? (i % 10 == 4 ? DataType::kInt32 : DataType::kInt64)
                                                  : DataType::kFloat;
    Tensor x = i % 3 == 0 ? RandomTensor(dt, xs, rng, -4, 4) : RandomTensor(dt, xs, rng, -1, 1, i % 3 == 1);
    OpTest t = MakeCase(opset, x, k, axis, Pick(rng, 0, 1), i % 7 == 0, 1 + i % 2);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t) << " k " << k;
  }
}

TEST(CpuTopK, ClassScoresMatchRef) {
  std::mt19937 rng(5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int variant = 0; variant < 4; ++variant) {
    Tensor x = RandomTensor(DataType::kFloat, {3, 1000}, rng, -3, 3);
    float* p = x.data<float>();
    if (variant == 1) p[500] = nan, p[999] = nan, p[1200] = nan;   // NaN ranks first (largest) or last
    if (variant == 2) std::fill(p, p + x.size(), 1.0f);            // ties: lower indices first
    if (variant == 3) for (int64_t i = 0; i < x.size(); ++i) p[i] = static_cast<float>(i % 7);
    for (int64_t k : {1, 5, 10, 100, 1000}) {
      for (int64_t largest : {0, 1}) {
        for (int threads : {1, 2}) {
          OpTest t = MakeCase(11, x, k, -1, largest, false, threads);
          EXPECT_TRUE(MatchesRef(t, "cpu")) << "variant " << variant << " k " << k << " largest " << largest;
        }
      }
    }
  }
}

TEST(CpuTopK, Int32KAndEmptyTensors) {
  std::mt19937 rng(3);
  OpTest t{.op = "TopK",
           .opset = 11,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {4, 50}, rng)), Const("k", KTensor(3, DataType::kInt32))},
           .num_outputs = 2};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  OpTest empty = MakeCase(11, RandomTensor(DataType::kFloat, {0, 6}, rng), 2, 1, 1, false, 1);
  EXPECT_TRUE(MatchesRef(empty, "cpu"));
  OpTest k0 = MakeCase(11, RandomTensor(DataType::kFloat, {3, 6}, rng), 0, 1, 1, false, 1);
  EXPECT_TRUE(MatchesRef(k0, "cpu"));
}

TEST(CpuTopK, PrepareErrorsNameTheNode) {
  std::mt19937 rng(1);
  OpTest too_big = MakeCase(11, RandomTensor(DataType::kFloat, {2, 4}, rng), 5, 1, 1, false, 1);
  try {
    RunOn(too_big, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for k=5 of 4 elements";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("k=5"), std::string::npos) << e.what();
  }
  OpTest runtime = MakeCase(11, RandomTensor(DataType::kFloat, {2, 4}, rng), -1, 1, 1, true, 1);
  EXPECT_THROW(RunOn(runtime, {"cpu"}, true, 1), InvalidArgumentError);
  OpTest bad_axis = MakeCase(11, RandomTensor(DataType::kFloat, {2, 4}, rng), 1, 2, 1, false, 1);
  EXPECT_THROW(RunOn(bad_axis, {"cpu"}, true, 1), InvalidModelError);  // shape inference rejects it first
}

TEST(CpuTopK, RefusedDtypesFallBackToRef) {
  std::mt19937 rng(2);
  OpTest f64 = MakeCase(11, RandomTensor(DataType::kDouble, {2, 5}, rng), 2, 1, 1, false, 1);
  ExpectRefusedAndFallsBack(f64, "supports T in {float32, int32, int64}");
}

}  // namespace
}  // namespace ferry::testing
