// cpu Expand against ref, bit for bit: random bidirectional broadcasts (the target shape may be shorter, or hold
// 1s where the input is larger), every byte-sized type, constant and fed shapes, large outputs on 2 threads,
// empty tensors, incompatible shapes.
#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

OpTest ExpandTest(const Tensor& x, const std::vector<int64_t>& shape, int threads, bool const_shape) {
  return {.op = "Expand",
          .opset = 13,
          .inputs = {In("x", x), const_shape ? Const("shape", Int64s(shape)) : In("shape", Int64s(shape))},
          .threads = threads};
}

TEST(CpuExpand, RandomBroadcastsMatchRef) {
  std::mt19937 rng(801);
  for (int it = 0; it < 60; ++it) {
    const Shape out = RandomShape(rng, Pick(rng, 0, 4), it % 12 == 0 ? 0 : 1, 7);
    // Input: a suffix of `out` with some dims set to 1; target: `out` with some dims set to 1 where the input
    // carries them, and possibly fewer leading dims.
    const size_t in_rank = static_cast<size_t>(Pick(rng, 0, static_cast<int64_t>(out.size())));
    Shape in(out.end() - static_cast<std::ptrdiff_t>(in_rank), out.end());
    for (auto& d : in) {
      if (Pick(rng, 0, 2) == 0) d = 1;
    }
    std::vector<int64_t> target(out.begin(), out.end());
    for (size_t k = 0; k < in_rank; ++k) {
      size_t d = out.size() - in_rank + k;
      if (in[k] == out[d] && Pick(rng, 0, 3) == 0) target[d] = 1;
    }
    if (Pick(rng, 0, 4) == 0 && target.size() > in_rank) target.erase(target.begin());
    const DataType dt = CopyTypes()[static_cast<size_t>(it) % CopyTypes().size()];
    const OpTest t = ExpandTest(RandomBits(dt, in, rng), target, static_cast<int>(Pick(rng, 1, 2)), Pick(rng, 0, 1));
    EXPECT_TRUE(BitExactOnCpu(t)) << DataTypeName(dt) << ShapeToString(in) << " -> " << ShapeToString(target);
  }
}

TEST(CpuExpand, LargeOutputsOnTwoThreads) {
  std::mt19937 rng(802);
  EXPECT_TRUE(BitExactOnCpu(ExpandTest(RandomBits(DataType::kFloat, {1, 1000}, rng), {300, 1000}, 2, true)));
  EXPECT_TRUE(BitExactOnCpu(ExpandTest(RandomBits(DataType::kFloat, {500, 1}, rng), {500, 400}, 2, false)));
  EXPECT_TRUE(BitExactOnCpu(ExpandTest(RandomBits(DataType::kInt64, {}, rng), {100000}, 2, true)));
  EXPECT_TRUE(BitExactOnCpu(ExpandTest(RandomBits(DataType::kUint8, {8, 1, 64}, rng), {2, 8, 700, 64}, 2, true)));
  OpTest t8 = ExpandTest(RandomBits(DataType::kFloat16, {3, 1}, rng), {3, 5}, 1, true);
  t8.opset = 8;
  EXPECT_TRUE(BitExactOnCpu(t8, "", "cpu.any_expand__strided.8"));
}

TEST(CpuExpand, IncompatibleShapesAreInvalidArguments) {
  std::mt19937 rng(803);
  ExpectSameErrorAsRef(ExpandTest(RandomBits(DataType::kFloat, {3, 4}, rng), {2, 4}, 1, false),
                       ErrorCategory::kInvalidArgument);
  ExpectSameErrorAsRef(ExpandTest(RandomBits(DataType::kFloat, {3}, rng), {-1}, 1, false),
                       ErrorCategory::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::testing::glue
