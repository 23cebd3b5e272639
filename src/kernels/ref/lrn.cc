// LRN (opsets 1, 13): local response normalisation across channels of an [N, C, D1, ...] tensor,
// y = x / (bias + alpha / size * square_sum) ^ beta, where square_sum at channel c sums x^2 over channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C).
#include <cmath>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class LRN : public OpKernel {
 public:
  explicit LRN(const ir::Node& node)
      : size_(node.RequireAttr("size").i),
        alpha_(node.GetFloat("alpha", 1e-4f)),
        beta_(node.GetFloat("beta", 0.75f)),
        bias_(node.GetFloat("bias", 1.0f)) {
    if (size_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'size' must be positive, got " + std::to_string(size_));
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 2, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t channels = x.dim(1);
    int64_t spatial = 1;
    for (int64_t d = 2; d < x.rank(); ++d) spatial *= x.dim(d);
    Tensor& y = ctx.Output(0);
    if (x.size() == 0) return;
    const int64_t before = (size_ - 1) / 2;
    const int64_t after = size_ - 1 - before;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const A scale = static_cast<A>(alpha_) / static_cast<A>(size_);
      ParallelFor(ctx.threads(), x.dim(0) * channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<A> sq(static_cast<size_t>(spatial));
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / channels, c = p % channels;
          std::fill(sq.begin(), sq.end(), A(0));
          const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(channels - 1, c + after);
          for (int64_t k = lo; k <= hi; ++k) {
            const T* xr = in + (n * channels + k) * spatial;
            for (int64_t i = 0; i < spatial; ++i) {
              const A v = static_cast<A>(xr[i]);
              sq[static_cast<size_t>(i)] += v * v;
            }
          }
          const T* xr = in + p * spatial;
          T* yr = out + p * spatial;
          for (int64_t i = 0; i < spatial; ++i) {
            const A d = static_cast<A>(bias_) + scale * sq[static_cast<size_t>(i)];
            yr[i] = T(static_cast<A>(xr[i]) / std::pow(d, static_cast<A>(beta_)));
          }
        }
      });
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

void RegisterLRNKernels(KernelRegistry& r) {
  r.Add({.op = "LRN",
         .since = 1,
         .until = 12,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kFloat16}}},
         .create = MakeKernel<LRN>});
  r.Add({.op = "LRN", .since = 13, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<LRN>});
}

}  // namespace ferry::ref
