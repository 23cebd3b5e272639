// LayerNormalization (opset 17): normalises X over the trailing dims [axis, rank) of each row,
// Y = (X - mean) / sqrt(var + epsilon) * Scale + B, with optional Mean and InvStdDev outputs (element type
// `stash_type`, shape X.shape[:axis] + [1] * (rank - axis)). Rows are contiguous, so the hot loop is two passes
// over a row plus one write pass. Also ONNX Runtime's LayerNormalization-1 in the default domain (below ONNX's 17,
// what its tools write at older opsets; ai.ferry::LayerNormalization is the same op): the same computation, with
// Scale, B and Y of a type V that may differ from X's (Y has Scale's type) and statistics of type float or double
// (`stash_type` 1 or 11). The statistics are computed in float, or in double when X or Scale is double.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class LayerNormalization : public OpKernel {
 public:
  explicit LayerNormalization(const ir::Node& node)
      : axis_(node.GetInt("axis", -1)),
        epsilon_(node.GetFloat("epsilon", 1e-5f)),
        stash_(StashType(node.GetInt("stash_type", 1), node.Describe())) {}

  // Rows of n elements; Scale/B laid out per row (the normalised shape) or, when they broadcast only to X, in X's
  // shape (param_shape).
  struct Plan {
    int64_t rows = 1, n = 1;
    bool per_row = true;
    Shape param_shape;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const InputSpec* bias = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got " + ctx.InputString(0));
    }
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    Plan p;
    for (int64_t d = 0; d < axis; ++d) p.rows *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis; d < rank; ++d) p.n *= x.shape[static_cast<size_t>(d)];
    const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
    // Scale/B usually have the normalised shape; anything else broadcasting to X is expanded to X's shape.
    p.per_row = BroadcastsTo(scale.shape, norm_shape) && (!bias || BroadcastsTo(bias->shape, norm_shape));
    p.param_shape = p.per_row ? norm_shape : x.shape;
    if (ShapeElementCount(x.shape) != 0) {  // the parameters are read only for a non-empty X
      const std::pair<const InputSpec*, const char*> params[] = {{&scale, "Scale"}, {bias, "B"}};
      for (const auto& [t, name] : params) {
        if (!t) continue;
        if (!BroadcastsTo(t->shape, p.param_shape)) {
          throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' of shape " + ShapeToString(t->shape) +
                                     " does not broadcast to " + ShapeToString(p.param_shape));
        }
        Dispatch(FloatTypes{}, t->dtype, ctx.Describe(), [](auto) {});
      }
    }
    Shape stat_shape(x.shape.begin(), x.shape.begin() + axis);
    stat_shape.resize(static_cast<size_t>(rank), 1);
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, scale.dtype, x.shape);  // X's type at opset 17; V (Scale's) for ONNX Runtime's version 1
    for (int i = 1; i < std::min(ctx.output_count(), 3); ++i) ctx.SetOutput(i, stash_, stat_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Plan& plan = ctx.state<Plan>();
    const int64_t rows = plan.rows, n = plan.n;
    const bool per_row = plan.per_row;

    Tensor& y = ctx.Output(0);
    Tensor* mean_out = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    Tensor* inv_out = ctx.output_requested(2) ? &ctx.Output(2) : nullptr;
    if (x.size() == 0) return;

    const bool wide = x.dtype() == DataType::kDouble || scale.dtype() == DataType::kDouble;
    auto run = [&](auto acc_tag) {
      using A = decltype(acc_tag);
      const std::vector<A> w = ReadFloatsExpanded<A>(scale, plan.param_shape, ctx);
      const std::vector<A> b = bias ? ReadFloatsExpanded<A>(*bias, plan.param_shape, ctx) : std::vector<A>();
      std::vector<A> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
      Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto xtag) {
        using T = decltype(xtag);
        Dispatch(FloatTypes{}, y.dtype(), ctx, [&](auto ytag) {
          using V = decltype(ytag);
          const T* in = x.data<T>();
          V* out = y.data<V>();
          const A eps = static_cast<A>(epsilon_);
          const auto load = [](T v) { return static_cast<A>(static_cast<Acc<T>>(v)); };
          const auto store = [](A v) { return V(static_cast<Acc<V>>(v)); };
          const int64_t min_chunk = std::max<int64_t>(1, 8192 / n);
          ParallelFor(ctx.threads(), rows, min_chunk, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const T* xr = in + r * n;
              V* yr = out + r * n;
              const A* wr = w.data() + (per_row ? 0 : r * n);
              const A* br = b.empty() ? nullptr : b.data() + (per_row ? 0 : r * n);
              A sum = 0;
              for (int64_t i = 0; i < n; ++i) sum += load(xr[i]);
              const A mean = sum / static_cast<A>(n);
              A sq = 0;
              for (int64_t i = 0; i < n; ++i) {
                const A d = load(xr[i]) - mean;
                sq += d * d;
              }
              const A inv = A(1) / std::sqrt(sq / static_cast<A>(n) + eps);
              if (br) {
                for (int64_t i = 0; i < n; ++i) yr[i] = store((load(xr[i]) - mean) * inv * wr[i] + br[i]);
              } else {
                for (int64_t i = 0; i < n; ++i) yr[i] = store((load(xr[i]) - mean) * inv * wr[i]);
              }
              means[static_cast<size_t>(r)] = mean;
              invs[static_cast<size_t>(r)] = inv;
            }
          });
        });
      });
      auto write = [&](Tensor* dst, const std::vector<A>& src) {
        if (!dst) return;
        Dispatch(FloatTypes{}, dst->dtype(), ctx, [&](auto stag) {
          using S = decltype(stag);
          S* p = dst->data<S>();
          for (int64_t r = 0; r < rows; ++r) p[r] = S(static_cast<Acc<S>>(src[static_cast<size_t>(r)]));
        });
      };
      write(mean_out, means);
      write(inv_out, invs);
    };
    if (wide) {
      run(double{});
    } else {
      run(float{});
    }
  }

 private:
  int64_t axis_;
  float epsilon_;
  DataType stash_;
};

}  // namespace

void RegisterLayerNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "LayerNormalization",
         .since = 17,
         .types = {{"T", dtypes::Floats()}, {"U", {DataType::kFloat, DataType::kBFloat16}}},
         .create = MakeKernel<LayerNormalization>});
  // ai.ferry::LayerNormalization (what fuse_layer_norm makes of the decomposed formula below opset 17): the same op.
  r.Add({.op = "LayerNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", dtypes::Floats()}, {"U", {DataType::kFloat, DataType::kBFloat16}}},
         .create = MakeKernel<LayerNormalization>});
  // ONNX Runtime's LayerNormalization-1 (default domain, below ONNX's version 17): the same op, Y of Scale's type.
  r.Add({.op = "LayerNormalization",
         .since = 1,
         .until = 16,
         .types = {{"T", dtypes::Floats()}, {"U", {DataType::kFloat, DataType::kDouble}}, {"V", dtypes::Floats()}},
         .create = MakeKernel<LayerNormalization>});
}

}  // namespace ferry::ref
