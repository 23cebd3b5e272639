// ai.ferry SkipLayerNormalization (schemas_ferry.cc), computed by its definition: S = X + Skip, then ref's
// LayerNormalization of S over the dims [axis, rank) with gamma and beta, in float: mean, then the variance about
// the mean, Y = (S - mean) / sqrt(var + epsilon) * gamma + beta; Sum = S when requested. What fuse_skip_layer_norm
// makes of a residual Add followed by a LayerNormalization. Prepare checks the inputs (CheckSkipLayerNorm, shared
// with cpu); Compute runs the rows.
#include "kernels/ref/skip_layer_normalization.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {

SkipLayerNormShape CheckSkipLayerNorm(const Tensor& x, const Tensor& skip, const Tensor& gamma, const Tensor* beta,
                                      int64_t axis, const std::string& what) {
  for (const auto& [t, name] : {std::pair{&x, "X"}, {&skip, "Skip"}, {&gamma, "gamma"}, {beta, "beta"}}) {
    if (t && t->dtype() != DataType::kFloat) {
      throw InvalidArgumentError(what + ": input '" + name + "' must be float32, got " +
                                 std::string(DataTypeName(t->dtype())));
    }
  }
  const int64_t rank = x.rank();
  if (rank == 0) throw InvalidArgumentError(what + ": input 'X' must have rank >= 1");
  const int64_t a = NormalizeAxis(axis, rank, what);
  SkipLayerNormShape s{1, 1, skip.size()};
  for (int64_t d = 0; d < a; ++d) s.rows *= x.dim(d);
  for (int64_t d = a; d < rank; ++d) s.n *= x.dim(d);
  // Skip's dims after its leading 1s must be X's trailing dims.
  int64_t lead = 0;
  while (lead < skip.rank() && skip.dim(lead) == 1) ++lead;
  bool ok = skip.rank() <= rank;
  for (int64_t d = lead; ok && d < skip.rank(); ++d) ok = skip.dim(d) == x.dim(rank - skip.rank() + d);
  if (!ok) {
    throw InvalidArgumentError(what + ": input 'Skip' of shape " + ShapeToString(skip.shape()) +
                               " is neither X's shape " + ShapeToString(x.shape()) + " nor X's trailing dims");
  }
  for (const auto& [t, name] : {std::pair{&gamma, "gamma"}, {beta, "beta"}}) {
    if (t && t->size() != s.n) {
      throw InvalidArgumentError(what + ": input '" + name + "' of shape " + ShapeToString(t->shape()) + " has " +
                                 std::to_string(t->size()) + " elements, expected " + std::to_string(s.n) +
                                 " (the normalized dims of X " + ShapeToString(x.shape()) + ")");
    }
  }
  return s;
}

void PrepareSkipLayerNorm(PrepareContext& ctx, int64_t axis) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& skip = ctx.tensor_input(1);
  const InputSpec& gamma = ctx.tensor_input(2);
  const InputSpec* beta = ctx.has_input(3) ? &ctx.tensor_input(3) : nullptr;
  // The shared check reads dtypes and shapes only: tensors without data stand for the inputs.
  const auto spec = [](const InputSpec& in) { return Tensor::Wrap(in.dtype, in.shape, nullptr, nullptr); };
  const Tensor beta_t = beta ? spec(*beta) : Tensor();
  ctx.EmplaceState(
      CheckSkipLayerNorm(spec(x), spec(skip), spec(gamma), beta ? &beta_t : nullptr, axis, ctx.Describe()));
  ctx.SetOutput(0, DataType::kFloat, x.shape);
  if (ctx.output_requested(1)) {
    ctx.SetOutput(1, DataType::kFloat, x.shape);
  } else if (ctx.output_count() > 1) {
    ctx.SetOutputDynamic(1);  // omitted: Compute does not write it
  }
}

namespace {

class SkipLayerNormalization : public OpKernel {
 public:
  explicit SkipLayerNormalization(const ir::Node& node)
      : axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // The inputs' checks (shared with cpu), the rows; Y, and Sum when requested, of X's shape.
  void Prepare(PrepareContext& ctx) const override { PrepareSkipLayerNorm(ctx, axis_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& skip = ctx.required_input(1);
    const Tensor& gamma = ctx.required_input(2);
    const Tensor* beta = ctx.input(3);
    const SkipLayerNormShape& s = ctx.state<SkipLayerNormShape>();
    Tensor& y = ctx.Output(0);
    Tensor* sum_out = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    const float* kp = skip.data<float>();
    const float* w = gamma.data<float>();
    const float* b = beta ? beta->data<float>() : nullptr;
    float* yp = y.data<float>();
    const int64_t n = s.n;
    ParallelFor(ctx.threads(), s.rows, std::max<int64_t>(1, 8192 / n), [&](int64_t begin, int64_t end) {
      std::vector<float> row(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        float total = 0;
        for (int64_t i = 0; i < n; ++i) {
          const int64_t k = r * n + i;
          row[static_cast<size_t>(i)] = xp[k] + kp[k % s.skip_size];
          total += row[static_cast<size_t>(i)];
        }
        const float mean = total / static_cast<float>(n);
        float sq = 0;
        for (int64_t i = 0; i < n; ++i) {
          const float d = row[static_cast<size_t>(i)] - mean;
          sq += d * d;
        }
        const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + epsilon_);
        for (int64_t i = 0; i < n; ++i) {
          const float v = (row[static_cast<size_t>(i)] - mean) * inv * w[i];
          yp[r * n + i] = b ? v + b[i] : v;
        }
        if (sum_out) std::copy(row.begin(), row.end(), sum_out->data<float>() + r * n);
      }
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void RegisterSkipLayerNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "SkipLayerNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeKernel<SkipLayerNormalization>});
}

}  // namespace ferry::ref
