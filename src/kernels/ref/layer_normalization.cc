// LayerNormalization (opset 17): normalises X over the trailing dims [axis, rank) of each row,
// Y = (X - mean) / sqrt(var + epsilon) * Scale + B, with optional Mean and InvStdDev outputs (element type
// `stash_type`, shape X.shape[:axis] + [1] * (rank - axis)). Rows are contiguous, so the hot loop is two passes
// over a row plus one write pass.
#include <cmath>
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

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    int64_t rows = 1, n = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= x.dim(d);
    for (int64_t d = axis; d < rank; ++d) n *= x.dim(d);
    Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
    stat_shape.resize(static_cast<size_t>(rank), 1);

    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    Tensor* mean_out = ctx.output_requested(1) ? &ctx.Output(1, stash_, stat_shape) : nullptr;
    Tensor* inv_out = ctx.output_requested(2) ? &ctx.Output(2, stash_, stat_shape) : nullptr;
    if (x.size() == 0) return;

    Dispatch(FloatTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
      // Scale/B usually have the normalised shape; anything else broadcasting to X is expanded to X's shape.
      const bool per_row = BroadcastsTo(scale.shape(), norm_shape) &&
                           (!bias || BroadcastsTo(bias->shape(), norm_shape));
      const Shape& param_shape = per_row ? norm_shape : x.shape();
      const std::vector<A> w = ReadFloatsExpanded<A>(scale, param_shape, ctx.Describe(), "Scale");
      const std::vector<A> b =
          bias ? ReadFloatsExpanded<A>(*bias, param_shape, ctx.Describe(), "B") : std::vector<A>();
      std::vector<A> means(static_cast<size_t>(rows)), invs(static_cast<size_t>(rows));
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const A eps = static_cast<A>(epsilon_);
      const int64_t min_chunk = std::max<int64_t>(1, 8192 / n);
      ParallelFor(ctx.threads(), rows, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = in + r * n;
          T* yr = out + r * n;
          const A* wr = w.data() + (per_row ? 0 : r * n);
          const A* br = b.empty() ? nullptr : b.data() + (per_row ? 0 : r * n);
          A sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += static_cast<A>(xr[i]);
          const A mean = sum / static_cast<A>(n);
          A sq = 0;
          for (int64_t i = 0; i < n; ++i) {
            const A d = static_cast<A>(xr[i]) - mean;
            sq += d * d;
          }
          const A inv = A(1) / std::sqrt(sq / static_cast<A>(n) + eps);
          if (br) {
            for (int64_t i = 0; i < n; ++i) yr[i] = T((static_cast<A>(xr[i]) - mean) * inv * wr[i] + br[i]);
          } else {
            for (int64_t i = 0; i < n; ++i) yr[i] = T((static_cast<A>(xr[i]) - mean) * inv * wr[i]);
          }
          means[static_cast<size_t>(r)] = mean;
          invs[static_cast<size_t>(r)] = inv;
        }
      });
      auto write = [&](Tensor* dst, const std::vector<A>& src) {
        if (!dst) return;
        Dispatch(FloatTypes{}, dst->dtype(), ctx.Describe(), [&](auto stag) {
          using S = decltype(stag);
          S* p = dst->data<S>();
          for (int64_t r = 0; r < rows; ++r) p[r] = S(static_cast<Acc<S>>(src[static_cast<size_t>(r)]));
        });
      };
      write(mean_out, means);
      write(inv_out, invs);
    });
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
}

}  // namespace ferry::ref
