// cpu Concat against ref, bit for bit: random ranks, axes (negative too), input counts, empty inputs, every
// byte-sized type, constant and fed inputs, large outputs on 2 threads (split by rows and by byte ranges).
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

OpTest ConcatTest(const std::vector<Tensor>& ins, int64_t axis, int threads, std::mt19937& rng, int64_t opset = 13) {
  OpTest t{.op = "Concat", .opset = opset, .threads = threads};
  for (size_t i = 0; i < ins.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    t.inputs.push_back(Pick(rng, 0, 3) == 0 ? Const(name, ins[i]) : In(name, ins[i]));
  }
  t.attributes.push_back(Int("axis", axis));
  return t;
}

TEST(CpuConcat, RandomConfigurationsMatchRef) {
  std::mt19937 rng(301);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape base = RandomShape(rng, rank, 1, rank <= 2 ? 40 : 9);
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const int64_t a = axis < 0 ? axis + rank : axis;
    const DataType dt = CopyTypes()[static_cast<size_t>(it) % CopyTypes().size()];
    std::vector<Tensor> ins;
    const int64_t n = Pick(rng, 1, 5);
    for (int64_t k = 0; k < n; ++k) {
      Shape s = base;
      s[static_cast<size_t>(a)] = Pick(rng, 0, 6) == 0 ? 0 : Pick(rng, 1, 12);
      ins.push_back(RandomBits(dt, s, rng));
    }
    const int64_t opset = std::vector<int64_t>{4, 11, 13}[static_cast<size_t>(Pick(rng, 0, 2))];
    const int64_t attr_axis = opset < 11 ? a : axis;
    EXPECT_TRUE(BitExactOnCpu(ConcatTest(ins, attr_axis, static_cast<int>(Pick(rng, 1, 2)), rng, opset)))
        << DataTypeName(dt) << ShapeToString(base) << " axis " << axis << " inputs " << n;
  }
}

TEST(CpuConcat, LargeOutputsOnTwoThreads) {
  std::mt19937 rng(302);
  struct Case {
    Shape a, b;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{200000}, {100001}, 0},          // one row: a memcpy per input
      {{3, 50000}, {3, 30001}, 1},      // few long rows: split by byte ranges
      {{2, 3, 40000}, {2, 5, 40000}, 1},
      {{20000, 5}, {20000, 3}, 1},      // many short rows: split by rows
      {{64, 32, 32}, {64, 32, 32}, 0},
      {{8, 16, 30, 30}, {8, 48, 30, 30}, 1}};
  for (const Case& c : cases) {
    for (DataType dt : {DataType::kFloat, DataType::kUint8, DataType::kInt64}) {
      const std::vector<Tensor> ins = {RandomBits(dt, c.a, rng), RandomBits(dt, c.b, rng)};
      EXPECT_TRUE(BitExactOnCpu(ConcatTest(ins, c.axis, 2, rng))) << ShapeToString(c.a) << ShapeToString(c.b);
    }
  }
}

TEST(CpuConcat, EmptyOutputsAndDefaultAxisOfOpset1) {
  std::mt19937 rng(303);
  EXPECT_TRUE(BitExactOnCpu(ConcatTest({RandomBits(DataType::kFloat, {0, 3}, rng),
                                        RandomBits(DataType::kFloat, {0, 2}, rng)}, 1, 1, rng)));
  EXPECT_TRUE(BitExactOnCpu(ConcatTest({RandomBits(DataType::kFloat, {2, 0}, rng),
                                        RandomBits(DataType::kFloat, {2, 0}, rng)}, 1, 1, rng)));
  OpTest t{.op = "Concat", .opset = 1,
           .inputs = {In("a", RandomBits(DataType::kFloat, {2, 3}, rng)),
                      In("b", RandomBits(DataType::kFloat, {2, 4}, rng))}};
  EXPECT_TRUE(BitExactOnCpu(t));
}

TEST(CpuConcat, MismatchedShapesAreInvalidArguments) {
  std::mt19937 rng(304);
  OpTest t{.op = "Concat", .opset = 13,
           .inputs = {In("a", RandomBits(DataType::kFloat, {2, 3}, rng)),
                      In("b", RandomBits(DataType::kFloat, {3, 3}, rng))},
           .attributes = {Int("axis", 1)}};
  ExpectSameErrorAsRef(t, ErrorCategory::kInvalidArgument);
}

TEST(CpuConcat, StringsFallBackToRef) {
  Tensor a(DataType::kString, {2}), b(DataType::kString, {1});
  a.strings()[0] = "x";
  b.strings()[0] = "y";
  OpTest t{.op = "Concat", .opset = 13, .inputs = {In("a", a), In("b", b)}, .attributes = {Int("axis", 0)}};
  ExpectRefusedAndFallsBack(t, "string");
}

}  // namespace
}  // namespace ferry::testing::glue
