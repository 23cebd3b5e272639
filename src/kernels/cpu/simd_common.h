// Float32 vector wrappers for the cpu backend's own SIMD kernels: one struct per ISA with the same static
// interface (F32x16 = AVX-512F, F32x8 = AVX2+FMA). Every function carries its ISA's target attribute, so it may
// only run where the KernelDef that chose it (`.isa`) guarantees the extension. Generic code written against this
// interface lives in simd_kernels.inc and is compiled once per ISA (see there).
//
// Semantics shared by both structs (they mirror the x86 instructions, which the kernels rely on for NaN/±0):
//   Max(a, b) = a > b ? a : b      Min(a, b) = a < b ? a : b      (NaN in either -> b)
//   CmpLt/CmpGt/CmpGe are ordered (false when either is NaN); IsNan(a) is the unordered compare of a with itself.
//   Select(m, a, b) = m ? a : b per lane.
//   LoadPartial/StorePartial touch only the first n lanes' memory (0 <= n < kWidth); other lanes read as 0.
//   Scale(x, n) = x * 2^n for integral n in [-252, 254] (see there).
//   RoundNearest/RoundDown/RoundUp = nearbyintf (half to even)/floorf/ceilf, NaN and ±0 kept.
//   ExponentOf/MantissaOf split a positive normal float into e and m in [1, 2) (garbage for other inputs).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define FERRY_SIMD_AVX512 __attribute__((target("avx512f"), always_inline)) static inline
#define FERRY_SIMD_AVX2 __attribute__((target("avx2,fma"), always_inline)) static inline

namespace ferry::cpu::simd {

// Attributes of a unary op, read once per run and handed to its vectorized map (simd_kernels.inc).
struct UnaryParams {
  float alpha = 0;       // LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, HardSigmoid
  float lo = 0, hi = 0;  // Clip
  float beta = 0;        // HardSigmoid
  float gamma = 0;       // Selu
};

struct F32x16 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kWidth = 16;
  // GCC 12's unmasked AVX-512 intrinsics start from _mm512_undefined_*() and trip -Wmaybe-uninitialized when
  // inlined; the merge-masked forms with an all-ones mask compile to the same instructions without it.
  static constexpr Mask kAll = 0xFFFF;

  FERRY_SIMD_AVX512 Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  FERRY_SIMD_AVX512 void Store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  FERRY_SIMD_AVX512 Mask FirstN(int n) { return static_cast<Mask>((1u << n) - 1u); }
  FERRY_SIMD_AVX512 Reg LoadPartial(const float* p, int n) { return _mm512_maskz_loadu_ps(FirstN(n), p); }
  FERRY_SIMD_AVX512 void StorePartial(float* p, Reg v, int n) { _mm512_mask_storeu_ps(p, FirstN(n), v); }
  FERRY_SIMD_AVX512 Reg Set1(float v) { return _mm512_set1_ps(v); }

  FERRY_SIMD_AVX512 Reg Add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  FERRY_SIMD_AVX512 Reg Sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  FERRY_SIMD_AVX512 Reg Mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  FERRY_SIMD_AVX512 Reg Div(Reg a, Reg b) { return _mm512_div_ps(a, b); }
  FERRY_SIMD_AVX512 Reg Max(Reg a, Reg b) { return _mm512_mask_max_ps(a, kAll, a, b); }
  FERRY_SIMD_AVX512 Reg Min(Reg a, Reg b) { return _mm512_mask_min_ps(a, kAll, a, b); }
  FERRY_SIMD_AVX512 Reg Fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }    // a*b + c
  FERRY_SIMD_AVX512 Reg Fnmadd(Reg a, Reg b, Reg c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a*b
  FERRY_SIMD_AVX512 Reg Sqrt(Reg a) { return _mm512_mask_sqrt_ps(a, kAll, a); }
  FERRY_SIMD_AVX512 Reg RoundNearest(Reg a) {
    return _mm512_mask_roundscale_ps(a, kAll, a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  FERRY_SIMD_AVX512 Reg RoundDown(Reg a) {  // floorf
    return _mm512_mask_roundscale_ps(a, kAll, a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  }
  FERRY_SIMD_AVX512 Reg RoundUp(Reg a) {  // ceilf
    return _mm512_mask_roundscale_ps(a, kAll, a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
  }
  // For positive normal a = m 2^e with m in [1, 2): ExponentOf(a) = e (as a float), MantissaOf(a) = m.
  FERRY_SIMD_AVX512 Reg ExponentOf(Reg a) {
    const __m512i b = _mm512_castps_si512(a);
    const __m512i e = _mm512_sub_epi32(_mm512_mask_srli_epi32(b, kAll, b, 23), _mm512_set1_epi32(127));
    return _mm512_mask_cvtepi32_ps(a, kAll, e);
  }
  FERRY_SIMD_AVX512 Reg MantissaOf(Reg a) {
    const __m512i m = _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(0x007fffff));
    return _mm512_castsi512_ps(_mm512_or_si512(m, _mm512_set1_epi32(0x3f800000)));
  }

  // Bit operations (AVX-512F has them on integers only).
  FERRY_SIMD_AVX512 Reg And(Reg a, Reg b) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  FERRY_SIMD_AVX512 Reg Or(Reg a, Reg b) {
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }
  FERRY_SIMD_AVX512 Reg Xor(Reg a, Reg b) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
  }

  FERRY_SIMD_AVX512 Mask CmpLt(Reg a, Reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  FERRY_SIMD_AVX512 Mask CmpGt(Reg a, Reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  FERRY_SIMD_AVX512 Mask CmpGe(Reg a, Reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  FERRY_SIMD_AVX512 Mask IsNan(Reg a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  FERRY_SIMD_AVX512 Reg Select(Mask m, Reg a, Reg b) { return _mm512_mask_blend_ps(m, b, a); }

  // 2^n1 * 2^n2 as two factors for integral n in [-252, 254]: Scale(x, n) = x * 2^n1 * 2^n2 rounds once, so it
  // gives correctly rounded denormals and overflows only when the true result does.
  FERRY_SIMD_AVX512 Reg Scale(Reg x, Reg n) {
    const __m512i ni = _mm512_mask_cvtps_epi32(_mm512_castps_si512(n), kAll, n);
    const __m512i n1 = _mm512_mask_srai_epi32(ni, kAll, ni, 1);
    const __m512i n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512i e1 = _mm512_add_epi32(n1, bias), e2 = _mm512_add_epi32(n2, bias);
    const Reg s1 = _mm512_castsi512_ps(_mm512_mask_slli_epi32(e1, kAll, e1, 23));
    const Reg s2 = _mm512_castsi512_ps(_mm512_mask_slli_epi32(e2, kAll, e2, 23));
    return _mm512_mul_ps(_mm512_mul_ps(x, s1), s2);
  }
};

struct F32x8 {
  using Reg = __m256;
  using Mask = __m256;  // all-ones lanes where true
  static constexpr int kWidth = 8;

  FERRY_SIMD_AVX2 Reg Load(const float* p) { return _mm256_loadu_ps(p); }
  FERRY_SIMD_AVX2 void Store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  FERRY_SIMD_AVX2 __m256i FirstN(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  FERRY_SIMD_AVX2 Reg LoadPartial(const float* p, int n) { return _mm256_maskload_ps(p, FirstN(n)); }
  FERRY_SIMD_AVX2 void StorePartial(float* p, Reg v, int n) { _mm256_maskstore_ps(p, FirstN(n), v); }
  FERRY_SIMD_AVX2 Reg Set1(float v) { return _mm256_set1_ps(v); }

  FERRY_SIMD_AVX2 Reg Add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  FERRY_SIMD_AVX2 Reg Fnmadd(Reg a, Reg b, Reg c) { return _mm256_fnmadd_ps(a, b, c); }
  FERRY_SIMD_AVX2 Reg Sqrt(Reg a) { return _mm256_sqrt_ps(a); }
  FERRY_SIMD_AVX2 Reg RoundNearest(Reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  FERRY_SIMD_AVX2 Reg RoundDown(Reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  FERRY_SIMD_AVX2 Reg RoundUp(Reg a) { return _mm256_round_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
  FERRY_SIMD_AVX2 Reg ExponentOf(Reg a) {
    const __m256i e = _mm256_sub_epi32(_mm256_srli_epi32(_mm256_castps_si256(a), 23), _mm256_set1_epi32(127));
    return _mm256_cvtepi32_ps(e);
  }
  FERRY_SIMD_AVX2 Reg MantissaOf(Reg a) {
    const __m256i m = _mm256_and_si256(_mm256_castps_si256(a), _mm256_set1_epi32(0x007fffff));
    return _mm256_castsi256_ps(_mm256_or_si256(m, _mm256_set1_epi32(0x3f800000)));
  }

  FERRY_SIMD_AVX2 Reg And(Reg a, Reg b) { return _mm256_and_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Or(Reg a, Reg b) { return _mm256_or_ps(a, b); }
  FERRY_SIMD_AVX2 Reg Xor(Reg a, Reg b) { return _mm256_xor_ps(a, b); }

  FERRY_SIMD_AVX2 Mask CmpLt(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  FERRY_SIMD_AVX2 Mask CmpGt(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  FERRY_SIMD_AVX2 Mask CmpGe(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  FERRY_SIMD_AVX2 Mask IsNan(Reg a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  FERRY_SIMD_AVX2 Reg Select(Mask m, Reg a, Reg b) { return _mm256_blendv_ps(b, a, m); }

  FERRY_SIMD_AVX2 Reg Scale(Reg x, Reg n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const Reg s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const Reg s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(x, s1), s2);
  }
};

}  // namespace ferry::cpu::simd

#undef FERRY_SIMD_AVX512
#undef FERRY_SIMD_AVX2
