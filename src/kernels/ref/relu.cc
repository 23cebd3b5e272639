// Relu: y = max(x, 0); NaN propagates (numpy.maximum, the ONNX reference implementation).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Relu : public OpKernel {
 public:
  explicit Relu(const ir::Node&) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    Dispatch(NumericTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        Acc<T> v = static_cast<Acc<T>>(in[i]);
        out[i] = v > Acc<T>(0) || v != v ? in[i] : T(Acc<T>(0));  // NaN stays NaN, as max(x, 0) in ONNX
      }
    });
  }
};

}  // namespace

void RegisterReluKernels(KernelRegistry& r) {
  r.Add({.op = "Relu", .since = 1, .until = 5, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<Relu>});
  r.Add({.op = "Relu", .since = 6, .until = 12, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<Relu>});
  r.Add({.op = "Relu", .since = 13, .until = 13, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<Relu>});
  r.Add({.op = "Relu",
         .since = 14,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), dtypes::SignedInts())}},
         .create = MakeKernel<Relu>});
}

}  // namespace ferry::ref
