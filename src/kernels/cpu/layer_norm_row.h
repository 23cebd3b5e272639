// The cpu backend's own layer-normalization row routine, one function per ISA (chosen through the KernelDef the
// registry picked, never at run time): used by SkipLayerNormalization (skip_layer_normalization.cc), and usable by
// any kernel that normalizes contiguous float32 rows. For one row of n > 0 values:
//   s = x + skip                (skip null: s = x)          stored in `sum` when given (needs skip), else in `y`
//   y = (s - mean(s)) / sqrt(var(s) + epsilon) * gamma + beta      (beta null: no shift)
// mean and var are two passes over the row (var about the mean, as ref computes it), so rows with a large mean
// and a small spread stay accurate; the first pass is the only one that reads x and skip from memory, the others
// re-read the row just written (in cache). y and sum may be x's (or skip's) own buffer: every element is read
// before its slot is written. gamma and beta hold n values.
// The RMS row routine (RMSNormalization, rms_normalization.cc) is its sibling: for one row of n > 0 values
//   y = x / sqrt(mean(x^2) + epsilon) * scale      (scale holds n values)
// in two passes (the sum of squares, then the scaling, which re-reads the row from cache); y may be x's buffer.
#pragma once

#include <cstdint>

namespace ferry::cpu {

using LayerNormRowFn = void (*)(const float* x, const float* skip, float* sum, float* y, const float* gamma,
                                const float* beta, int64_t n, float epsilon);

// AVX-512F: 16 lanes (only where the target has AVX-512F).
void LayerNormRowAvx512(const float* x, const float* skip, float* sum, float* y, const float* gamma,
                        const float* beta, int64_t n, float epsilon);
// AVX2 + FMA: 8 lanes (only where the target has both).
void LayerNormRowAvx2(const float* x, const float* skip, float* sum, float* y, const float* gamma, const float* beta,
                      int64_t n, float epsilon);
// Scalar: ref's operations in ref's order (sequential sums).
void LayerNormRowScalar(const float* x, const float* skip, float* sum, float* y, const float* gamma,
                        const float* beta, int64_t n, float epsilon);

using RmsNormRowFn = void (*)(const float* x, float* y, const float* scale, int64_t n, float epsilon);

// AVX-512F: 16 lanes (only where the target has AVX-512F).
void RmsNormRowAvx512(const float* x, float* y, const float* scale, int64_t n, float epsilon);
// AVX2 + FMA: 8 lanes (only where the target has both).
void RmsNormRowAvx2(const float* x, float* y, const float* scale, int64_t n, float epsilon);
// Scalar: ref's operations in ref's order (a sequential sum of squares, then x * inv * scale).
void RmsNormRowScalar(const float* x, float* y, const float* scale, int64_t n, float epsilon);

}  // namespace ferry::cpu
