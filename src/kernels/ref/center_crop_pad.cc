// CenterCropPad: crops or zero-pads each listed axis (all axes by default) to the target size in input 1,
// centred; when the difference is odd the extra element is cropped from / padded at the end.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The resolved axes (from the rank alone) and, once the target sizes are known, the output shape and where x's
// origin lands in it.
struct CropPlan {
  std::vector<size_t> axes;
  bool resolved = false;
  Shape out_shape;
  std::vector<int64_t> begins;
};

// Fills the plan's output shape and offsets from the target sizes (one per axis); what() names the node in errors.
template <typename What>
void ResolveSizes(CropPlan& p, const Shape& x, const std::vector<int64_t>& sizes, const What& what) {
  p.out_shape = x;
  p.begins.assign(x.size(), 0);
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const size_t a = p.axes[i];
    const int64_t dim = x[a], want = sizes[i];
    if (want < 0) throw InvalidArgumentError(what() + ": input 'shape' has a negative size");
    p.out_shape[a] = want;
    p.begins[a] = want >= dim ? (want - dim) / 2 : -((dim - want) / 2);
  }
  p.resolved = true;
}

class CenterCropPad : public OpKernel {
 public:
  explicit CenterCropPad(const ir::Node& node) : axes_(node.GetInts("axes")), has_axes_(node.has_attr("axes")) {}

  // The axes and the size count are checked here; the output is resolved here when the sizes are known, else it is
  // dynamic and Compute resolves it from them.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& shape_t = ctx.tensor_input(1);
    const std::string what = ctx.Describe();
    if (shape_t.dtype != DataType::kInt64 && shape_t.dtype != DataType::kInt32) {
      throw InvalidArgumentError(what + ": input 'shape': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(shape_t.dtype)));
    }
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> axes = axes_;
    if (!has_axes_) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (ShapeElementCount(shape_t.shape) != static_cast<int64_t>(axes.size())) {
      throw InvalidArgumentError(what + ": input 'shape' (" + ctx.InputString(1) + ") must have " +
                                 std::to_string(axes.size()) + " entries, one per axis");
    }
    CropPlan p;
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t axis : axes) {
      const auto a = static_cast<size_t>(NormalizeAxis(axis, rank, what));
      if (seen[a]) throw InvalidArgumentError(what + ": axis " + std::to_string(axis) + " is listed twice");
      seen[a] = true;
      p.axes.push_back(a);
    }
    if (const Tensor* sizes = ctx.constant(1)) {
      ResolveSizes(p, x.shape, ReadInt64s(*sizes, {}), [&] { return what; });
      ctx.SetOutput(0, x.dtype, p.out_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const CropPlan* p = &ctx.state<CropPlan>();
    CropPlan resolved;
    if (!p->resolved) {
      resolved.axes = p->axes;
      ResolveSizes(resolved, x.shape(), ReadInt64s(ctx.required_input(1), {}), [&] { return ctx.Describe(); });
      p = &resolved;
    }
    Tensor& y = ctx.Output(0, x.dtype(), p->out_shape);  // zero-initialised: the padding
    CopyShifted(x, y, p->begins, nullptr, ctx.threads());
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
