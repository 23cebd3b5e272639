// Pow: z = x ^ y with numpy broadcasting (legacy `broadcast`/`axis` in opset 1). From opset 12 the exponent may
// have another type (T1) than the base (T); the output has the base's type. Integer ^ integer is exact
// (wrapping) repeated squaring; everything else computes in double and converts back.
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

class Pow : public OpKernel {
 public:
  explicit Pow(const ir::Node& node) : bcast_(node) {}
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& y = ctx.tensor_input(1);
    ctx.SetOutput(0, x.dtype, ctx.EmplaceState(bcast_.Resolve(x.shape, y.shape, ctx.Describe())).out);
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& y = ctx.required_input(1);
    const auto& shapes = ctx.state<BinaryBroadcast::Shapes>();
    const Tensor yv = y.shape() == shapes.b_view ? y : y.Reshaped(shapes.b_view);
    Tensor& z = ctx.OutputUninitialized(0);  // BinaryMap writes every element
    Dispatch(PowBaseTypes{}, x.dtype(), ctx, [&](auto tx) {
      using T = decltype(tx);
      Dispatch(NumericTypes{}, y.dtype(), ctx, [&](auto ty) {
        using E = decltype(ty);
        BinaryMap<T, E, T>(ctx.threads(), x, yv, z, [](T a, E b) { return PowValue(a, b); });
      });
    });
  }

 private:
  BinaryBroadcast bcast_;
};

}  // namespace

void RegisterPowKernels(KernelRegistry& r) {
  // Versions 1 (legacy broadcast), 7, 12 (integer base, separate exponent type T1), 13 (bfloat16 base),
  // 15 (bfloat16 exponent). Before 12 the schema binds both inputs to T; the kernel accepts the union.
  r.Add({.op = "Pow",
         .since = 1,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), {DataType::kInt32, DataType::kInt64})},
                   {"T1", dtypes::Numeric()}},
         .create = MakeKernel<Pow>});
}

}  // namespace ferry::ref
