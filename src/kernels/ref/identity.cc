// Identity: passes its input value (tensor, sequence or optional) through unchanged, sharing buffers.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Identity : public OpKernel {
 public:
  explicit Identity(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    ctx.SetOutput(0, v ? *v : Value());
  }
};

}  // namespace

std::unique_ptr<OpKernel> CreateIdentityKernel(const ir::Node& node) { return MakeKernel<Identity>(node); }

void RegisterIdentityKernels(KernelRegistry& r) {
  r.Add({.op = "Identity", .since = 1, .types = {{"T", dtypes::All()}, {"V", dtypes::All()}},
         .create = CreateIdentityKernel});
}

}  // namespace ferry::ref
