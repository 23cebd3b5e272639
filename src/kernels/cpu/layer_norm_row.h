// The cpu backend's own layer-normalization row routine, one function per ISA (chosen through the KernelDef the
// registry picked, never at run time): used by SkipLayerNormalization (ai.ferry's and ONNX Runtime's,
// skip_layer_normalization.cc) and EmbedLayerNormalization (embed_layer_normalization.cc), and usable by any kernel
// that normalizes contiguous float32 rows. For one row of n > 0 values:
//   s = x + skip + bias         (skip null: s = x; bias null: no bias; bias needs skip)
//                               stored in `sum` when given (needs skip), else in `y`
//   y = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma + beta      (beta null: no shift)
// and returns mean(s) and 1 / sqrt(var(s) + epsilon). mean and var are two passes over the row (var about the mean,
// as ref computes it), so rows with a large mean and a small spread stay accurate; the first pass is the only one
// that reads x, skip and bias from memory, the others re-read the row just written (in cache). y and sum may be x's
// (or skip's) own buffer: every element is read before its slot is written. gamma, beta and bias hold n values.
// The RMS row routine (RMSNormalization and SimplifiedLayerNormalization, rms_normalization.cc; ONNX Runtime's
// SkipSimplifiedLayerNormalization) is its sibling: for one row of n > 0 values
//   s = x + skip + bias         (as above)
//   y = s / sqrt(mean(s^2) + epsilon) * scale      (scale holds n values)
// returning 1 / sqrt(mean(s^2) + epsilon), in two passes (the sum of squares, then the scaling, which re-reads the
// row from cache); y may be x's buffer.
#pragma once

#include <cstdint>

namespace ferry::cpu {

struct RowStats {
  float mean = 0;  // mean(s)
  float inv = 0;   // 1 / sqrt(var(s) + epsilon)
};

using LayerNormRowFn = RowStats (*)(const float* x, const float* skip, const float* bias, float* sum, float* y,
                                    const float* gamma, const float* beta, int64_t n, float epsilon);

// AVX-512F: 16 lanes (only where the target has AVX-512F).
RowStats LayerNormRowAvx512(const float* x, const float* skip, const float* bias, float* sum, float* y,
                            const float* gamma, const float* beta, int64_t n, float epsilon);
// AVX2 + FMA: 8 lanes (only where the target has both).
RowStats LayerNormRowAvx2(const float* x, const float* skip, const float* bias, float* sum, float* y,
                          const float* gamma, const float* beta, int64_t n, float epsilon);
// Scalar: ref's operations in ref's order (sequential sums).
RowStats LayerNormRowScalar(const float* x, const float* skip, const float* bias, float* sum, float* y,
                            const float* gamma, const float* beta, int64_t n, float epsilon);

using RmsNormRowFn = float (*)(const float* x, const float* skip, const float* bias, float* sum, float* y,
                               const float* scale, int64_t n, float epsilon);

// AVX-512F: 16 lanes (only where the target has AVX-512F).
float RmsNormRowAvx512(const float* x, const float* skip, const float* bias, float* sum, float* y, const float* scale,
                       int64_t n, float epsilon);
// AVX2 + FMA: 8 lanes (only where the target has both).
float RmsNormRowAvx2(const float* x, const float* skip, const float* bias, float* sum, float* y, const float* scale,
                     int64_t n, float epsilon);
// Scalar: ref's operations in ref's order (a sequential sum of squares, then s * inv * scale).
float RmsNormRowScalar(const float* x, const float* skip, const float* bias, float* sum, float* y, const float* scale,
                       int64_t n, float epsilon);

// The row routines of one ISA, as the kernels' variants carry them.
struct NormRows {
  LayerNormRowFn layer_norm;
  RmsNormRowFn rms_norm;
};

}  // namespace ferry::cpu
