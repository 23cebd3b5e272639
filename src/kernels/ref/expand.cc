// Expand: broadcasts the input to the bidirectional-broadcast of its shape and input 1 (numpy rules), as one
// strided copy with zero source strides on the broadcast dimensions. The target shape is resolved in Prepare when
// it is known before the run (a constant, or computed from shapes alone); otherwise Y is dynamic and Compute
// resolves it from the data with the same function.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Y's shape and the copy's strides.
struct ExpandPlan {
  Shape out_shape;
  std::vector<int64_t> dst_strides, src_strides;
};

// Throws InvalidArgumentError naming `what` for a target shape that is not 1-D, has a negative dim or does not
// broadcast with X's.
ExpandPlan MakePlan(const Shape& x, const Tensor& shape_t, const std::string& what) {
  if (shape_t.rank() > 1) {
    throw InvalidArgumentError(what + ": input 'shape' must be 1-D, got " + DescribeTensor(shape_t));
  }
  const Shape shape = ReadInt64s(shape_t, what + ": input 'shape'");
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgumentError(what + ": input 'shape' " + ShapeToString(shape) + " has a negative dimension");
    }
  }
  ExpandPlan p;
  p.out_shape = BroadcastShapes({x, shape}, what);
  const size_t rank = p.out_shape.size(), off = rank - x.size();
  const std::vector<int64_t> in_strides = Strides(x);
  p.src_strides.assign(rank, 0);
  for (size_t d = off; d < rank; ++d) p.src_strides[d] = x[d - off] == 1 ? 0 : in_strides[d - off];
  p.dst_strides = Strides(p.out_shape);
  return p;
}

class Expand : public OpKernel {
 public:
  explicit Expand(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& shape = ctx.tensor_input(1);
    if (shape.shape.size() > 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'shape' must be 1-D, got " + ctx.InputString(1));
    }
    const Tensor* known = ctx.constant(1);
    if (!known) return ctx.SetOutputDynamic(0);
    const ExpandPlan& p = ctx.EmplaceState(MakePlan(x.shape, *known, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, p.out_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ExpandPlan* prepared = ctx.state_if_any<ExpandPlan>();
    // A target shape read from the run's data: its errors are the data's (they name the node).
    const ExpandPlan resolved = prepared ? ExpandPlan{} : MakePlan(x.shape(), ctx.required_input(1), ctx.Describe());
    const ExpandPlan& p = prepared ? *prepared : resolved;
    Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, x.dtype(), p.out_shape);
    CopyStrided(x.dtype(), y.raw_data(), 0, p.dst_strides, x.raw_data(), 0, p.src_strides, p.out_shape, ctx.threads());
  }
};

}  // namespace

void RegisterExpandKernels(KernelRegistry& r) {
  r.Add({.op = "Expand", .since = 8, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Expand>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
