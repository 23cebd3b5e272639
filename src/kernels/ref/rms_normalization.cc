// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale. X has type T,
// scale and Y type V; the statistics are computed in float (or double for double inputs). Also ONNX Runtime's
// SimplifiedLayerNormalization (version 1, in the default domain and in com.microsoft: the same computation) with
// its optional second output inv_std_var = 1 / sqrt(mean(X^2) + epsilon), of the type `stash_type` names (float or
// double), shape X.shape[:axis] + [1] * (rank - axis); ai.ferry::RMSNormalization is the same op.
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class RMSNormalization : public OpKernel {
 public:
  explicit RMSNormalization(const ir::Node& node)
      : axis_(node.GetInt("axis", -1)),
        epsilon_(node.GetFloat("epsilon", 1e-5f)),
        stash_(StashType(node.GetInt("stash_type", 1), node.Describe())) {}

  // Rows of n elements; the scale laid out per row (the normalised shape) or, when it broadcasts only to X, in X's
  // shape (param_shape).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got " + ctx.InputString(0));
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    Plan p;
    for (int64_t d = 0; d < axis; ++d) p.rows *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis; d < rank; ++d) p.n *= x.shape[static_cast<size_t>(d)];
    const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
    p.per_row = BroadcastsTo(scale.shape, norm_shape);
    p.param_shape = p.per_row ? norm_shape : x.shape;
    if (ShapeElementCount(x.shape) != 0) {  // the scale is read only for a non-empty X
      if (!BroadcastsTo(scale.shape, p.param_shape)) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'scale' of shape " + ShapeToString(scale.shape) +
                                   " does not broadcast to " + ShapeToString(p.param_shape));
      }
      Dispatch(FloatTypes{}, scale.dtype, ctx.Describe(), [](auto) {});
    }
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, scale.dtype, x.shape);
    if (ctx.output_count() > 1) {  // SimplifiedLayerNormalization's inv_std_var
      Shape stat_shape(x.shape.begin(), x.shape.begin() + axis);
      stat_shape.resize(static_cast<size_t>(rank), 1);
      ctx.SetOutput(1, stash_, stat_shape);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Plan& plan = ctx.state<Plan>();
    const int64_t rows = plan.rows, n = plan.n;
    const bool per_row = plan.per_row;
    Tensor& y = ctx.Output(0);
    Tensor* inv_out = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    if (x.size() == 0) return;
    const bool wide = x.dtype() == DataType::kDouble || scale.dtype() == DataType::kDouble;
    auto run = [&](auto acc_tag) {
      using A = decltype(acc_tag);
      const std::vector<A> w = ReadFloatsExpanded<A>(scale, plan.param_shape, ctx);
      std::vector<A> invs(inv_out ? static_cast<size_t>(rows) : 0);
      Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto xtag) {
        using T = decltype(xtag);
        Dispatch(FloatTypes{}, y.dtype(), ctx, [&](auto ytag) {
          using V = decltype(ytag);
          const T* in = x.data<T>();
          V* out = y.data<V>();
          const A eps = static_cast<A>(epsilon_);
          ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, 8192 / n), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const T* xr = in + r * n;
              V* yr = out + r * n;
              const A* wr = w.data() + (per_row ? 0 : r * n);
              A sq = 0;
              for (int64_t i = 0; i < n; ++i) {
                const A v = static_cast<A>(static_cast<Acc<T>>(xr[i]));
                sq += v * v;
              }
              const A inv = A(1) / std::sqrt(sq / static_cast<A>(n) + eps);
              if (inv_out) invs[static_cast<size_t>(r)] = inv;
              for (int64_t i = 0; i < n; ++i) {
                yr[i] = V(static_cast<Acc<V>>(static_cast<A>(static_cast<Acc<T>>(xr[i])) * inv * wr[i]));
              }
            }
          });
        });
      });
      if (inv_out) {
        Dispatch(FloatTypes{}, inv_out->dtype(), ctx, [&](auto stag) {
          using S = decltype(stag);
          S* p = inv_out->data<S>();
          for (int64_t r = 0; r < rows; ++r) p[r] = S(static_cast<Acc<S>>(invs[static_cast<size_t>(r)]));
        });
      }
    };
    if (wide) {
      run(double{});
    } else {
      run(float{});
    }
  }

 private:
  struct Plan {
    int64_t rows = 1, n = 1;
    bool per_row = true;
    Shape param_shape;
  };
  int64_t axis_;
  float epsilon_;
  DataType stash_;
};

}  // namespace

void RegisterRMSNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "RMSNormalization",
         .since = 23,
         .types = {{"T", dtypes::Floats()}, {"V", dtypes::Floats()}},
         .create = MakeKernel<RMSNormalization>});
  // ai.ferry::RMSNormalization (what fuse_layer_norm makes of the decomposed formula below opset 23): the same op.
  r.Add({.op = "RMSNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", dtypes::Floats()}, {"V", dtypes::Floats()}},
         .create = MakeKernel<RMSNormalization>});
  // ONNX Runtime's SimplifiedLayerNormalization (default domain and com.microsoft): the same op, with inv_std_var.
  for (const char* domain : {"", "com.microsoft"}) {
    r.Add({.op = "SimplifiedLayerNormalization",
           .domain = domain,
           .since = 1,
           .types = {{"T", dtypes::Floats()}, {"U", {DataType::kFloat, DataType::kDouble}}, {"V", dtypes::Floats()}},
           .create = MakeKernel<RMSNormalization>});
  }
}

}  // namespace ferry::ref
