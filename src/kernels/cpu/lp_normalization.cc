// LpNormalization (opsets 1, 22) on the cpu backend, float32: y = x / ||x||_p along `axis` (default -1), p in
// {1, 2}; where the norm is 0 the output is 0, as ref (and the ONNX test data) has it. X is viewed as
// [outer, n, inner] around the axis. inner == 1 (the last axis): each row of n contiguous values is reduced in
// lanes, then divided by its norm. inner > 1: the norms of a chunk of columns accumulate lane by lane over the n
// rows, each column in ref's order, then the rows are divided by them (normalization_rows.h). Rows or (outer,
// chunk) pieces run in parallel; Y takes over X's buffer when that is X's last use. Prepare resolves the axis (for
// a non-empty X, as ref) and keeps the geometry. AVX-512F, AVX2+FMA and scalar variants, best first.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/normalization_rows.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Elements a thread takes at least.
constexpr int64_t kGrain = 16384;
// Columns whose norms one piece of work accumulates (inner > 1): 4 KiB of norms, in L1.
constexpr int64_t kChunk = 1024;

// X viewed as [outer, n, inner] around the axis.
struct LpNormPlan {
  int64_t outer = 1, n = 1, inner = 1;
};

class LpNormalization : public OpKernel {
 public:
  LpNormalization(const ir::Node& node, const NormRows& rows)
      : rows_(rows), axis_(node.GetInt("axis", -1)), p_(node.GetInt("p", 2)) {
    if (p_ != 1 && p_ != 2) {
      throw InvalidModelError(node.Describe() + ": attribute 'p' must be 1 or 2, got " + std::to_string(p_));
    }
  }

  // A float32 X; the axis is resolved against X's rank when X has elements (an empty X has nothing to normalize,
  // as in ref). Y of X's shape, written in place over X when the executor allows it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input' must be float32, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    ctx.output(0).in_place_of = 0;
    LpNormPlan p;
    if (ShapeElementCount(x.shape) > 0) {
      const int64_t rank = static_cast<int64_t>(x.shape.size());
      const int64_t axis = rank == 0 ? 0 : ref::NormalizeAxis(axis_, rank, ctx.Describe());
      p.n = rank == 0 ? 1 : x.shape[static_cast<size_t>(axis)];
      for (int64_t d = 0; d < axis; ++d) p.outer *= x.shape[static_cast<size_t>(d)];
      for (int64_t d = axis + 1; d < rank; ++d) p.inner *= x.shape[static_cast<size_t>(d)];
    }
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const LpNormPlan& p = ctx.state<LpNormPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor* reused = ctx.ReuseInput(0, 0, DataType::kFloat, x.shape());
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t n = p.n, inner = p.inner;
    const NormRows& rows = rows_;
    const bool l1 = p_ == 1;
    if (inner == 1) {
      ParallelFor(ctx.threads(), p.outer, std::max<int64_t>(1, kGrain / n), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const float* xr = xp + o * n;
          const float norm = l1 ? rows.abs_sum(xr, n) : std::sqrt(rows.square_sum(xr, n));
          rows.divide(xr, yp + o * n, norm, n);
        }
      });
      return;
    }
    const int64_t chunks = (inner + kChunk - 1) / kChunk;
    const int64_t piece = n * std::min(inner, kChunk);  // elements of one piece of work
    ParallelFor(ctx.threads(), p.outer * chunks, std::max<int64_t>(1, kGrain / piece), [&](int64_t begin,
                                                                                           int64_t end) {
      std::vector<float> norm(static_cast<size_t>(std::min(inner, kChunk)));
      for (int64_t w = begin; w < end; ++w) {
        const int64_t o = w / chunks, c0 = (w % chunks) * kChunk, len = std::min(kChunk, inner - c0);
        const float* xo = xp + o * n * inner + c0;
        float* yo = yp + o * n * inner + c0;
        std::fill(norm.begin(), norm.end(), 0.0f);
        for (int64_t k = 0; k < n; ++k) {
          if (l1) {
            rows.acc_abs(norm.data(), xo + k * inner, len);
          } else {
            rows.acc_squares(norm.data(), xo + k * inner, len);
          }
        }
        if (!l1) rows.sqrt_columns(norm.data(), len);
        for (int64_t k = 0; k < n; ++k) rows.divide_columns(xo + k * inner, yo + k * inner, norm.data(), len);
      }
    });
  }

 private:
  const NormRows& rows_;
  int64_t axis_;
  int64_t p_;
};

}  // namespace

void RegisterLpNormalizationKernels(KernelRegistry& r) {
  for (const NormRowsVariant& v : NormRowsVariants()) {
    const NormRows* rows = v.rows;
    r.Add({.op = "LpNormalization",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<LpNormalization>(node, *rows);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_lp_normalization__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
