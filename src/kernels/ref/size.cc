// Size: the input's element count as an int64 scalar, computed by Prepare (OutputSpec::value).
#include <utility>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Size : public OpKernel {
 public:
  explicit Size(const ir::Node&) {}
  // Y is known from X's shape alone: Prepare declares its data, so the nodes reading it are prepared for the value.
  void Prepare(PrepareContext& ctx) const override {
    Tensor y(DataType::kInt64, {});
    y.data<int64_t>()[0] = ShapeElementCount(ctx.tensor_input(0).shape);
    ctx.SetOutputValue(0, std::move(y));
  }
  void Compute(KernelContext& ctx) const override {
    ctx.OutputUninitialized(0).data<int64_t>()[0] = ctx.prepared_output(0)->value->data<int64_t>()[0];
  }
};

}  // namespace

void RegisterSizeKernels(KernelRegistry& r) {
  r.Add({.op = "Size", .since = 1, .types = {{"T", dtypes::All()}, {"T1", {DataType::kInt64}}},
         .create = MakeKernel<Size>});
}

}  // namespace ferry::ref
