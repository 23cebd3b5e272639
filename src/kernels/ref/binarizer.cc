// Binarizer (ai.onnx.ml opset 1): y = x > threshold ? 1 : 0, elementwise, same type as x.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Binarizer : public OpKernel {
 public:
  explicit Binarizer(const ir::Node& node) : threshold_(node.GetFloat("threshold", 0.0f)) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    Dispatch(TypeList<float, double, int64_t, int32_t>{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) out[i] = static_cast<double>(in[i]) > threshold_ ? T(1) : T(0);
    });
  }

 private:
  double threshold_;
};

}  // namespace

void RegisterBinarizerKernels(KernelRegistry& r) {
  r.Add({.op = "Binarizer",
         .domain = "ai.onnx.ml",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kInt64, DataType::kInt32}}},
         .create = MakeKernel<Binarizer>});
}

}  // namespace ferry::ref
