// cpu Gather against ref, bit for bit: random data ranks, axes (negative too), index ranks and types, negative
// indices, every byte-sized type, large gathers on 2 threads, empty tensors, out-of-range indices.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

Tensor RandomIndices(const Shape& shape, int64_t dim, bool int64, std::mt19937& rng) {
  Tensor t(int64 ? DataType::kInt64 : DataType::kInt32, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const int64_t v = Pick(rng, -dim, dim - 1);
    if (int64) {
      t.data<int64_t>()[i] = v;
    } else {
      t.data<int32_t>()[i] = static_cast<int32_t>(v);
    }
  }
  return t;
}

OpTest GatherTest(const Tensor& data, const Tensor& indices, int64_t axis, int threads, bool const_indices) {
  return {.op = "Gather",
          .opset = 13,
          .inputs = {In("data", data), const_indices ? Const("indices", indices) : In("indices", indices)},
          .attributes = {Int("axis", axis)},
          .threads = threads};
}

TEST(CpuGather, RandomConfigurationsMatchRef) {
  std::mt19937 rng(401);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 4);
    const Shape shape = RandomShape(rng, rank, 1, rank <= 2 ? 30 : 8);
    const int64_t axis = Pick(rng, -rank, rank - 1);
    const int64_t dim = shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
    const Shape ishape = RandomShape(rng, Pick(rng, 0, 3), it % 15 == 0 ? 0 : 1, 5);
    const DataType dt = CopyTypes()[static_cast<size_t>(it) % CopyTypes().size()];
    const OpTest t = GatherTest(RandomBits(dt, shape, rng), RandomIndices(ishape, dim, Pick(rng, 0, 1), rng), axis,
                                static_cast<int>(Pick(rng, 1, 2)), Pick(rng, 0, 1));
    EXPECT_TRUE(BitExactOnCpu(t)) << DataTypeName(dt) << ShapeToString(shape) << " axis " << axis << " indices "
                                  << ShapeToString(ishape);
  }
}

TEST(CpuGather, OlderOpsetsAndLargeGathersOnTwoThreads) {
  std::mt19937 rng(402);
  // Embedding-like rows, an element-wise gather along the last axis, a middle axis.
  const Tensor table = RandomBits(DataType::kFloat, {5000, 64}, rng);
  EXPECT_TRUE(BitExactOnCpu(GatherTest(table, RandomIndices({8, 256}, 5000, true, rng), 0, 2, false)));
  const Tensor wide = RandomBits(DataType::kInt64, {300, 700}, rng);
  EXPECT_TRUE(BitExactOnCpu(GatherTest(wide, RandomIndices({500}, 700, false, rng), -1, 2, false)));
  const Tensor cube = RandomBits(DataType::kFloat16, {40, 50, 60}, rng);
  EXPECT_TRUE(BitExactOnCpu(GatherTest(cube, RandomIndices({3, 30}, 50, true, rng), 1, 2, true)));
  for (int64_t opset : {1, 11}) {
    OpTest t = GatherTest(RandomBits(DataType::kFloat, {6, 7}, rng), RandomIndices({4}, 7, true, rng), 1, 1, false);
    t.opset = opset;
    EXPECT_TRUE(BitExactOnCpu(t)) << "opset " << opset;
  }
}

TEST(CpuGather, EmptyTensors) {
  std::mt19937 rng(403);
  EXPECT_TRUE(BitExactOnCpu(
      GatherTest(RandomBits(DataType::kFloat, {4, 3}, rng), RandomIndices({0}, 4, true, rng), 0, 1, false)));
  EXPECT_TRUE(BitExactOnCpu(
      GatherTest(RandomBits(DataType::kFloat, {0, 3}, rng), RandomIndices({2}, 3, false, rng), 1, 1, false)));
  EXPECT_TRUE(BitExactOnCpu(
      GatherTest(RandomBits(DataType::kInt32, {4, 0}, rng), RandomIndices({2, 2}, 4, true, rng), 0, 1, false)));
}

TEST(CpuGather, OutOfRangeIndicesAreInvalidArguments) {
  std::mt19937 rng(404);
  const Tensor data = RandomBits(DataType::kFloat, {4, 5}, rng);
  for (int64_t bad : {5, -6, 1000}) {
    ExpectSameErrorAsRef(GatherTest(data, Int64s({0, bad}), 1, 1, false), ErrorCategory::kInvalidArgument);
    ExpectSameErrorAsRef(GatherTest(data, Int32s({bad, 1}), -1, 2, false), ErrorCategory::kInvalidArgument);
  }
  // Indices into an empty axis.
  ExpectSameErrorAsRef(GatherTest(RandomBits(DataType::kFloat, {0, 3}, rng), Int64s({0}), 0, 1, false),
                       ErrorCategory::kInvalidArgument);
}

TEST(CpuGather, StringsFallBackToRef) {
  Tensor s(DataType::kString, {3});
  for (int64_t i = 0; i < 3; ++i) s.strings()[i] = std::to_string(i);
  ExpectRefusedAndFallsBack(GatherTest(s, Int64s({2, 0}), 0, 1, false), "string");
}

}  // namespace
}  // namespace ferry::testing::glue
