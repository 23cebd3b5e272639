// The cpu CumSum kernel against ref: random ranks and axes (negative too, int32 or int64, constant or a runtime
// input), exclusive and reverse, opsets 11 and 14, float32/float64 with edge values, int32/int64 (wrapping), the last
// axis and strided axes wider than one column range, threads 1/2, empty tensors, Prepare errors and refused dtypes.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor Uint32Tensor(const Shape& shape) {  // uint32: a CumSum/CumProd type the cpu kernel leaves to ref
  Tensor t(DataType::kUint32, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<uint32_t>()[i] = static_cast<uint32_t>(3 * i + 1);
  return t;
}

Tensor AxisTensor(int64_t axis, DataType dt) {
  Tensor t(dt, {});
  if (dt == DataType::kInt64) {
    t.data<int64_t>()[0] = axis;
  } else {
    t.data<int32_t>()[0] = static_cast<int32_t>(axis);
  }
  return t;
}

OpTest MakeCase(int64_t opset, Tensor x, int64_t axis, DataType axis_dt, bool runtime_axis, int64_t exclusive,
                int64_t reverse, int threads) {
  Tensor a = AxisTensor(axis, axis_dt);
  return OpTest{.op = "CumSum",
                .opset = opset,
                .inputs = {In("x", std::move(x)), runtime_axis ? In("axis", a) : Const("axis", a)},
                .attributes = {Int("exclusive", exclusive), Int("reverse", reverse)},
                .threads = threads};
}

TEST(CpuCumSum, RandomConfigurationsMatchRef) {
  std::mt19937 rng(14);
  for (int i = 0; i < 80; ++i) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 50 : 9));
    const DataType dt = i % 4 == 3   ? (i % 8 == 3 ? DataType::kInt32 : DataType::kInt64)
                        : i % 4 == 1 ? DataType::kDouble
                                     : DataType::kFloat;
    Tensor x = IsFloatingPoint(dt) ? RandomTensor(dt, xs, rng, -1, 1, i % 5 == 0) : RandomTensor(dt, xs, rng, -99, 99);
    OpTest t = MakeCase(i % 2 ? 14 : 11, x, Pick(rng, -rank, rank - 1), i % 3 ? DataType::kInt64 : DataType::kInt32,
                        i % 7 == 0, Pick(rng, 0, 1), Pick(rng, 0, 1), 1 + i % 2);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuCumSum, LongAndWideAxesMatchRef) {
  std::mt19937 rng(3);
  for (const Shape& xs : {Shape{3, 5000}, Shape{1, 40, 2500}, Shape{2, 7, 1030}}) {
    Tensor x = RandomTensor(xs[1] == 40 ? DataType::kDouble : DataType::kFloat, xs, rng, -1, 1);
    for (int64_t axis : {1, -1}) {
      for (int64_t exclusive : {0, 1}) {
        for (int64_t reverse : {0, 1}) {
          for (int threads : {1, 2}) {
            OpTest t = MakeCase(14, x, axis, DataType::kInt64, false, exclusive, reverse, threads);
            t.rtol = 0, t.atol = 0;  // double accumulation in ref's order: the same bits
            EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
          }
        }
      }
    }
  }
  Tensor big(DataType::kInt64, {4});  // integers wrap like ref
  const int64_t v[] = {INT64_MAX, 1, INT64_MIN, -5};
  std::copy(std::begin(v), std::end(v), big.data<int64_t>());
  EXPECT_TRUE(MatchesRef(MakeCase(14, big, 0, DataType::kInt64, false, 0, 0, 1), "cpu"));
}

TEST(CpuCumSum, EmptyTensors) {
  std::mt19937 rng(4);
  for (const Shape& xs : {Shape{0, 3}, Shape{3, 0}, Shape{2, 0, 4}}) {
    OpTest t = MakeCase(14, RandomTensor(DataType::kFloat, xs, rng), 1, DataType::kInt64, false, 0, 0, 1);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(xs);
  }
}

TEST(CpuCumSum, PrepareErrorsNameTheNode) {
  std::mt19937 rng(1);
  OpTest bad = MakeCase(14, RandomTensor(DataType::kFloat, {2, 3}, rng), 2, DataType::kInt64, false, 0, 0, 1);
  try {
    RunOn(bad, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for axis 2 of a rank-2 input";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
  }
  OpTest runtime = MakeCase(14, RandomTensor(DataType::kFloat, {2, 3}, rng), -3, DataType::kInt32, true, 0, 0, 1);
  EXPECT_THROW(RunOn(runtime, {"cpu"}, true, 1), InvalidArgumentError);
  OpTest scalar = MakeCase(14, RandomTensor(DataType::kFloat, {}, rng), 0, DataType::kInt64, false, 0, 0, 1);
  EXPECT_THROW(RunOn(scalar, {"cpu"}, true, 1), InvalidArgumentError);
}

TEST(CpuCumSum, RefusedDtypesFallBackToRef) {
  ExpectRefusedAndFallsBack(MakeCase(14, Uint32Tensor({2, 3}), 1, DataType::kInt64, false, 0, 0, 1),
                            "supports T in {float32, float64, int32, int64}");
}

}  // namespace
}  // namespace ferry::testing
