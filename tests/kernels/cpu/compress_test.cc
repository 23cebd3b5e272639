// The cpu Compress kernel against ref (bit for bit): with and without an axis (negative too), conditions shorter
// than the axis, all false and all true, 1-, 2- and 8-byte types and bool, threads 1/2 on large copies, empty
// inputs; errors (a true entry past the axis, a condition that is not 1-D bool); strings refused.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor Condition(int64_t n, std::mt19937& rng, int mode) {  // mode 0: random, 1: all false, 2: all true
  Tensor c(DataType::kBool, {n});
  for (int64_t i = 0; i < n; ++i) c.data<bool>()[i] = mode == 2 || (mode == 0 && Pick(rng, 0, 2) != 0);
  return c;
}

OpTest MakeCase(Tensor x, Tensor cond, bool has_axis, int64_t axis, int threads) {
  OpTest t{.op = "Compress", .opset = 11, .inputs = {In("x", std::move(x)), In("condition", std::move(cond))},
           .threads = threads};
  if (has_axis) t.attributes.push_back(Int("axis", axis));
  t.rtol = 0, t.atol = 0;
  return t;
}

TEST(CpuCompress, RandomConfigurationsMatchRef) {
  std::mt19937 rng(9);
  const DataType types[] = {DataType::kFloat, DataType::kInt8, DataType::kFloat16, DataType::kInt64, DataType::kBool};
  for (int i = 0; i < 80; ++i) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, 7));
    const bool has_axis = i % 4 != 0;
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const int64_t dim = has_axis ? xs[static_cast<size_t>(axis < 0 ? axis + rank : axis)] : ShapeElementCount(xs);
    const int64_t len = Pick(rng, 0, dim);  // shorter than the axis, or as long
    OpTest t = MakeCase(RandomTensor(types[i % 5], xs, rng, -50, 50), Condition(len, rng, i % 11 == 0 ? 1 : 0),
                        has_axis, axis, 1 + i % 2);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuCompress, LargeCopiesOnTwoThreadsMatchRef) {
  std::mt19937 rng(4);
  for (const Shape& xs : {Shape{300, 2000}, Shape{40, 30, 400}, Shape{600000}}) {
    for (int64_t axis : {0, -1}) {
      const int64_t dim = xs[axis == 0 ? 0 : xs.size() - 1];
      for (int mode : {0, 2}) {
        OpTest t = MakeCase(RandomTensor(DataType::kFloat, xs, rng), Condition(dim, rng, mode), true, axis, 2);
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
      }
    }
    OpTest flat = MakeCase(RandomTensor(DataType::kInt64, xs, rng, -9, 9), Condition(ShapeElementCount(xs) / 2, rng, 0),
                           false, 0, 2);
    EXPECT_TRUE(MatchesRef(flat, "cpu")) << DescribeCase(flat);
  }
}

TEST(CpuCompress, EmptyInputs) {
  std::mt19937 rng(5);
  EXPECT_TRUE(MatchesRef(MakeCase(RandomTensor(DataType::kFloat, {0, 3}, rng), Condition(2, rng, 2), true, 1, 1),
                         "cpu"));
  EXPECT_TRUE(MatchesRef(MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), Condition(0, rng, 0), false, 0, 1),
                         "cpu"));
}

TEST(CpuCompress, ErrorsNameTheNode) {
  std::mt19937 rng(6);
  Tensor past = Condition(4, rng, 1);
  past.data<bool>()[3] = true;
  OpTest too_long = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), past, true, 1, 1);
  OpTest not_bool = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), Condition(2, rng, 2), true, 0, 1);
  not_bool.inputs[1].value = Tensor(DataType::kBool, {1, 2});
  OpTest bad_axis = MakeCase(RandomTensor(DataType::kFloat, {2, 3}, rng), Condition(2, rng, 2), true, 2, 1);
  for (const OpTest& t : {too_long, not_bool, bad_axis}) {
    try {
      RunOn(t, {"cpu"}, true, 1);
      ADD_FAILURE() << "expected an error: " << DescribeCase(t);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    }
  }
}

TEST(CpuCompress, StringsFallBackToRef) {
  std::mt19937 rng(7);
  Tensor s(DataType::kString, {3});
  for (int i = 0; i < 3; ++i) s.data<std::string>()[i] = "s" + std::to_string(i);
  ExpectRefusedAndFallsBack(MakeCase(s, Condition(3, rng, 2), true, 0, 1), "supports T in");
}

}  // namespace
}  // namespace ferry::testing
