// cpu Transpose against ref, bit for bit: random permutations of ranks 0-5 over every byte-sized type, odd sizes
// that leave partial tiles, the AVX2 and the portable variant, large tensors on 2 threads, empty tensors.
#include <numeric>

#include "kernels/cpu/data_movement_test_util.h"

namespace ferry::testing::glue {
namespace {

OpTest TransposeTest(const Tensor& x, const std::vector<int64_t>* perm, int threads) {
  OpTest t{.op = "Transpose", .opset = 13, .inputs = {In("x", x)}, .threads = threads};
  if (perm) t.attributes.push_back(Ints("perm", *perm));
  return t;
}

const Variant kVariants[] = {{"avx2", "cpu.any_transpose__avx2.1"}, {"none", "cpu.any_transpose__scalar.1"}};

TEST(CpuTranspose, RandomPermutationsMatchRef) {
  std::mt19937 rng(201);
  for (int it = 0; it < 60; ++it) {
    const int64_t rank = Pick(rng, 1, 5);
    const int64_t hi = rank <= 2 ? 70 : rank == 3 ? 20 : 7;
    const Shape shape = RandomShape(rng, rank, 1, hi);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const DataType dt = CopyTypes()[static_cast<size_t>(it) % CopyTypes().size()];
    const Tensor x = RandomBits(dt, shape, rng);
    const bool with_perm = Pick(rng, 0, 4) != 0;
    const int threads = static_cast<int>(Pick(rng, 1, 2));
    for (const Variant& v : kVariants) {
      if (!HostHas(v)) continue;
      EXPECT_TRUE(BitExactOnCpu(TransposeTest(x, with_perm ? &perm : nullptr, threads), v.isa, v.kernel))
          << DataTypeName(dt) << ShapeToString(shape) << " perm " << ShapeToString(perm) << " isa " << v.isa;
    }
  }
}

TEST(CpuTranspose, TiledPathsAndPartialTiles) {
  // 2-D transposes, swaps of the last two axes and NCHW <-> NHWC, sizes around the 8/32 tile edges.
  std::mt19937 rng(202);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{32, 32}, {1, 0}},          {{33, 31}, {1, 0}},          {{8, 9}, {1, 0}},
      {{7, 100}, {1, 0}},          {{3, 17, 40}, {0, 2, 1}},    {{2, 64, 65}, {0, 2, 1}},
      {{2, 3, 19, 21}, {0, 2, 3, 1}}, {{2, 19, 21, 3}, {0, 3, 1, 2}}, {{5, 6, 7}, {2, 1, 0}},
      {{4, 1, 9, 1, 10}, {4, 1, 2, 3, 0}}};
  for (const auto& [shape, perm] : cases) {
    for (DataType dt : {DataType::kFloat, DataType::kFloat16, DataType::kDouble, DataType::kUint8,
                        DataType::kComplex128}) {
      const Tensor x = RandomBits(dt, shape, rng);
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(TransposeTest(x, &perm, 1), v.isa, v.kernel))
            << DataTypeName(dt) << ShapeToString(shape) << " perm " << ShapeToString(perm);
      }
    }
  }
}

TEST(CpuTranspose, LargeTensorsOnTwoThreads) {
  std::mt19937 rng(203);
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{300, 500}, {1, 0}}, {{4, 64, 40, 40}, {0, 2, 3, 1}}, {{8, 100, 100}, {1, 0, 2}}, {{1, 200000}, {1, 0}}};
  for (const auto& [shape, perm] : cases) {
    for (DataType dt : {DataType::kFloat, DataType::kInt64, DataType::kFloat16}) {
      const Tensor x = RandomBits(dt, shape, rng);
      for (const Variant& v : kVariants) {
        if (!HostHas(v)) continue;
        EXPECT_TRUE(BitExactOnCpu(TransposeTest(x, &perm, 2), v.isa, v.kernel)) << ShapeToString(shape);
      }
    }
  }
}

TEST(CpuTranspose, EmptyAndScalarTensors) {
  std::mt19937 rng(204);
  const std::vector<int64_t> p2 = {1, 0}, p3 = {2, 0, 1}, p0 = {};
  EXPECT_TRUE(BitExactOnCpu(TransposeTest(RandomBits(DataType::kFloat, {0, 5}, rng), &p2, 1)));
  EXPECT_TRUE(BitExactOnCpu(TransposeTest(RandomBits(DataType::kInt32, {3, 0, 2}, rng), &p3, 2)));
  EXPECT_TRUE(BitExactOnCpu(TransposeTest(RandomBits(DataType::kFloat, {}, rng), &p0, 1)));
  EXPECT_TRUE(BitExactOnCpu(TransposeTest(RandomBits(DataType::kFloat, {}, rng), nullptr, 1)));
}

TEST(CpuTranspose, StringsFallBackToRef) {
  Tensor x(DataType::kString, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.strings()[i] = std::to_string(i);
  ExpectRefusedAndFallsBack(TransposeTest(x, nullptr, 1), "string");
}

}  // namespace
}  // namespace ferry::testing::glue
