// Size: the input's element count as an int64 scalar.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Size : public OpKernel {
 public:
  explicit Size(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    ctx.Output(0, DataType::kInt64, {}).data<int64_t>()[0] = x.size();
  }
};

}  // namespace

void RegisterSizeKernels(KernelRegistry& r) {
  r.Add({.op = "Size", .since = 1, .types = {{"T", dtypes::All()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<Size>});
}

}  // namespace ferry::ref
