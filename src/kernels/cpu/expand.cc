// Expand: broadcasts the input to the bidirectional broadcast of its shape and input 1 (numpy rules, the shape
// read on the host); any data type with a byte-sized element. One strided copy with zero source strides on the
// broadcast dimensions (strided_copy.h): rows that are not broadcast are memcpy runs, a broadcast innermost
// dimension is a fill.
#include <string>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Y's shape and the copy's strides: the prepared state when the target shape is known before the run.
struct ExpandPlan {
  Shape out_shape;
  std::vector<int64_t> dst_strides, src_strides;
};

// Throws InvalidArgumentError naming `what` for a target shape that is not 1-D, has a negative dim or does not
// broadcast with X's.
ExpandPlan MakePlan(const Shape& x, const Tensor& shape_t, const std::string& what) {
  if (shape_t.rank() > 1) {
    throw InvalidArgumentError(what + ": input 'shape' must be 1-D, got " + ref::DescribeTensor(shape_t));
  }
  const Shape shape = ref::ReadInt64s(shape_t, what + ": input 'shape'");
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgumentError(what + ": input 'shape' " + ShapeToString(shape) + " has a negative dimension");
    }
  }
  ExpandPlan p;
  p.out_shape = ref::BroadcastShapes({x, shape}, what);
  const size_t rank = p.out_shape.size(), off = rank - x.size();
  const std::vector<int64_t> in_strides = RowMajorStrides(x);
  p.src_strides.assign(rank, 0);
  for (size_t d = off; d < rank; ++d) p.src_strides[d] = x[d - off] == 1 ? 0 : in_strides[d - off];
  p.dst_strides = RowMajorStrides(p.out_shape);
  return p;
}

class Expand : public OpKernel {
 public:
  explicit Expand(const ir::Node&) {}

  // The target shape is known when it is a constant or computed from shapes alone; else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    ctx.tensor_input(1);
    const Tensor* shape = ctx.constant(1);
    if (!shape) return ctx.SetOutputDynamic(0);
    ExpandPlan& p = ctx.EmplaceState(MakePlan(x.shape, *shape, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ExpandPlan* prepared = ctx.state_if_any<ExpandPlan>();
    // A target shape read from the run's data: its errors are the data's (they name the node).
    const ExpandPlan p = prepared ? ExpandPlan{} : MakePlan(x.shape(), ctx.required_input(1), ctx.Describe());
    const ExpandPlan& plan = prepared ? *prepared : p;
    Tensor& y = prepared ? ctx.OutputUninitialized(0) : ctx.OutputUninitialized(0, x.dtype(), plan.out_shape);
    StridedCopy(ElementBytes(x.dtype()), y.raw_data(), plan.dst_strides, x.raw_data(), plan.src_strides,
                plan.out_shape, ctx.threads());
  }
};

}  // namespace

void RegisterExpandKernels(KernelRegistry& r) {
  r.Add({.op = "Expand",
         .since = 8,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Expand>,
         .host_inputs = {1},
         .name = "cpu.any_expand__strided.8"});
}

}  // namespace ferry::cpu
