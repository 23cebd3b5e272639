// Cast (every opset: the versions only widen the type set) between every non-complex type, and the Prepare and
// Compute it shares with CastLike (cast_like.cc; cast_plan.h). Same type: the output shares the input buffer (as
// in ref; Prepare declares it a view of the input). Prepare picks the conversion for the pair once per input
// signature: pairs with a float8, float4e2m1, int4/uint4/int2/uint2 or string side go to cast_narrow.cc (ref's
// conversion, by table or per chunk); this file converts between the standard numeric types and bool:
// float32, float64, float16, bfloat16, int8..int64, uint8..uint64, bool.
//
// Every conversion is bit-exact with ref (kernels/ref/cast.cc):
//  - float -> integer truncates toward zero, wraps to the target width; NaN and values outside int64 give
//    INT64_MIN first (so 0 for int32 and narrower). The SIMD paths truncate to int32 and redo any vector holding
//    an out-of-int32 lane (cvtt's 0x80000000) with the scalar rule.
//  - -> bool: x != 0 (NaN is true). bool -> number: 0 / 1.
//  - float32 -> float16: round to nearest even (vcvtps2ph with imm RNE); NaN keeps sign and the top payload bits,
//    made quiet, as ref's Float16 does. float16 -> float32 is exact; NaN lanes are rebuilt from the half's bits
//    so a signalling NaN stays signalling, as in ref.
//  - float32 -> bfloat16: round to nearest even with ref's integer formula; NaN -> (bits >> 16) | 0x40.
// SIMD (AVX-512F, or AVX2 + F16C) serves float32 <-> float16, bfloat16 (from float32), int32, int64 (through
// int32 when every lane fits), uint8, int8 and bool; every other pair is a scalar loop that GCC vectorizes where
// it can.
#include <immintrin.h>

#include <array>
#include <cctype>
#include <cstring>
#include <optional>

#include "core/parallel.h"
#include "kernels/cpu/cast_plan.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using CastTypes = ref::TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                uint16_t, uint32_t, uint64_t, bool>;

bool Supported(DataType t) {
  switch (t) {
    case DataType::kFloat: case DataType::kDouble: case DataType::kFloat16: case DataType::kBFloat16:
    case DataType::kInt8: case DataType::kInt16: case DataType::kInt32: case DataType::kInt64:
    case DataType::kUint8: case DataType::kUint16: case DataType::kUint32: case DataType::kUint64:
    case DataType::kBool:
      return true;
    default:
      return false;
  }
}

// ---- scalar: ref's conversion rules (ref::ConvertNumber) ----------------------------------------------------

template <typename S, typename D>
void CastScalar(const void* in, void* out, int64_t n) {
  const S* s = static_cast<const S*>(in);
  D* d = static_cast<D*>(out);
  if constexpr (std::is_same_v<S, bool>) {
    // Read bool storage as bytes so a non-0/1 byte is still "true" and the loop vectorizes.
    const uint8_t* b = static_cast<const uint8_t*>(in);
    for (int64_t i = 0; i < n; ++i) d[i] = ref::ConvertNumber<D>(b[i] != 0);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = ref::ConvertNumber<D>(s[i]);
  }
}

// Tail helper for the SIMD paths: converts [i, n).
template <typename S, typename D>
inline void Tail(const S* s, D* d, int64_t i, int64_t n) {
  if (i < n) CastScalar<S, D>(s + i, d + i, n - i);
}

// Eight 0/1 bytes for each 8-bit mask (bit k -> byte k).
constexpr std::array<uint64_t, 256> MakeBitsToBytes() {
  std::array<uint64_t, 256> t{};
  for (int m = 0; m < 256; ++m) {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>((m >> k) & 1) << (8 * k);
    t[static_cast<size_t>(m)] = v;
  }
  return t;
}
constexpr std::array<uint64_t, 256> kBitsToBytes = MakeBitsToBytes();

// ---- AVX2 + F16C ---------------------------------------------------------------------------------------------

#define FERRY_AVX2 __attribute__((target("avx2,f16c")))

FERRY_AVX2 void F32ToF16Avx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  Float16* d = static_cast<Float16*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  Tail(s, d, i, n);
}

FERRY_AVX2 void F16ToF32Avx2(const void* in, void* out, int64_t n) {
  const Float16* s = static_cast<const Float16*>(in);
  float* d = static_cast<float*>(out);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fff), inf = _mm256_set1_epi32(0x7c00);
  const __m256i sign_mask = _mm256_set1_epi32(0x8000), mant_mask = _mm256_set1_epi32(0x3ff);
  const __m256i exp_all = _mm256_set1_epi32(0x7f800000);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256i h32 = _mm256_cvtepu16_epi32(h);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(h32, abs_mask), inf);
    const __m256i nan = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(h32, sign_mask), 16), exp_all),
        _mm256_slli_epi32(_mm256_and_si256(h32, mant_mask), 13));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_blendv_epi8(_mm256_castps_si256(f), nan, is_nan));
  }
  Tail(s, d, i, n);
}

FERRY_AVX2 void F32ToBf16Avx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  BFloat16* d = static_cast<BFloat16*>(out);
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40), one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i hi = _mm256_srli_epi32(x, 16);
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, abs_mask), inf);
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(x, _mm256_add_epi32(bias, _mm256_and_si256(hi, one))), 16);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, quiet), is_nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                     _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
  }
  Tail(s, d, i, n);
}

// float32 -> int32 truncation; false when a lane is outside int32 (or NaN), which needs the scalar rule.
FERRY_AVX2 inline bool TruncAvx2(const float* s, __m256i& r) {
  r = _mm256_cvttps_epi32(_mm256_loadu_ps(s));
  const __m256i bad = _mm256_cmpeq_epi32(r, _mm256_set1_epi32(INT32_MIN));
  return _mm256_testz_si256(bad, bad);
}

FERRY_AVX2 void F32ToI32Avx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  int32_t* d = static_cast<int32_t*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i r;
    if (TruncAvx2(s + i, r)) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), r);
    } else {
      CastScalar<float, int32_t>(s + i, d + i, 8);
    }
  }
  Tail(s, d, i, n);
}

template <typename D>  // uint8_t or int8_t: the low byte of the wrapped integer
FERRY_AVX2 void F32ToI8Avx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  D* d = static_cast<D*>(out);
  const __m256i low = _mm256_set1_epi32(0xff);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i r;
    if (TruncAvx2(s + i, r)) {
      r = _mm256_and_si256(r, low);
      const __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d + i), _mm_packus_epi16(p16, p16));
    } else {
      CastScalar<float, D>(s + i, d + i, 8);
    }
  }
  Tail(s, d, i, n);
}

// float32 -> int64 through int32 when every lane fits (the common case), else the scalar rule.
FERRY_AVX2 void F32ToI64Avx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  int64_t* d = static_cast<int64_t*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256i r;
    if (TruncAvx2(s + i, r)) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(r)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 4), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(r, 1)));
    } else {
      CastScalar<float, int64_t>(s + i, d + i, 8);
    }
  }
  Tail(s, d, i, n);
}

// int64 -> float32 through int32 when every lane fits in int32 (same rounding), else the scalar rule.
FERRY_AVX2 void I64ToF32Avx2(const void* in, void* out, int64_t n) {
  const int64_t* s = static_cast<const int64_t*>(in);
  float* d = static_cast<float*>(out);
  const __m256i low_dwords = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m128i lo = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x, low_dwords));
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi64(_mm256_cvtepi32_epi64(lo), x)) == -1) {
      _mm_storeu_ps(d + i, _mm_cvtepi32_ps(lo));
    } else {
      CastScalar<int64_t, float>(s + i, d + i, 4);
    }
  }
  Tail(s, d, i, n);
}

FERRY_AVX2 void I32ToF32Avx2(const void* in, void* out, int64_t n) {
  const int32_t* s = static_cast<const int32_t*>(in);
  float* d = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(d + i, _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
  }
  Tail(s, d, i, n);
}

template <typename S>  // uint8_t or int8_t
FERRY_AVX2 void I8ToF32Avx2(const void* in, void* out, int64_t n) {
  const S* s = static_cast<const S*>(in);
  float* d = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + i));
    const __m256i w = std::is_signed_v<S> ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    _mm256_storeu_ps(d + i, _mm256_cvtepi32_ps(w));
  }
  Tail(s, d, i, n);
}

FERRY_AVX2 void F32ToBoolAvx2(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  bool* d = static_cast<bool*>(out);
  const __m256 zero = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const int m = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(s + i), zero, _CMP_NEQ_UQ));
    std::memcpy(d + i, &kBitsToBytes[static_cast<size_t>(m)], 8);
  }
  Tail(s, d, i, n);
}

FERRY_AVX2 void BoolToF32Avx2(const void* in, void* out, int64_t n) {
  const uint8_t* s = static_cast<const uint8_t*>(in);
  float* d = static_cast<float*>(out);
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i b = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + i)));
    const __m256i is_false = _mm256_cmpeq_epi32(b, _mm256_setzero_si256());
    _mm256_storeu_ps(d + i, _mm256_andnot_ps(_mm256_castsi256_ps(is_false), one));
  }
  Tail(static_cast<const bool*>(in), d, i, n);
}

#undef FERRY_AVX2

// ---- AVX-512F ------------------------------------------------------------------------------------------------

#define FERRY_AVX512 __attribute__((target("avx512f")))

// GCC 12's unmasked AVX-512 conversions start from _mm512_undefined_*() and trip -Wmaybe-uninitialized when
// inlined; the zero-masked forms with an all-ones mask compile to the same instructions without it.
constexpr __mmask16 kAll16 = 0xFFFF;
constexpr __mmask8 kAll8 = 0xFF;

FERRY_AVX512 void F32ToF16Avx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  Float16* d = static_cast<Float16*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_maskz_cvtps_ph(kAll16, _mm512_loadu_ps(s + i),
                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), h);
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void F16ToF32Avx512(const void* in, void* out, int64_t n) {
  const Float16* s = static_cast<const Float16*>(in);
  float* d = static_cast<float*>(out);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fff), inf = _mm512_set1_epi32(0x7c00);
  const __m512i sign_mask = _mm512_set1_epi32(0x8000), mant_mask = _mm512_set1_epi32(0x3ff);
  const __m512i exp_all = _mm512_set1_epi32(0x7f800000);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m512 f = _mm512_maskz_cvtph_ps(kAll16, h);
    const __m512i h32 = _mm512_maskz_cvtepu16_epi32(kAll16, h);
    const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(h32, abs_mask), inf);
    const __m512i nan = _mm512_or_si512(
        _mm512_or_si512(_mm512_maskz_slli_epi32(kAll16, _mm512_and_si512(h32, sign_mask), 16), exp_all),
        _mm512_maskz_slli_epi32(kAll16, _mm512_and_si512(h32, mant_mask), 13));
    _mm512_storeu_si512(d + i, _mm512_mask_mov_epi32(_mm512_castps_si512(f), is_nan, nan));
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void F32ToBf16Avx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  BFloat16* d = static_cast<BFloat16*>(out);
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x40), one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i x = _mm512_loadu_si512(s + i);
    const __m512i hi = _mm512_maskz_srli_epi32(kAll16, x, 16);
    const __mmask16 is_nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(x, abs_mask), inf);
    const __m512i rounded =
        _mm512_maskz_srli_epi32(kAll16, _mm512_add_epi32(x, _mm512_add_epi32(bias, _mm512_and_si512(hi, one))), 16);
    const __m512i r = _mm512_mask_mov_epi32(rounded, is_nan, _mm512_or_si512(hi, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm512_maskz_cvtepi32_epi16(kAll16, r));
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 inline bool TruncAvx512(const float* s, __m512i& r) {
  r = _mm512_maskz_cvttps_epi32(kAll16, _mm512_loadu_ps(s));
  return _mm512_cmpeq_epi32_mask(r, _mm512_set1_epi32(INT32_MIN)) == 0;
}

FERRY_AVX512 void F32ToI32Avx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  int32_t* d = static_cast<int32_t*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r;
    if (TruncAvx512(s + i, r)) {
      _mm512_storeu_si512(d + i, r);
    } else {
      CastScalar<float, int32_t>(s + i, d + i, 16);
    }
  }
  Tail(s, d, i, n);
}

template <typename D>  // uint8_t or int8_t: the low byte of the wrapped integer
FERRY_AVX512 void F32ToI8Avx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  D* d = static_cast<D*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i r;
    if (TruncAvx512(s + i, r)) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm512_maskz_cvtepi32_epi8(kAll16, r));
    } else {
      CastScalar<float, D>(s + i, d + i, 16);
    }
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void F32ToI64Avx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  int64_t* d = static_cast<int64_t*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i r = _mm256_cvttps_epi32(_mm256_loadu_ps(s + i));
    const __m256i bad = _mm256_cmpeq_epi32(r, _mm256_set1_epi32(INT32_MIN));
    if (_mm256_testz_si256(bad, bad)) {
      _mm512_storeu_si512(d + i, _mm512_maskz_cvtepi32_epi64(kAll8, r));
    } else {
      CastScalar<float, int64_t>(s + i, d + i, 8);
    }
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void I64ToF32Avx512(const void* in, void* out, int64_t n) {
  const int64_t* s = static_cast<const int64_t*>(in);
  float* d = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i x = _mm512_loadu_si512(s + i);
    const __m256i lo = _mm512_maskz_cvtepi64_epi32(kAll8, x);
    if (_mm512_cmpeq_epi64_mask(_mm512_maskz_cvtepi32_epi64(kAll8, lo), x) == 0xff) {
      _mm256_storeu_ps(d + i, _mm256_cvtepi32_ps(lo));
    } else {
      CastScalar<int64_t, float>(s + i, d + i, 8);
    }
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void I32ToF32Avx512(const void* in, void* out, int64_t n) {
  const int32_t* s = static_cast<const int32_t*>(in);
  float* d = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_maskz_cvtepi32_ps(kAll16, _mm512_loadu_si512(s + i)));
  Tail(s, d, i, n);
}

template <typename S>  // uint8_t or int8_t
FERRY_AVX512 void I8ToF32Avx512(const void* in, void* out, int64_t n) {
  const S* s = static_cast<const S*>(in);
  float* d = static_cast<float*>(out);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m512i w =
        std::is_signed_v<S> ? _mm512_maskz_cvtepi8_epi32(kAll16, b) : _mm512_maskz_cvtepu8_epi32(kAll16, b);
    _mm512_storeu_ps(d + i, _mm512_maskz_cvtepi32_ps(kAll16, w));
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void F32ToBoolAvx512(const void* in, void* out, int64_t n) {
  const float* s = static_cast<const float*>(in);
  bool* d = static_cast<bool*>(out);
  const __m512 zero = _mm512_setzero_ps();
  const __m512i one = _mm512_set1_epi32(1);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 k = _mm512_cmp_ps_mask(_mm512_loadu_ps(s + i), zero, _CMP_NEQ_UQ);
    const __m128i bytes = _mm512_maskz_cvtepi32_epi8(kAll16, _mm512_maskz_mov_epi32(k, one));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), bytes);
  }
  Tail(s, d, i, n);
}

FERRY_AVX512 void BoolToF32Avx512(const void* in, void* out, int64_t n) {
  const uint8_t* s = static_cast<const uint8_t*>(in);
  float* d = static_cast<float*>(out);
  const __m512 one = _mm512_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i b = _mm512_maskz_cvtepu8_epi32(kAll16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    _mm512_storeu_ps(d + i, _mm512_maskz_mov_ps(_mm512_test_epi32_mask(b, b), one));
  }
  Tail(static_cast<const bool*>(in), d, i, n);
}

#undef FERRY_AVX512

// ---- choosing a conversion -----------------------------------------------------------------------------------

constexpr uint64_t Pair(DataType s, DataType d) {
  return (static_cast<uint64_t>(s) << 32) | static_cast<uint32_t>(d);
}

CastFn SimdCast(CastIsa isa, DataType src, DataType dst) {
  using enum DataType;
  const bool v512 = isa == CastIsa::kAvx512;
  switch (Pair(src, dst)) {
    case Pair(kFloat, kFloat16): return v512 ? F32ToF16Avx512 : F32ToF16Avx2;
    case Pair(kFloat16, kFloat): return v512 ? F16ToF32Avx512 : F16ToF32Avx2;
    case Pair(kFloat, kBFloat16): return v512 ? F32ToBf16Avx512 : F32ToBf16Avx2;
    case Pair(kFloat, kInt32): return v512 ? F32ToI32Avx512 : F32ToI32Avx2;
    case Pair(kInt32, kFloat): return v512 ? I32ToF32Avx512 : I32ToF32Avx2;
    case Pair(kFloat, kInt64): return v512 ? F32ToI64Avx512 : F32ToI64Avx2;
    case Pair(kInt64, kFloat): return v512 ? I64ToF32Avx512 : I64ToF32Avx2;
    case Pair(kFloat, kUint8): return v512 ? F32ToI8Avx512<uint8_t> : F32ToI8Avx2<uint8_t>;
    case Pair(kFloat, kInt8): return v512 ? F32ToI8Avx512<int8_t> : F32ToI8Avx2<int8_t>;
    case Pair(kUint8, kFloat): return v512 ? I8ToF32Avx512<uint8_t> : I8ToF32Avx2<uint8_t>;
    case Pair(kInt8, kFloat): return v512 ? I8ToF32Avx512<int8_t> : I8ToF32Avx2<int8_t>;
    case Pair(kFloat, kBool): return v512 ? F32ToBoolAvx512 : F32ToBoolAvx2;
    case Pair(kBool, kFloat): return v512 ? BoolToF32Avx512 : BoolToF32Avx2;
    default: return nullptr;
  }
}

// The conversion for a pair of standard types (both Supported).
CastFn FindCast(CastIsa isa, DataType src, DataType dst) {
  if (isa != CastIsa::kScalar) {
    if (CastFn f = SimdCast(isa, src, dst)) return f;
  }
  CastFn f = nullptr;
  ref::Dispatch(CastTypes{}, src, "Cast", [&](auto s) {
    ref::Dispatch(CastTypes{}, dst, "Cast", [&](auto d) { f = CastScalar<decltype(s), decltype(d)>; });
  });
  return f;
}

// The `to` attribute: a type number, or (opset 1) a type name such as "FLOAT"; nullopt when unknown.
std::optional<DataType> CastTarget(const ir::Node& node) {
  const ir::Attribute* a = node.attr("to");
  if (!a) return std::nullopt;
  if (a->type == ir::AttrType::kString) {
    std::string name;
    for (char c : a->s) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return DataTypeFromName(name);
  }
  if (a->type != ir::AttrType::kInt || !IsKnownDataType(static_cast<int32_t>(a->i))) return std::nullopt;
  return static_cast<DataType>(a->i);
}

// A missing, unknown or complex `to` is left to ref, which reports it.
std::string CastPredicate(const ir::Node& node) {
  const std::optional<DataType> to = CastTarget(node);
  if (!to || !ref::Castable(*to)) {
    return "Cast: to=" + (to ? std::string(DataTypeName(*to)) : std::string("(invalid)")) +
           " is not a castable data type";
  }
  return "";
}

class Cast : public OpKernel {
 public:
  Cast(const ir::Node& node, CastIsa isa) : isa_(isa), opt_(ref::ReadCastOptions(node)) {
    const std::optional<DataType> to = CastTarget(node);
    if (!to || !ref::Castable(*to)) throw InvalidModelError(node.Describe() + ": " + CastPredicate(node));
    to_ = *to;
  }

  void Prepare(PrepareContext& ctx) const override { PrepareCastTo(ctx, to_, isa_, opt_); }
  void Compute(KernelContext& ctx) const override { ComputeCastTo(ctx, to_); }

 private:
  CastIsa isa_;
  ref::CastOptions opt_;
  DataType to_ = DataType::kFloat;
};

}  // namespace

void PrepareCastTo(PrepareContext& ctx, DataType to, CastIsa isa, const ref::CastOptions& opt) {
  const InputSpec& in = ctx.tensor_input(0);
  if (!ref::Castable(in.dtype)) {
    throw UnsupportedError(ctx.Describe() + ": cannot cast from " + std::string(DataTypeName(in.dtype)) + " (" +
                           ctx.InputString(0) + ")");
  }
  ctx.SetOutput(0, to, in.shape);
  if (in.dtype == to) {
    ctx.output(0).view_of = 0;
    return;
  }
  CastPlan plan;
  if (Supported(in.dtype) && Supported(to)) {
    plan.fn = FindCast(isa, in.dtype, to);
  } else {
    plan.narrow = PlanNarrowCast(in.dtype, to, opt);
  }
  ctx.EmplaceState(std::move(plan));
}

void ComputeCastTo(KernelContext& ctx, DataType to) {
  const Tensor& in = ctx.required_input(0);
  if (in.dtype() == to) {
    ctx.SetOutput(0, Value(in));  // same type: share the buffer
    return;
  }
  const CastPlan& plan = ctx.state<CastPlan>();
  Tensor& out = ctx.Output(0);
  const int64_t n = in.size();
  if (plan.narrow) {
    RunNarrowCast(*plan.narrow, in.raw_data(), out.raw_data(), n, ctx.threads());
    return;
  }
  const int64_t in_bytes = ElementBytes(in.dtype()), out_bytes = ElementBytes(to);
  const auto* src = static_cast<const char*>(in.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  ParallelFor(CopyThreads(ctx.threads(), n * std::max(in_bytes, out_bytes)), n, ref::kElementwiseGrain,
              [&](int64_t s, int64_t e) { plan.fn(src + s * in_bytes, dst + s * out_bytes, e - s); });
}

std::vector<DataType> CastableTypes() {
  std::vector<DataType> types;
  for (DataType t : dtypes::All()) {
    if (ref::Castable(t)) types.push_back(t);
  }
  return types;
}

void AddCastKernels(KernelRegistry& r, const KernelDef& base, const std::string& tag, CastKernelMaker make) {
  struct Variant {
    CastIsa isa;
    IsaSet needs;
    const char* suffix;
  };
  const std::vector<DataType> types = CastableTypes();
  for (const Variant& v : {Variant{CastIsa::kAvx512, {Isa::kAvx512f}, "avx512"},
                           Variant{CastIsa::kAvx2, {Isa::kAvx2, Isa::kF16c}, "avx2"},
                           Variant{CastIsa::kScalar, {}, "scalar"}}) {
    KernelDef def = base;
    def.types = {{"T1", types}, {"T2", types}};
    def.create = [make, isa = v.isa](const ir::Node& n, const KernelOptions&) { return make(n, isa); };
    def.isa = v.needs;
    def.name = "cpu.any_" + tag + "__" + v.suffix + "." + std::to_string(base.since);
    r.Add(std::move(def));
  }
}

void RegisterCastKernels(KernelRegistry& r) {
  AddCastKernels(r,
                 {.op = "Cast",
                  .since = 1,
                  .predicate = CastPredicate,
                  .constraints = "to: a castable (non-complex) type; an invalid `to` is left to ref to report"},
                 "cast", [](const ir::Node& n, CastIsa isa) -> std::unique_ptr<OpKernel> {
                   return std::make_unique<Cast>(n, isa);
                 });
}

}  // namespace ferry::cpu
