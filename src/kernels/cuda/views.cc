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

  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (!v || !v->is_tensor()) throw InvalidModelError(who_ + ": input 0 must be a tensor");
    const Tensor& x = v->tensor();
    if (op_ == "Identity") {
      ctx.SetOutput(0, *v);
      return;
    }
    Shape out;
    if (op_ == "Reshape") {
      out = ReshapeShape(x.shape(), HostInt64s(ctx.required_input(1), who_), allowzero_, who_);
    } else if (op_ == "Flatten") {
      out = FlattenShape(x.shape(), axis_, who_);
    } else {
      std::vector<int64_t> axes = axes_;
      if (opset_ >= 13 && ctx.has_input(1)) axes = HostInt64s(*ctx.input(1), who_);
      out = op_ == "Squeeze" ? SqueezeShape(x.shape(), axes, who_) : UnsqueezeShape(x.shape(), axes, who_);
    }
    ctx.SetOutput(0, Value(x.Reshaped(std::move(out))));
  }

 private:
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
