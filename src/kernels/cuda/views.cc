// Reshape, Flatten, Squeeze, Unsqueeze, Identity on the device: the output shares the input's device buffer with
// a new shape (no copy, no launch). Shapes come from cuda_shapes.h; axes / shape inputs live on the host.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda_defs/cuda_shapes.h"

namespace ferry::cuda {
namespace {

std::vector<int64_t> HostInt64s(const Tensor& t, const std::string& who) {
  if (t.dtype() != DataType::kInt64) throw InvalidModelError(who + ": shape / axes input must be int64");
  return {t.data<int64_t>(), t.data<int64_t>() + t.size()};
}

class View final : public OpKernel {
 public:
  View(const ir::Node& n, int /*device*/) : who_(n.Describe()), op_(n.op_type()), opset_(n.opset()) {
    allowzero_ = n.GetInt("allowzero", 0) != 0;
    axis_ = n.GetInt("axis", 1);
    axes_ = n.GetInts("axes");
  }

  // The view's shape when the shape / axes input is known before the run (or there is none); else the run's.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.input(0);
    if (!x.is_tensor()) throw InvalidModelError(ctx.Describe() + ": input 0 must be a tensor");
    const bool reads_input = op_ == "Reshape" || (op_ != "Identity" && op_ != "Flatten" && opset_ >= 13);
    if (reads_input && ctx.has_input(1) && !ctx.constant(1)) return ctx.SetOutputDynamic(0);
    ctx.SetOutput(0, x.dtype, ShapeOf(x.shape, ctx.constant(1), ctx.Describe()));
    ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (op_ == "Identity") {
      ctx.SetOutput(0, *v);
      return;
    }
    const Tensor& x = v->tensor();
    if (const OutputSpec* o = ctx.prepared_output(0); o && o->is_tensor()) {
      ctx.SetOutput(0, Value(x.Reshaped(o->shape)));
      return;
    }
    // A shape or axes known only now: errors about it are the data's.
    ctx.SetOutput(0, Value(x.Reshaped(ShapeOf(x.shape(), ctx.input(1), who_))));
  }

 private:
  // The output shape for X's shape and the shape / axes tensor `arg` (null: absent).
  Shape ShapeOf(const Shape& x, const Tensor* arg, const std::string& who) const {
    if (op_ == "Identity") return x;
    if (op_ == "Reshape") {
      if (!arg) throw InvalidModelError(who + ": required input 1 (shape) is missing");
      return ReshapeShape(x, HostInt64s(*arg, who), allowzero_, who);
    }
    if (op_ == "Flatten") return FlattenShape(x, axis_, who);
    std::vector<int64_t> axes = axes_;
    if (opset_ >= 13 && arg) axes = HostInt64s(*arg, who);
    return op_ == "Squeeze" ? SqueezeShape(x, axes, who) : UnsqueezeShape(x, axes, who);
  }

  std::string who_, op_;
  int64_t opset_, axis_ = 1;
  bool allowzero_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

void AddViewFactories(FactoryList& list) {
  for (const char* name : {"cuda.Reshape.5", "cuda.Flatten.1", "cuda.Squeeze.1", "cuda.Unsqueeze.1", "cuda.Identity.1"}) {
    list.emplace_back(name, Make<View>());
  }
}

}  // namespace ferry::cuda
