// The row routines of the cpu backend's statistical normalizations, float32: LpNormalization, LRN,
// InstanceNormalization, GroupNormalization and MeanVarianceNormalization. Where ref's arithmetic decides the
// result (the one-element planes of InstanceNormalization, whose y = x * mul + add cancels exactly; the
// cancelling one-pass variance of MeanVarianceNormalization) the routines round as ref does: `affine` and the
// column sums never fuse a multiply with an add, and no scalar code (tails, the one-lane table) is contracted into
// fused multiply-adds. One table per ISA (normalization_rows.inc compiled for AVX-512F and for AVX2+FMA, and for
// one scalar lane), chosen through the KernelDef the registry picked, never at run time.
//
// "Rows" are contiguous runs of n >= 0 values; reductions keep four vector accumulators (four add chains in
// flight) and add them at the end, so only the summation order differs from ref's sequential sums; rows of fewer
// than 16 values are summed one by one in ref's order, in every variant. "Columns" are
// per-element accumulators (acc[i] over many rows): each lane adds its own rows in order, exactly as ref does.
// Every map may write in place (y == x): each element is read before its slot is written.
#pragma once

#include <cstdint>
#include <span>

#include "core/isa.h"

namespace ferry::cpu {

struct NormRows {
  // Reductions of one row.
  float (*sum)(const float* x, int64_t n);                               // sum x
  float (*squared_deviations)(const float* x, float mean, int64_t n);    // sum (x - mean)^2
  void (*sum_and_squares)(const float* x, int64_t n, float* sum, float* squares);  // sum x, sum x^2
  float (*abs_sum)(const float* x, int64_t n);                           // sum |x|
  float (*square_sum)(const float* x, int64_t n);                        // sum x^2
  // Maps of one row.
  void (*affine)(const float* x, float* y, float mul, float add, int64_t n);          // y = x * mul + add
  void (*center_scale)(const float* x, float* y, float mean, float inv, int64_t n);  // y = (x - mean) * inv
  void (*divide)(const float* x, float* y, float d, int64_t n);                     // y = d == 0 ? 0 : x / d
  // Column accumulations, i < n.
  void (*acc_abs)(float* acc, const float* x, int64_t n);      // acc[i] += |x[i]|
  void (*acc_squares)(float* acc, const float* x, int64_t n);  // acc[i] += x[i]^2
  void (*acc_sum_and_squares)(float* sum, float* squares, const float* x, int64_t n);  // += x[i], += x[i]^2
  // Column maps, i < n.
  void (*sqrt_columns)(float* v, int64_t n);  // v[i] = sqrt(v[i])
  void (*center_scale_columns)(const float* x, float* y, const float* mean, const float* inv,
                               int64_t n);                                          // (x - mean[i]) * inv[i]
  void (*divide_columns)(const float* x, float* y, const float* d, int64_t n);     // d[i] == 0 ? 0 : x / d[i]
  // LRN: y[i] = x[i] / (bias + scale * sq[i]) ^ beta (beta 1, 0.5 and 0.75 through square roots, others by
  // std::pow lane by lane).
  void (*lrn_scale)(const float* x, float* y, const float* sq, float bias, float scale, float beta, int64_t n);
};

// AVX-512F: 16 lanes (only where the target has AVX-512F).
const NormRows& NormRowsAvx512();
// AVX2 + FMA: 8 lanes (only where the target has both).
const NormRows& NormRowsAvx2();
// One lane, no extension: the same code with plain float arithmetic.
const NormRows& NormRowsScalar();

// The variants best first, as the kernels register them: the tag of their names ("avx512", "avx2", "scalar"), the
// extensions each needs, its table.
struct NormRowsVariant {
  const char* impl;
  IsaSet isa;
  const NormRows* rows;
};
std::span<const NormRowsVariant> NormRowsVariants();

}  // namespace ferry::cpu
