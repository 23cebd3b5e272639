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
//
// Below the tables, what the kernels built on them share: the registration of one kernel per table, the output that
// may take over X's buffer, and the per-plane statistics of InstanceNormalization and GroupNormalization (their
// input checks and the parallel walk over planes).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/isa.h"
#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

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

// Registers Kernel, constructed from (node, table), for float32 `op` from opset `since`: one kernel per variant, best
// first, named cpu.f32_<lower>__<impl>.<since> (cpu.f32_group_normalization__avx2.18).
template <class Kernel>
void AddNormRowsKernels(KernelRegistry& r, const std::string& op, const std::string& lower, int since) {
  for (const NormRowsVariant& v : NormRowsVariants()) {
    const NormRows* rows = v.rows;
    r.Add({.op = op,
           .since = since,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Kernel>(node, *rows);
           },
           .isa = v.isa,
           .name = "cpu.f32_" + lower + "__" + v.impl + "." + std::to_string(since)});
  }
}

// Declares Y (output 0) float32 of `shape`, X's, which Compute may write in place over X (NormOutput).
inline void DeclareNormOutput(PrepareContext& ctx, const Shape& shape) {
  ctx.SetOutput(0, DataType::kFloat, shape);
  ctx.output(0).in_place_of = 0;
}

// Y for Compute: X's buffer when this is X's last use and the executor allows it, else a fresh output.
inline Tensor& NormOutput(KernelContext& ctx, const Tensor& x) {
  Tensor* reused = ctx.ReuseInput(0, 0, DataType::kFloat, x.shape());
  return reused ? *reused : ctx.OutputUninitialized(0);
}

// InstanceNormalization's and GroupNormalization's first checks: X, scale and bias all float32 (`names` lists the
// op's names for them, "'X', 'scale' and 'bias'"), X (named `x_name`) of rank >= 2; InvalidArgumentError naming
// the node otherwise.
inline void CheckPlaneNormInputs(const PrepareContext& ctx, const std::string& names, const std::string& x_name) {
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs " + names + " must be float32, got " +
                                 ctx.InputString(i));
    }
  }
  if (ctx.tensor_input(0).shape.size() < 2) {
    throw InvalidArgumentError(ctx.Describe() + ": input " + x_name + " must have rank >= 2, got " +
                               ctx.InputString(0));
  }
}

// Values a thread takes at least in the kernels' parallel loops.
inline constexpr int64_t kNormRowsGrain = 16384;

// For each of the `planes` contiguous planes of n > 0 values of x, in parallel: fn(plane index, mean, population
// variance), the statistics as ref computes them: the mean, then the squared deviations about it (a second pass over
// the plane, still in cache); only the sums' order differs from ref's.
template <class Fn>
void ForEachPlaneMoments(int threads, const NormRows& rows, const float* x, int64_t planes, int64_t n, Fn fn) {
  ParallelFor(threads, planes, std::max<int64_t>(1, kNormRowsGrain / n), [&](int64_t begin, int64_t end) {
    for (int64_t q = begin; q < end; ++q) {
      const float* xq = x + q * n;
      const float mean = rows.sum(xq, n) / static_cast<float>(n);
      fn(q, mean, rows.squared_deviations(xq, mean, n) / static_cast<float>(n));
    }
  });
}

}  // namespace ferry::cpu
