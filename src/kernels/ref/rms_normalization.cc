// RMSNormalization (opset 23): Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) * scale. X has type T,
// scale and Y type V; the statistics are computed in float (or double for double inputs).
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
      : axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {
    StashType(node.GetInt("stash_type", 1), node.Describe());  // validates the attribute
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    int64_t rows = 1, n = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= x.dim(d);
    for (int64_t d = axis; d < rank; ++d) n *= x.dim(d);
    Tensor& y = ctx.Output(0, scale.dtype(), x.shape());
    if (x.size() == 0) return;
    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    const bool per_row = BroadcastsTo(scale.shape(), norm_shape);
    const bool wide = x.dtype() == DataType::kDouble || scale.dtype() == DataType::kDouble;
    auto run = [&](auto acc_tag) {
      using A = decltype(acc_tag);
      const std::vector<A> w = ReadFloatsExpanded<A>(scale, per_row ? norm_shape : x.shape(), ctx.Describe(), "scale");
      Dispatch(FloatTypes{}, x.dtype(), ctx.Describe(), [&](auto xtag) {
        using T = decltype(xtag);
        Dispatch(FloatTypes{}, y.dtype(), ctx.Describe(), [&](auto ytag) {
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
              for (int64_t i = 0; i < n; ++i) {
                yr[i] = V(static_cast<Acc<V>>(static_cast<A>(static_cast<Acc<T>>(xr[i])) * inv * wr[i]));
              }
            }
          });
        });
      });
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
}

}  // namespace ferry::ref
