// Identity: passes its input value (tensor, sequence or optional) through unchanged, sharing buffers (Prepare
// declares a tensor output a view of the input).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Identity : public OpKernel {
 public:
  explicit Identity(const ir::Node&) {}

  // A tensor input: Y is a view of it, with its dtype and shape. A sequence or optional: known when it runs.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.input(0);
    if (!x.is_tensor()) return ctx.SetOutputDynamic(0);
    ctx.SetOutput(0, x.dtype, x.shape);
    ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    ctx.SetOutput(0, v ? *v : Value());
  }
};

}  // namespace

std::unique_ptr<OpKernel> CreateIdentityKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Identity>(node, options);
}

void RegisterIdentityKernels(KernelRegistry& r) {
  r.Add({.op = "Identity", .since = 1, .types = {{"T", dtypes::All()}, {"V", dtypes::All()}},
         .create = CreateIdentityKernel});
}

}  // namespace ferry::ref
