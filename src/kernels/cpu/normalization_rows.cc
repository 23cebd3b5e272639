// The row routines of normalization_rows.h: normalization_rows.inc compiled for AVX-512F, for AVX2+FMA and for one
// plain float lane (Lane below), each gathered into its NormRows table.
#include "kernels/cpu/normalization_rows.h"

#include <cmath>
#include <cstdint>

#include "kernels/cpu/simd_common.h"

namespace ferry::cpu {
namespace {

// The scalar code (the one-lane table and every table's n % kWidth tails) must round as ref does, which is built
// without FMA: a tail's `s + d * d` contracted into a fused multiply-add would differ from ref's sums on rows shorter
// than a vector (the whole row), and the statistics of such short rows amplify that difference. So no contraction
// in this file; the vector bodies fuse only where they say Fmadd.
#pragma GCC optimize("fp-contract=off")

// One float lane with the interface of simd_common.h's wrappers (what normalization_rows.inc uses of it).
struct Lane {
  using Reg = float;
  using Mask = bool;
  static constexpr int kWidth = 1;
  static Reg Load(const float* p) { return *p; }
  static void Store(float* p, Reg v) { *p = v; }
  static Reg Set1(float v) { return v; }
  static Reg Add(Reg a, Reg b) { return a + b; }
  static Reg Sub(Reg a, Reg b) { return a - b; }
  static Reg Mul(Reg a, Reg b) { return a * b; }
  static Reg Div(Reg a, Reg b) { return a / b; }
  static Reg Fmadd(Reg a, Reg b, Reg c) { return a * b + c; }
  static Reg Sqrt(Reg a) { return std::sqrt(a); }
  static Reg And(Reg a, Reg b) {
    return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, a) & __builtin_bit_cast(uint32_t, b));
  }
  static Mask CmpGt(Reg a, Reg b) { return a > b; }
  static Mask IsNan(Reg a) { return std::isnan(a); }
  static Reg Select(Mask m, Reg a, Reg b) { return m ? a : b; }
};

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/normalization_rows.inc"
constexpr NormRows kTable = Table();
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/normalization_rows.inc"
constexpr NormRows kTable = Table();
}  // namespace avx2
#pragma GCC pop_options

namespace scalar {
using V = Lane;
#include "kernels/cpu/normalization_rows.inc"
constexpr NormRows kTable = Table();
}  // namespace scalar

}  // namespace

const NormRows& NormRowsAvx512() { return avx512::kTable; }
const NormRows& NormRowsAvx2() { return avx2::kTable; }
const NormRows& NormRowsScalar() { return scalar::kTable; }

std::span<const NormRowsVariant> NormRowsVariants() {
  static const NormRowsVariant variants[] = {{"avx512", {Isa::kAvx512f}, &avx512::kTable},
                                             {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::kTable},
                                             {"scalar", {}, &scalar::kTable}};
  return variants;
}

}  // namespace ferry::cpu
