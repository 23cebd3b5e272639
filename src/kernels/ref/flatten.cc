// Flatten: reshape to 2-D [prod(dims[:axis]), prod(dims[axis:])]; the output shares the input's buffer (Prepare
// declares it a view of the input, with its shape).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Y's shape for one signature.
struct FlattenPlan {
  Shape out_shape;
};

class Flatten : public OpKernel {
 public:
  explicit Flatten(const ir::Node& node) : axis_(node.GetInt("axis", 1)) {}

  // Y is a view of X, [prod(dims[:axis]), prod(dims[axis:])]; axis must lie in [-rank, rank].
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank) {
      throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axis_) + " is out of range for rank " +
                                 std::to_string(rank) + " (" + ctx.InputString(0) + ")");
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x.shape[static_cast<size_t>(i)];
    ctx.SetOutput(0, x.dtype, {outer, inner});
    ctx.output(0).view_of = 0;
    ctx.EmplaceState(FlattenPlan{{outer, inner}});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    ctx.SetOutput(0, Value(x.Reshaped(ctx.state<FlattenPlan>().out_shape)));
  }

 private:
  int64_t axis_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateFlattenKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Flatten>(node, options);
}

void RegisterFlattenKernels(KernelRegistry& r) {
  r.Add({.op = "Flatten", .since = 1, .types = {{"T", dtypes::All()}}, .create = CreateFlattenKernel});
}

}  // namespace ferry::ref
