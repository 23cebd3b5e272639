// MatMul and FusedMatMul's skinny products (matmul.cc, skinny_gemm.h): up to 16 rows of A against a B shared by
// the batch, read in place, on the AVX2 variant: against ref for every row count up to 16 (row tiles of 3, 2 and
// 1), column counts around the 32-column tiles and 128-column blocks, K past a 128-row chunk, batched and 1-D A,
// constant and fed B, bias and activations, 1 and 2 threads; more rows take oneDNN's gemm in the same kernel.
#include <gtest/gtest.h>

#include <random>

#include "core/isa.h"
#include "kernels/cpu/conv_test_util.h"  // DescribeCase
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

constexpr const char* kMatMul = "cpu.f32_matmul__onednn_avx2.1";
constexpr const char* kFusedMatMul = "cpu.f32_fused_matmul__onednn_avx2.1";

#define FERRY_SKIP_WITHOUT_AVX2()                                   \
  do {                                                              \
    if (!DetectHostIsa().contains(IsaSet{Isa::kAvx2, Isa::kFma})) { \
      GTEST_SKIP() << "the skinny products need AVX2 and FMA";      \
    }                                                               \
  } while (0)

OpTest Product(const Shape& a, int64_t k, int64_t n, bool constant_b, std::mt19937& rng) {
  OpTest t{.op = "MatMul"};
  t.inputs.push_back(In("a", RandomTensor(DataType::kFloat, a, rng)));
  Tensor b = RandomTensor(DataType::kFloat, {k, n}, rng);
  t.inputs.push_back(constant_b ? Const("b", b) : In("b", b));
  t.rtol = 1e-5;
  t.atol = 1e-5 * std::max<double>(1.0, static_cast<double>(k) / 16);
  return t;
}

TEST(CpuSkinnyMatMul, ShapesMatchRef) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(51);
  int i = 0;
  for (int64_t m : {1, 2, 3, 4, 5, 7, 9, 16, 17, 40}) {
    for (const auto& [k, n] : {std::pair<int64_t, int64_t>{1, 1}, {7, 5}, {300, 100}, {129, 256}, {64, 300}}) {
      OpTest t = Product({m, k}, k, n, i % 4 != 3, rng);
      t.threads = 1 + i % 2;
      EXPECT_TRUE(MatchesRefWithKernel(t, "avx2,fma", kMatMul)) << DescribeCase(t);
      ++i;
    }
  }
}

TEST(CpuSkinnyMatMul, BatchedAndVectorAMatchRef) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(52);
  for (const Shape& a : {Shape{2, 3, 48}, Shape{1, 1, 48}, Shape{48}, Shape{4, 4, 48}}) {
    OpTest t = Product(a, 48, 72, true, rng);
    for (int threads : {1, 2}) {
      t.threads = threads;
      EXPECT_TRUE(MatchesRefWithKernel(t, "avx2,fma", kMatMul)) << DescribeCase(t);
    }
  }
}

// Bias and activation, and the large-K, wide-N shape of a detector's box head (9 boxes).
TEST(CpuSkinnyMatMul, FusedBiasAndActivationMatchRef) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(53);
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 96, 200}, {9, 1500, 260}, {16, 33, 40}}) {
    for (const char* act : {"", "Relu", "Gelu"}) {
      OpTest t = Product({m, k}, k, n, true, rng);
      t.op = "FusedMatMul";
      t.domain = "ai.ferry";
      t.opset = 1;
      t.inputs.push_back(Const("c", RandomTensor(DataType::kFloat, {n}, rng)));
      t.attributes = {Str("activation", act)};
      t.threads = 2;
      EXPECT_TRUE(MatchesRefWithKernel(t, "avx2,fma", kFusedMatMul)) << DescribeCase(t);
    }
  }
}

}  // namespace
}  // namespace ferry::testing
