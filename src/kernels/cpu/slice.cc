// Slice: a strided box of the input; any data type with a byte-sized element. Opsets 1-9 read starts/ends/axes
// from attributes; opset 10+ from the inputs starts, ends, axes, steps, read on the host at run time (negative
// values count from the end; starts/ends clamp per the step's direction; negative steps walk backwards). One
// strided copy (strided_copy.h): with step 1 on the innermost sliced dimension the rows are memcpy runs. Prepare
// resolves the window (Y's shape, the copy's offset and strides) once per input signature when the attributes or
// constant inputs give it; inputs read at run time are resolved (and their errors raised) by Compute.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/slice_window.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Y's shape and the strided copy of one signature: the box's first element in X (elements) and the strides.
struct SlicePlan {
  Shape out_shape;
  int64_t src_off = 0;
  std::vector<int64_t> dst_strides, src_strides;
};

// Throws InvalidArgumentError naming `what` for mismatched lengths, a repeated axis, a 0 step or a bad axis.
SlicePlan MakePlan(const Shape& x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps, const std::string& what) {
  ref::SliceWindow w = ref::ResolveSliceWindow(x, std::move(starts), std::move(ends), std::move(axes),
                                               std::move(steps), what);
  SlicePlan p;
  const std::vector<int64_t> in_strides = RowMajorStrides(x);
  p.src_strides.resize(x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    p.src_off += w.begin[d] * in_strides[d];
    p.src_strides[d] = w.step[d] * in_strides[d];
  }
  p.dst_strides = RowMajorStrides(w.out_shape);
  p.out_shape = std::move(w.out_shape);
  return p;
}

// Opset 10+: the plan from the starts, ends, axes and steps tensors (axes and steps may be null: omitted).
SlicePlan ReadPlan(const Shape& x, const Tensor* starts, const Tensor* ends, const Tensor* axes, const Tensor* steps,
                   const std::string& what) {
  std::vector<int64_t> a, st;
  if (axes) a = ref::ReadInt64s(*axes, what + ": input 'axes'");
  if (steps) st = ref::ReadInt64s(*steps, what + ": input 'steps'");
  return MakePlan(x, ref::ReadInt64s(*starts, what + ": input 'starts'"),
                  ref::ReadInt64s(*ends, what + ": input 'ends'"), std::move(a), std::move(st), what);
}

class Slice : public OpKernel {
 public:
  explicit Slice(const ir::Node& node) : from_attrs_(node.opset() < 10) {
    if (from_attrs_) {
      node.RequireAttr("starts");
      node.RequireAttr("ends");
      starts_ = node.GetInts("starts");
      ends_ = node.GetInts("ends");
      if (node.has_attr("axes")) axes_ = node.GetInts("axes");
    }
  }

  // The types of starts, ends, axes and steps (opset 10+); Y's shape and the copy's strides when they are all known
  // before the run (attributes, or constant inputs), else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (from_attrs_) {
      SlicePlan& p = ctx.EmplaceState(MakePlan(x.shape, starts_, ends_, axes_, {}, ctx.Describe()));
      return ctx.SetOutput(0, x.dtype, p.out_shape);
    }
    ctx.tensor_input(1);
    ctx.tensor_input(2);
    bool known = true;
    for (int i = 1; i <= 4; ++i) {
      if (!ctx.has_input(i)) continue;
      const InputSpec& t = ctx.tensor_input(i);
      if (t.dtype != DataType::kInt32 && t.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + ": expected an int32 or int64 tensor");
      }
      known = known && ctx.constant(i);
    }
    if (!known) return ctx.SetOutputDynamic(0);
    SlicePlan& p = ctx.EmplaceState(ReadPlan(x.shape, ctx.constant(1), ctx.constant(2), ctx.constant(3),
                                             ctx.constant(4), ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const SlicePlan* prepared = ctx.state_if_any<SlicePlan>();
    // starts/ends/axes/steps read from the run's data: their errors are the data's (they name the node).
    const SlicePlan read = prepared ? SlicePlan{}
                                    : ReadPlan(x.shape(), &ctx.required_input(1), &ctx.required_input(2),
                                               ctx.input(3), ctx.input(4), ctx.Describe());
    const SlicePlan& p = prepared ? *prepared : read;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    if (y.size() == 0) return;
    StridedCopy(ElementBytes(x.dtype()), y.raw_data(), p.dst_strides,
                static_cast<const char*>(x.raw_data()) + p.src_off * ElementBytes(x.dtype()), p.src_strides,
                p.out_shape, ctx.threads());
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

}  // namespace

void RegisterSliceKernels(KernelRegistry& r) {
  r.Add({.op = "Slice",
         .since = 1,
         .until = 9,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Slice>,
         .name = "cpu.any_slice__strided.1"});
  r.Add({.op = "Slice",
         .since = 10,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Slice>,
         .host_inputs = {1, 2, 3, 4},
         .name = "cpu.any_slice__strided.10"});
}

}  // namespace ferry::cpu
