// Unsqueeze: inserts size-1 dimensions at the given output axes; the output shares the input's buffer.
// Axes come from the attribute before opset 13 and from input 1 from opset 13.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Unsqueeze : public OpKernel {
 public:
  explicit Unsqueeze(const ir::Node& node) : axes_from_input_(node.opset() >= 13) {
    if (!axes_from_input_) axes_ = node.GetInts("axes");
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_) {
      const Tensor& a = ctx.required_input(1);
      if (a.rank() > 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'axes' must be 1-D, got " + DescribeTensor(a));
      }
      axes = ReadInt64s(a, ctx.Describe() + ": input 'axes'");
    }
    const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : axes) {
      int64_t n = NormalizeAxis(a, out_rank, ctx.Describe() + ": input 'axes'");
      if (inserted[static_cast<size_t>(n)]) {
        throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(a) + " is listed more than once");
      }
      inserted[static_cast<size_t>(n)] = true;
    }
    Shape out(static_cast<size_t>(out_rank), 1);
    int64_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) {
      if (!inserted[static_cast<size_t>(i)]) out[static_cast<size_t>(i)] = x.dim(k++);
    }
    ctx.SetOutput(0, Value(x.Reshaped(std::move(out))));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateUnsqueezeKernel(const ir::Node& node) { return MakeKernel<Unsqueeze>(node); }

void RegisterUnsqueezeKernels(KernelRegistry& r) {
  r.Add({.op = "Unsqueeze", .since = 1, .until = 12, .types = {{"T", dtypes::All()}},
         .create = CreateUnsqueezeKernel});
  r.Add({.op = "Unsqueeze",
         .since = 13,
         .types = {{"T", dtypes::All()}},
         .create = CreateUnsqueezeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
