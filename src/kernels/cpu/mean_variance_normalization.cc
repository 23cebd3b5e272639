// MeanVarianceNormalization (opsets 9, 13) on the cpu backend, float32: y = (x - mean) / (sqrt(var) + 1e-9), the
// mean and population variance taken over `axes` (default [0, 2, 3]). As ref (the ONNX function body, which defines
// the variance as E[x^2] - mean^2): one pass for sum x and sum x^2, var = max(0, E[x^2] - mean^2), then one pass
// y = (x - mean) * (1 / (sqrt(var) + 1e-9)) (normalization_rows.h). That variance cancels when the values are close,
// so wherever lanes gain nothing the sums keep ref's order and roundings exactly (short reduced runs, and the
// columns: each lane adds its own column's rows in order, without fused multiply-adds); only long rows are summed
// in lanes.
//
// Prepare drops X's unit dims and merges neighbouring dims that are both reduced or both kept, then splits the
// merged dims into the innermost run (contiguous), the kept dims before it (each index of them is a piece of work)
// and the reduced dims before it (the rows each piece walks). When the innermost run is reduced (axes [0, 2, 3] of
// NCHW: rows of H*W values, one statistic per channel), each piece reduces its rows to one statistic in lanes; when
// it is kept (axes [0] of [N, D]), the statistics of a chunk of columns accumulate lane by lane over the rows, in
// ref's order. Pieces run in parallel; Y takes over X's buffer when that is X's last use. AVX-512F, AVX2+FMA and
// scalar variants, best first.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/normalization_rows.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Reduced runs shorter than this are summed value by value in ref's order: lanes would gain nothing on them, and
// the statistics of few values, whose one-pass variance cancels, must see ref's roundings.
constexpr int64_t kShortRun = 16;
// Columns whose statistics one piece of work accumulates (innermost run kept): 8 KiB of sums, in L1.
constexpr int64_t kChunk = 1024;

// Merged dims of one kind (kept or reduced) before the innermost run: sizes and strides into X, innermost last.
struct Dims {
  std::vector<int64_t> sizes, strides;
  int64_t count = 1;  // product of sizes
  // X's offset of the index-th element of these dims.
  int64_t Offset(int64_t index) const {
    int64_t off = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      off += index % sizes[d] * strides[d];
      index /= sizes[d];
    }
    return off;
  }
};

struct MvnPlan {
  int64_t inner = 1;           // length of the innermost run
  bool inner_reduced = true;   // whether the innermost run is reduced
  Dims kept, reduced;          // the dims before it
};

// The plan of X's `shape` reduced over dims with `reduced[d]`.
MvnPlan PlanFor(const Shape& shape, const std::vector<bool>& reduced) {
  std::vector<std::pair<int64_t, bool>> merged;  // (size, reduced), outermost first
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!merged.empty() && merged.back().second == reduced[d]) {
      merged.back().first *= shape[d];
    } else {
      merged.emplace_back(shape[d], reduced[d]);
    }
  }
  MvnPlan p;
  if (merged.empty()) return p;  // one element: a reduced run of 1
  p.inner = merged.back().first;
  p.inner_reduced = merged.back().second;
  int64_t stride = p.inner;
  for (size_t i = merged.size() - 1; i-- > 0;) {
    Dims& dims = merged[i].second ? p.reduced : p.kept;
    dims.sizes.insert(dims.sizes.begin(), merged[i].first);
    dims.strides.insert(dims.strides.begin(), stride);
    dims.count *= merged[i].first;
    stride *= merged[i].first;
  }
  return p;
}

class MeanVarianceNormalization : public OpKernel {
 public:
  MeanVarianceNormalization(const ir::Node& node, const NormRows& rows)
      : rows_(rows), axes_(node.GetInts("axes", {0, 2, 3})) {}

  // A float32 X; the axes are resolved against X's rank when X has elements (an empty X has nothing to normalize,
  // as in ref). Y of X's shape, written in place over X when the executor allows it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be float32, got " + ctx.InputString(0));
    }
    DeclareNormOutput(ctx, x.shape);
    if (ShapeElementCount(x.shape) == 0) {
      ctx.EmplaceState(MvnPlan{});
      return;
    }
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) reduced[static_cast<size_t>(ref::NormalizeAxis(a, rank, ctx.Describe()))] = true;
    ctx.EmplaceState(PlanFor(x.shape, reduced));
  }

  void Compute(KernelContext& ctx) const override {
    const MvnPlan& p = ctx.state<MvnPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = NormOutput(ctx, x);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    if (p.inner_reduced) {
      ReducedRuns(p, xp, yp, ctx.threads());
    } else {
      KeptRuns(p, xp, yp, ctx.threads());
    }
  }

 private:
  // 1 / (sqrt(var) + 1e-9) of the statistic with these sums over `count` values, as ref computes it.
  static float InvDenominator(float sum, float squares, float count, float* mean) {
    *mean = sum / count;
    const float var = std::max(0.0f, squares / count - *mean * *mean);
    return 1.0f / (std::sqrt(var) + 1e-9f);
  }

  // One statistic per kept index: its reduced rows of p.inner values each.
  void ReducedRuns(const MvnPlan& p, const float* xp, float* yp, int threads) const {
    const NormRows& rows = rows_;
    const int64_t inner = p.inner, row_count = p.reduced.count;
    const float count = static_cast<float>(row_count * inner);
    ParallelFor(threads, p.kept.count, std::max<int64_t>(1, kNormRowsGrain / (row_count * inner)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t k = begin; k < end; ++k) {
                    const int64_t base = p.kept.Offset(k);
                    float sum = 0, squares = 0;
                    for (int64_t r = 0; r < row_count; ++r) {
                      const float* xr = xp + base + p.reduced.Offset(r);
                      if (inner < kShortRun) {  // ref's order: one sum over every value
                        for (int64_t i = 0; i < inner; ++i) {
                          sum += xr[i];
                          squares += xr[i] * xr[i];
                        }
                        continue;
                      }
                      float s, q;
                      rows.sum_and_squares(xr, inner, &s, &q);
                      sum += s;
                      squares += q;
                    }
                    float mean;
                    const float inv = InvDenominator(sum, squares, count, &mean);
                    for (int64_t r = 0; r < row_count; ++r) {
                      const int64_t off = base + p.reduced.Offset(r);
                      rows.center_scale(xp + off, yp + off, mean, inv, inner);
                    }
                  }
                });
  }

  // p.inner statistics per kept index, one per column of its reduced rows, a chunk of columns at a time.
  void KeptRuns(const MvnPlan& p, const float* xp, float* yp, int threads) const {
    const NormRows& rows = rows_;
    const int64_t inner = p.inner, row_count = p.reduced.count;
    const int64_t chunks = (inner + kChunk - 1) / kChunk, width = std::min(inner, kChunk);
    const float count = static_cast<float>(row_count);
    ParallelFor(threads, p.kept.count * chunks, std::max<int64_t>(1, kNormRowsGrain / (row_count * width)),
                [&](int64_t begin, int64_t end) {
                  std::vector<float> sum(static_cast<size_t>(width)), squares(static_cast<size_t>(width));
                  for (int64_t w = begin; w < end; ++w) {
                    const int64_t c0 = (w % chunks) * kChunk, len = std::min(kChunk, inner - c0);
                    const int64_t base = p.kept.Offset(w / chunks) + c0;
                    std::fill(sum.begin(), sum.end(), 0.0f);
                    std::fill(squares.begin(), squares.end(), 0.0f);
                    for (int64_t r = 0; r < row_count; ++r) {
                      rows.acc_sum_and_squares(sum.data(), squares.data(), xp + base + p.reduced.Offset(r), len);
                    }
                    // sum becomes the means, squares the inverse denominators.
                    for (int64_t i = 0; i < len; ++i) {
                      const auto u = static_cast<size_t>(i);
                      squares[u] = InvDenominator(sum[u], squares[u], count, &sum[u]);
                    }
                    for (int64_t r = 0; r < row_count; ++r) {
                      const int64_t off = base + p.reduced.Offset(r);
                      rows.center_scale_columns(xp + off, yp + off, sum.data(), squares.data(), len);
                    }
                  }
                });
  }

  const NormRows& rows_;
  std::vector<int64_t> axes_;
};

}  // namespace

void RegisterMeanVarianceNormalizationKernels(KernelRegistry& r) {
  AddNormRowsKernels<MeanVarianceNormalization>(r, "MeanVarianceNormalization", "mean_variance_normalization", 9);
}

}  // namespace ferry::cpu
