// The layer-normalization and RMS-normalization row routines of layer_norm_row.h: the vector variants are
// layer_norm_row.inc compiled for AVX-512F and for AVX2+FMA; the scalar variant below does ref's operations in ref's
// order.
#include "kernels/cpu/layer_norm_row.h"

#include <cmath>

#include "kernels/cpu/simd_common.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/layer_norm_row.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/layer_norm_row.inc"
}  // namespace avx2
#pragma GCC pop_options

}  // namespace

__attribute__((target("avx512f"))) RowStats LayerNormRowAvx512(const float* x, const float* skip, const float* bias,
                                                               float* sum, float* y, const float* gamma,
                                                               const float* beta, int64_t n, float epsilon) {
  return avx512::Row(x, skip, bias, sum, y, gamma, beta, n, epsilon);
}

__attribute__((target("avx2,fma"))) RowStats LayerNormRowAvx2(const float* x, const float* skip, const float* bias,
                                                              float* sum, float* y, const float* gamma,
                                                              const float* beta, int64_t n, float epsilon) {
  return avx2::Row(x, skip, bias, sum, y, gamma, beta, n, epsilon);
}

namespace {

// s = x + skip (+ bias) into `out` (skip non-null).
void AddRow(const float* x, const float* skip, const float* bias, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bias ? x[i] + skip[i] + bias[i] : x[i] + skip[i];
}

}  // namespace

RowStats LayerNormRowScalar(const float* x, const float* skip, const float* bias, float* sum, float* y,
                            const float* gamma, const float* beta, int64_t n, float epsilon) {
  const float* s = x;
  if (skip) {
    float* out = sum ? sum : y;
    AddRow(x, skip, bias, out, n);
    s = out;
  }
  float total = 0;
  for (int64_t i = 0; i < n; ++i) total += s[i];
  const float mean = total / static_cast<float>(n);
  float sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float d = s[i] - mean;
    sq += d * d;
  }
  const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + epsilon);
  if (beta) {
    for (int64_t i = 0; i < n; ++i) y[i] = (s[i] - mean) * inv * gamma[i] + beta[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = (s[i] - mean) * inv * gamma[i];
  }
  return {mean, inv};
}

__attribute__((target("avx512f"))) float RmsNormRowAvx512(const float* x, const float* skip, const float* bias,
                                                          float* sum, float* y, const float* scale, int64_t n,
                                                          float epsilon) {
  return avx512::RmsRow(x, skip, bias, sum, y, scale, n, epsilon);
}

__attribute__((target("avx2,fma"))) float RmsNormRowAvx2(const float* x, const float* skip, const float* bias,
                                                         float* sum, float* y, const float* scale, int64_t n,
                                                         float epsilon) {
  return avx2::RmsRow(x, skip, bias, sum, y, scale, n, epsilon);
}

float RmsNormRowScalar(const float* x, const float* skip, const float* bias, float* sum, float* y, const float* scale,
                       int64_t n, float epsilon) {
  const float* s = x;
  if (skip) {
    float* out = sum ? sum : y;
    AddRow(x, skip, bias, out, n);
    s = out;
  }
  float sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += s[i] * s[i];
  const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + epsilon);
  for (int64_t i = 0; i < n; ++i) y[i] = s[i] * inv * scale[i];
  return inv;
}

}  // namespace ferry::cpu
