// Squeeze: removes size-1 dimensions (the listed axes, or all of them); the output shares the input's buffer.
// Axes come from the attribute before opset 13 and from the optional input 1 from opset 13.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Squeeze : public OpKernel {
 public:
  explicit Squeeze(const ir::Node& node) : axes_from_input_(node.opset() >= 13) {
    if (!axes_from_input_ && node.has_attr("axes")) axes_ = node.GetInts("axes");
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      if (const Tensor* a = ctx.input(1)) {
        if (a->rank() > 1) {
          throw InvalidArgumentError(ctx.Describe() + ": input 'axes' must be 1-D, got " + DescribeTensor(*a));
        }
        axes = ReadInt64s(*a, ctx.Describe() + ": input 'axes'");
      }
    }
    const int64_t rank = x.rank();
    std::vector<bool> drop(static_cast<size_t>(rank), false);
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = x.dim(i) == 1;
    }
    for (int64_t a : axes) {
      int64_t n = NormalizeAxis(a, rank, ctx.Describe() + ": input 'axes'");
      if (x.dim(n) != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": cannot squeeze axis " + std::to_string(a) + " of shape " +
                                   ShapeToString(x.shape()) + ": its size is not 1");
      }
      if (drop[static_cast<size_t>(n)]) {
        throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(a) + " is listed more than once");
      }
      drop[static_cast<size_t>(n)] = true;
    }
    Shape out;
    for (int64_t i = 0; i < rank; ++i) {
      if (!drop[static_cast<size_t>(i)]) out.push_back(x.dim(i));
    }
    ctx.SetOutput(0, Value(x.Reshaped(std::move(out))));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateSqueezeKernel(const ir::Node& node) { return MakeKernel<Squeeze>(node); }

void RegisterSqueezeKernels(KernelRegistry& r) {
  r.Add({.op = "Squeeze", .since = 1, .until = 12, .types = {{"T", dtypes::All()}}, .create = CreateSqueezeKernel});
  r.Add({.op = "Squeeze",
         .since = 13,
         .types = {{"T", dtypes::All()}},
         .create = CreateSqueezeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
