// Flatten: reshape to 2-D [prod(dims[:axis]), prod(dims[axis:])]; the output shares the input's buffer.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Flatten : public OpKernel {
 public:
  explicit Flatten(const ir::Node& node) : axis_(node.GetInt("axis", 1)) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank) {
      throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axis_) + " is out of range for rank " +
                                 std::to_string(rank));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.dim(i);
    ctx.SetOutput(0, Value(x.Reshaped({outer, inner})));
  }

 private:
  int64_t axis_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateFlattenKernel(const ir::Node& node) { return MakeKernel<Flatten>(node); }

void RegisterFlattenKernels(KernelRegistry& r) {
  r.Add({.op = "Flatten", .since = 1, .types = {{"T", dtypes::All()}}, .create = CreateFlattenKernel});
}

}  // namespace ferry::ref
