// CenterCropPad: crops or zero-pads each listed axis (all axes by default) to the target size in input 1,
// centred; when the difference is odd the extra element is cropped from / padded at the end.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class CenterCropPad : public OpKernel {
 public:
  explicit CenterCropPad(const ir::Node& node) : axes_(node.GetInts("axes")), has_axes_(node.has_attr("axes")) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& shape_t = ctx.required_input(1);
    const std::vector<int64_t> sizes = ReadInt64s(shape_t, ctx.Describe() + ": input 'shape'");
    const int64_t rank = x.rank();
    std::vector<int64_t> axes = axes_;
    if (!has_axes_) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (sizes.size() != axes.size()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'shape' " + DescribeTensor(shape_t) + " must have " +
                                 std::to_string(axes.size()) + " entries, one per axis");
    }
    Shape out_shape = x.shape();
    std::vector<int64_t> begins(static_cast<size_t>(rank), 0);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto a = static_cast<size_t>(NormalizeAxis(axes[i], rank, ctx.Describe()));
      if (seen[a]) throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axes[i]) + " is listed twice");
      seen[a] = true;
      const int64_t dim = x.shape()[a], want = sizes[i];
      if (want < 0) throw InvalidArgumentError(ctx.Describe() + ": input 'shape' has a negative size");
      out_shape[a] = want;
      begins[a] = want >= dim ? (want - dim) / 2 : -((dim - want) / 2);
    }
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);  // zero-initialised: the padding
    CopyShifted(x, y, begins, nullptr, ctx.threads());
  }

 private:
  std::vector<int64_t> axes_;
  bool has_axes_;
};

}  // namespace

void RegisterCenterCropPadKernels(KernelRegistry& r) {
  r.Add({.op = "CenterCropPad", .since = 18,
         .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<CenterCropPad>, .host_inputs = {1}});
}

}  // namespace ferry::ref
