// SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B elementwise, A and B of identical shape and type
// (no broadcasting, checked by Prepare), alpha defaults to 1.
#include <cmath>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class SwiGLU : public OpKernel {
 public:
  explicit SwiGLU(const ir::Node& node) : alpha_(node.GetFloat("alpha", 1.0f)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.shape != b.shape || a.dtype != b.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs A and B must have identical shapes and types, got " +
                                 ctx.InputString(0) + " and " + ctx.InputString(1));
    }
    ctx.SetOutput(0, a.dtype, a.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& y = ctx.Output(0);
    Dispatch(FloatTypes{}, a.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* out = y.data<T>();
      const A alpha = static_cast<A>(alpha_);
      ParallelFor(ctx.threads(), a.size(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const A x = static_cast<A>(pa[i]);
          out[i] = T(x / (A(1) + std::exp(-alpha * x)) * static_cast<A>(pb[i]));
        }
      });
    });
  }

 private:
  float alpha_;
};

}  // namespace

void RegisterSwiGLUKernels(KernelRegistry& r) {
  r.Add({.op = "SwiGLU", .since = 28, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<SwiGLU>});
}

}  // namespace ferry::ref
