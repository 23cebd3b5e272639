// Slice: a strided box of the input. Opsets 1-9 read starts/ends/axes from attributes; opset 10+ from inputs
// starts, ends, axes, steps (negative values count from the end; starts/ends clamp to the dimension per the
// step's direction; negative steps walk backwards).
#include <algorithm>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/slice_window.h"
#include "kernels/registry.h"
#include "semantics/slice.h"

namespace ferry::ref {

SliceWindow ResolveSliceWindow(const Shape& x_shape, std::vector<int64_t> starts, std::vector<int64_t> ends,
                               std::vector<int64_t> axes, std::vector<int64_t> steps, const std::string& what) {
  const size_t m = starts.size();
  if (axes.empty()) {
    for (size_t i = 0; i < m; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(m, 1);
  if (ends.size() != m || axes.size() != m || steps.size() != m) {
    throw InvalidArgumentError(what + ": starts " + ShapeToString(starts) + ", ends " + ShapeToString(ends) +
                               ", axes " + ShapeToString(axes) + " and steps " + ShapeToString(steps) +
                               " must have the same length");
  }
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  Shape out_shape = x_shape;
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0), step(static_cast<size_t>(rank), 1);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < m; ++i) {
    const int64_t axis = NormalizeAxis(axes[i], rank, what + ": input 'axes'");
    const auto a = static_cast<size_t>(axis);
    if (seen[a]) throw InvalidArgumentError(what + ": axis " + std::to_string(axes[i]) + " is sliced twice");
    seen[a] = true;
    if (steps[i] == 0) throw InvalidArgumentError(what + ": input 'steps' has a 0 step");
    const semantics::SliceAxis r = semantics::ResolveSliceAxis(x_shape[a], starts[i], ends[i], steps[i]);
    out_shape[a] = r.length;
    begin[a] = r.begin;
    step[a] = r.step;
  }
  return {std::move(out_shape), std::move(begin), std::move(step)};
}

namespace {

class Slice : public OpKernel {
 public:
  explicit Slice(const ir::Node& node) : from_attrs_(node.opset() < 10) {
    if (from_attrs_) {
      starts_ = node.GetInts("starts");
      ends_ = node.GetInts("ends");
      node.RequireAttr("starts");
      node.RequireAttr("ends");
      if (node.has_attr("axes")) axes_ = node.GetInts("axes");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!from_attrs_) {
      starts = ReadInt64s(ctx.required_input(1), what + ": input 'starts'");
      ends = ReadInt64s(ctx.required_input(2), what + ": input 'ends'");
      if (const Tensor* a = ctx.input(3)) axes = ReadInt64s(*a, what + ": input 'axes'");
      if (const Tensor* s = ctx.input(4)) steps = ReadInt64s(*s, what + ": input 'steps'");
    }
    const SliceWindow w = ResolveSliceWindow(x.shape(), std::move(starts), std::move(ends), std::move(axes),
                                             std::move(steps), what);
    const int64_t rank = x.rank();
    const Shape& out_shape = w.out_shape;
    const std::vector<int64_t>& begin = w.begin;
    const std::vector<int64_t>& step = w.step;
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    const std::vector<int64_t> in_strides = Strides(x.shape());
    std::vector<int64_t> src_strides(static_cast<size_t>(rank));
    int64_t src_off = 0;
    for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
      src_off += begin[d] * in_strides[d];
      src_strides[d] = step[d] * in_strides[d];
    }
    CopyStrided(x.dtype(), y.raw_data(), 0, Strides(out_shape), x.raw_data(), src_off, src_strides, out_shape,
                ctx.threads());
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

void RegisterSliceKernels(KernelRegistry& r) {
  r.Add({.op = "Slice", .since = 1, .until = 9, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Slice>});
  r.Add({.op = "Slice",
         .since = 10,
         .types = {{"T", dtypes::All()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Slice>,
         .host_inputs = {1, 2, 3, 4}});
}

}  // namespace ferry::ref
