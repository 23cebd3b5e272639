// Slice: a strided box of the input. Opsets 1-9 read starts/ends/axes from attributes; opset 10+ from inputs
// starts, ends, axes, steps (negative values count from the end; starts/ends clamp to the dimension per the
// step's direction; negative steps walk backwards). Prepare resolves the window when those are attributes or
// constants; a window read at run time is resolved (and its errors raised) by Compute.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

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

constexpr const char* kIndexInputs[] = {"", "starts", "ends", "axes", "steps"};

// The copy for one window: Y's shape, where X's walk starts and its strides per output dimension.
struct SlicePlan {
  Shape out_shape;
  int64_t src_off = 0;
  std::vector<int64_t> src_strides, dst_strides;
};

SlicePlan MakePlan(const Shape& x_shape, const SliceWindow& w) {
  SlicePlan p;
  p.out_shape = w.out_shape;
  const std::vector<int64_t> in_strides = Strides(x_shape);
  p.src_strides.resize(x_shape.size());
  for (size_t d = 0; d < x_shape.size(); ++d) {
    p.src_off += w.begin[d] * in_strides[d];
    p.src_strides[d] = w.step[d] * in_strides[d];
  }
  p.dst_strides = Strides(p.out_shape);
  return p;
}

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

  // The window when starts/ends/axes/steps are attributes or constants; else Y is dynamic and Compute resolves
  // it from the run's data. The index inputs' dtypes are checked here either way.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    std::vector<const Tensor*> data(5, nullptr);
    if (!from_attrs_) {
      for (int i = 1; i <= 4; ++i) {
        if (i > 2 && !ctx.has_input(i)) continue;
        const InputSpec& t = ctx.tensor_input(i);
        if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
          throw InvalidArgumentError(ctx.Describe() + ": input '" + kIndexInputs[i] +
                                     "': expected an int32 or int64 tensor, got " + ctx.InputString(i));
        }
        data[static_cast<size_t>(i)] = ctx.constant(i);
        if (!data[static_cast<size_t>(i)]) return ctx.SetOutputDynamic(0);
      }
    }
    const SlicePlan& p = ctx.EmplaceState(Resolve(x.shape, data, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const SlicePlan* prepared = ctx.state_if_any<SlicePlan>();
    SlicePlan resolved;
    if (!prepared) {  // a window read from the run's data: its errors are the data's (they name the node)
      std::vector<const Tensor*> data(5, nullptr);
      for (int i = 1; i <= 4; ++i) data[static_cast<size_t>(i)] = ctx.input(i);
      resolved = Resolve(x.shape(), data, ctx.Describe());
    }
    const SlicePlan& p = prepared ? *prepared : resolved;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    CopyStrided(x.dtype(), y.raw_data(), 0, p.dst_strides, x.raw_data(), p.src_off, p.src_strides, p.out_shape,
                ctx.threads());
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;

  // The plan for X's shape from the attributes (opset < 10) or the data of inputs 1-4 (`data[i]`, null when
  // omitted; of dtypes Prepare checked).
  SlicePlan Resolve(const Shape& x_shape, const std::vector<const Tensor*>& data, const std::string& what) const {
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!from_attrs_) {
      starts = ReadInt64s(*data[1], what + ": input 'starts'");
      ends = ReadInt64s(*data[2], what + ": input 'ends'");
      if (data[3]) axes = ReadInt64s(*data[3], what + ": input 'axes'");
      if (data[4]) steps = ReadInt64s(*data[4], what + ": input 'steps'");
    }
    return MakePlan(x_shape, ResolveSliceWindow(x_shape, std::move(starts), std::move(ends), std::move(axes),
                                                std::move(steps), what));
  }
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
