// The cpu CumProd kernel (CumSum's, with products) against ref: random ranks and axes (negative too, int32 or int64,
// constant or a runtime input), exclusive and reverse, float32/float64 (the same bits: double accumulation in ref's
// order) with edge values, int32/int64 (wrapping), the last axis and strided axes wider than one column range,
// threads 1/2, empty tensors, Prepare errors and refused dtypes.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor Uint32Tensor(const Shape& shape) {  // uint32: a CumSum/CumProd type the cpu kernel leaves to ref
  Tensor t(DataType::kUint32, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<uint32_t>()[i] = static_cast<uint32_t>(3 * i + 1);
  return t;
}

OpTest MakeCase(Tensor x, int64_t axis, DataType axis_dt, bool runtime_axis, int64_t exclusive, int64_t reverse,
                int threads) {
  Tensor a(axis_dt, {1});
  if (axis_dt == DataType::kInt64) {
    a.data<int64_t>()[0] = axis;
  } else {
    a.data<int32_t>()[0] = static_cast<int32_t>(axis);
  }
  OpTest t{.op = "CumProd",
           .opset = 26,
           .inputs = {In("x", std::move(x)), runtime_axis ? In("axis", a) : Const("axis", a)},
           .attributes = {Int("exclusive", exclusive), Int("reverse", reverse)},
           .threads = threads};
  t.rtol = 0, t.atol = 0;
  return t;
}

TEST(CpuCumProd, RandomConfigurationsMatchRef) {
  std::mt19937 rng(26);
  const DataType types[] = {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64};
  for (int i = 0; i < 80; ++i) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 40 : 8));
    const DataType dt = types[i % 4];
    Tensor x = IsFloatingPoint(dt) ? RandomTensor(dt, xs, rng, 0.5, 1.5, i % 5 == 0) : RandomTensor(dt, xs, rng, -3, 3);
    OpTest t = MakeCase(x, Pick(rng, -rank, rank - 1), i % 3 ? DataType::kInt64 : DataType::kInt32, i % 7 == 0,
                        Pick(rng, 0, 1), Pick(rng, 0, 1), 1 + i % 2);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuCumProd, LongAndWideAxesMatchRef) {
  std::mt19937 rng(3);
  for (const Shape& xs : {Shape{3, 3000}, Shape{1, 30, 2500}, Shape{2, 7, 1030}}) {
    for (DataType dt : {DataType::kFloat, DataType::kDouble, DataType::kInt64}) {
      Tensor x = dt == DataType::kInt64 ? RandomTensor(dt, xs, rng, -3, 3) : RandomTensor(dt, xs, rng, 0.9, 1.1);
      for (int64_t exclusive : {0, 1}) {
        for (int64_t reverse : {0, 1}) {
          OpTest t = MakeCase(x, 1, DataType::kInt64, false, exclusive, reverse, 2);
          EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
        }
      }
    }
  }
  Tensor big(DataType::kInt32, {5});  // integers wrap like ref
  const int32_t v[] = {INT32_MAX, 3, -7, INT32_MIN, 5};
  std::copy(std::begin(v), std::end(v), big.data<int32_t>());
  EXPECT_TRUE(MatchesRef(MakeCase(big, 0, DataType::kInt64, false, 0, 0, 1), "cpu"));
}

TEST(CpuCumProd, EmptyTensors) {
  std::mt19937 rng(4);
  for (const Shape& xs : {Shape{0, 3}, Shape{3, 0}, Shape{2, 0, 4}}) {
    OpTest t = MakeCase(RandomTensor(DataType::kFloat, xs, rng), 1, DataType::kInt64, false, 0, 0, 1);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(xs);
  }
}

TEST(CpuCumProd, PrepareErrorsNameTheNode) {
  std::mt19937 rng(1);
  OpTest bad = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), -3, DataType::kInt64, false, 0, 0, 1);
  try {
    RunOn(bad, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for axis -3 of a rank-2 input";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
  }
  OpTest runtime = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), 2, DataType::kInt32, true, 0, 0, 1);
  EXPECT_THROW(RunOn(runtime, {"cpu"}, true, 1), InvalidArgumentError);
  OpTest scalar = MakeCase(RandomTensor(DataType::kFloat, {}, rng), 0, DataType::kInt64, false, 0, 0, 1);
  EXPECT_THROW(RunOn(scalar, {"cpu"}, true, 1), InvalidArgumentError);
}

TEST(CpuCumProd, RefusedDtypesFallBackToRef) {
  ExpectRefusedAndFallsBack(MakeCase(Uint32Tensor({2, 3}), 1, DataType::kInt64, false, 0, 0, 1),
                            "supports T in {float32, float64, int32, int64}");
}

}  // namespace
}  // namespace ferry::testing
