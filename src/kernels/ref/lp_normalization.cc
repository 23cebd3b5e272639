// LpNormalization (opsets 1, 22): y = x / ||x||_p along `axis` (default -1), p in {1, 2}. Where the norm is 0
// the output is 0, as the ONNX test data expects.
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class LpNormalization : public OpKernel {
 public:
  explicit LpNormalization(const ir::Node& node) : axis_(node.GetInt("axis", -1)), p_(node.GetInt("p", 2)) {
    if (p_ != 1 && p_ != 2) {
      throw InvalidModelError(node.Describe() + ": attribute 'p' must be 1 or 2, got " + std::to_string(p_));
    }
  }

  // X viewed as [outer, n, inner] around the axis.
  struct Plan {
    int64_t outer = 1, n = 1, inner = 1;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
    if (ShapeElementCount(x.shape) == 0) return;  // nothing to normalise: the axis is not resolved
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = rank == 0 ? 0 : NormalizeAxis(axis_, rank, ctx.Describe());
    Plan p;
    p.n = rank == 0 ? 1 : x.shape[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) p.outer *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) p.inner *= x.shape[static_cast<size_t>(d)];
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    const Plan& plan = ctx.state<Plan>();
    const int64_t outer = plan.outer, n = plan.n, inner = plan.inner;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      ParallelFor(ctx.threads(), outer, 1, [&](int64_t begin, int64_t end) {
        std::vector<A> norm(static_cast<size_t>(inner));
        for (int64_t o = begin; o < end; ++o) {
          const T* xo = in + o * n * inner;
          T* yo = out + o * n * inner;
          std::fill(norm.begin(), norm.end(), A(0));
          for (int64_t k = 0; k < n; ++k) {
            const T* xr = xo + k * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const A v = static_cast<A>(xr[i]);
              norm[static_cast<size_t>(i)] += p_ == 1 ? std::abs(v) : v * v;
            }
          }
          if (p_ == 2) {
            for (auto& v : norm) v = std::sqrt(v);
          }
          for (int64_t k = 0; k < n; ++k) {
            const T* xr = xo + k * inner;
            T* yr = yo + k * inner;
            for (int64_t i = 0; i < inner; ++i) {
              const A nv = norm[static_cast<size_t>(i)];
              yr[i] = T(nv == A(0) ? A(0) : static_cast<A>(xr[i]) / nv);
            }
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
  int64_t p_;
};

}  // namespace

void RegisterLpNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "LpNormalization",
         .since = 1,
         .until = 21,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<LpNormalization>});
  r.Add({.op = "LpNormalization",
         .since = 22,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<LpNormalization>});
}

}  // namespace ferry::ref
