// Reshape: same elements, new shape (the output shares the input's buffer). Opsets 1-4 take the shape from the
// `shape` attribute, later ones from input 1. A 0 copies the input dimension (or is a literal 0 with allowzero=1,
// opset 14+); one -1 is inferred from the element count. Prepare declares Y a view of X with its shape when the
// target shape is known before the run (the attribute, or a constant input 1); a shape read at run time is resolved
// (and its errors raised) by Compute.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

Shape ResolveShape(const Shape& in, const std::vector<int64_t>& spec, bool allowzero, const std::string& what) {
  Shape out(spec.size());
  int64_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == -1) {
      if (infer >= 0) throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (v < -1) throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " has a negative dimension");
    if (v == 0 && !allowzero) {
      if (i >= in.size()) {
        throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " copies dimension " + std::to_string(i) +
                                   " (0) but the input " + ShapeToString(in) + " has rank " +
                                   std::to_string(in.size()));
      }
      v = in[i];
    }
    out[i] = v;
    if (__builtin_mul_overflow(known, v, &known)) {
      throw InvalidArgumentError(what + ": shape " + ShapeToString(spec) + " overflows int64");
    }
  }
  const int64_t total = ShapeElementCount(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      throw InvalidArgumentError(what + ": cannot reshape " + ShapeToString(in) + " to " + ShapeToString(spec));
    }
    out[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    throw InvalidArgumentError(what + ": cannot reshape " + ShapeToString(in) + " (" + std::to_string(total) +
                               " elements) to " + ShapeToString(out));
  }
  return out;
}

// Y's shape for one signature, when the target shape is known before the run.
struct ReshapePlan {
  Shape out_shape;
};

class Reshape : public OpKernel {
 public:
  explicit Reshape(const ir::Node& node) : allowzero_(node.GetInt("allowzero", 0) != 0) {
    if (node.opset() < 5) {
      from_attr_ = true;
      attr_shape_ = node.GetInts("shape");
    }
  }

  // Y is a view of X: its shape when the target shape is the attribute or a constant, else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    std::vector<int64_t> spec = attr_shape_;
    if (!from_attr_) {
      const InputSpec& s = ctx.tensor_input(1);
      if (s.shape.size() != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'shape' must be 1-D, got " + ctx.InputString(1));
      }
      if (s.dtype != DataType::kInt32 && s.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'shape': expected an int32 or int64 tensor, got " +
                                   ctx.InputString(1));
      }
      const Tensor* t = ctx.constant(1);
      if (!t) return ctx.SetOutputDynamic(0);
      spec = ReadInt64s(*t, ctx.Describe() + ": input 'shape'");
    }
    ReshapePlan& p = ctx.EmplaceState(ReshapePlan{ResolveShape(x.shape, spec, allowzero_, ctx.Describe())});
    ctx.SetOutput(0, x.dtype, p.out_shape);
    ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (const ReshapePlan* p = ctx.state_if_any<ReshapePlan>()) {
      ctx.SetOutput(0, Value(x.Reshaped(p->out_shape)));
      return;
    }
    // A target shape read from the run's data: its errors are the data's (they name the node).
    const std::vector<int64_t> spec = ReadInt64s(ctx.required_input(1), ctx.Describe() + ": input 'shape'");
    ctx.SetOutput(0, Value(x.Reshaped(ResolveShape(x.shape(), spec, allowzero_, ctx.Describe()))));
  }

 private:
  bool allowzero_ = false;
  bool from_attr_ = false;
  std::vector<int64_t> attr_shape_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateReshapeKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Reshape>(node, options);
}

void RegisterReshapeKernels(KernelRegistry& r) {
  r.Add({.op = "Reshape", .since = 1, .until = 4, .types = {{"T", dtypes::All()}}, .create = CreateReshapeKernel});
  r.Add({.op = "Reshape",
         .since = 5,
         .types = {{"T", dtypes::All()}},
         .create = CreateReshapeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
