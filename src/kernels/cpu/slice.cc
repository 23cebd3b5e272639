// Slice: a strided box of the input; any data type with a byte-sized element. Opsets 1-9 read starts/ends/axes
// from attributes; opset 10+ from the inputs starts, ends, axes, steps, read on the host at run time (negative
// values count from the end; starts/ends clamp per the step's direction; negative steps walk backwards). One
// strided copy (strided_copy.h): with step 1 on the innermost sliced dimension the rows are memcpy runs.
#include <algorithm>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/slice_window.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

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

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const std::string what = ctx.Describe();
    std::vector<int64_t> starts = starts_, ends = ends_, axes = axes_, steps;
    if (!from_attrs_) {
      starts = ref::ReadInt64s(ctx.required_input(1), what + ": input 'starts'");
      ends = ref::ReadInt64s(ctx.required_input(2), what + ": input 'ends'");
      if (const Tensor* a = ctx.input(3)) axes = ref::ReadInt64s(*a, what + ": input 'axes'");
      if (const Tensor* s = ctx.input(4)) steps = ref::ReadInt64s(*s, what + ": input 'steps'");
    }
    const ref::SliceWindow w = ref::ResolveSliceWindow(x.shape(), std::move(starts), std::move(ends), std::move(axes),
                                                       std::move(steps), what);
    const int64_t rank = x.rank();
    const Shape& out_shape = w.out_shape;
    const std::vector<int64_t>& begin = w.begin;
    const std::vector<int64_t>& step = w.step;
    Tensor& y = ctx.Output(0, x.dtype(), out_shape);
    if (y.size() == 0) return;
    const int elem = ElementBytes(x.dtype());
    const std::vector<int64_t> in_strides = RowMajorStrides(x.shape());
    std::vector<int64_t> src_strides(static_cast<size_t>(rank));
    int64_t src_off = 0;
    for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
      src_off += begin[d] * in_strides[d];
      src_strides[d] = step[d] * in_strides[d];
    }
    StridedCopy(elem, y.raw_data(), RowMajorStrides(out_shape), static_cast<const char*>(x.raw_data()) + src_off * elem,
                src_strides, out_shape, ctx.threads());
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
