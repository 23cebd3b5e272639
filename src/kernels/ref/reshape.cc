// Reshape: same elements, new shape (the output shares the input's buffer). Opsets 1-4 take the shape from the
// `shape` attribute, later ones from input 1. A 0 copies the input dimension (or is a literal 0 with allowzero=1,
// opset 14+); one -1 is inferred from the element count.
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

class Reshape : public OpKernel {
 public:
  explicit Reshape(const ir::Node& node) : allowzero_(node.GetInt("allowzero", 0) != 0) {
    if (node.opset() < 5) {
      from_attr_ = true;
      attr_shape_ = node.GetInts("shape");
    }
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    std::vector<int64_t> spec;
    if (from_attr_) {
      spec = attr_shape_;
    } else {
      const Tensor& s = ctx.required_input(1);
      if (s.rank() != 1) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'shape' must be 1-D, got " + DescribeTensor(s));
      }
      spec = ReadInt64s(s, ctx.Describe() + ": input 'shape'");
    }
    ctx.SetOutput(0, Value(x.Reshaped(ResolveShape(x.shape(), spec, allowzero_, ctx.Describe()))));
  }

 private:
  bool allowzero_ = false;
  bool from_attr_ = false;
  std::vector<int64_t> attr_shape_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateReshapeKernel(const ir::Node& node) { return MakeKernel<Reshape>(node); }

void RegisterReshapeKernels(KernelRegistry& r) {
  r.Add({.op = "Reshape", .since = 1, .until = 4, .types = {{"T", dtypes::All()}}, .create = CreateReshapeKernel});
  r.Add({.op = "Reshape",
         .since = 5,
         .types = {{"T", dtypes::All()}},
         .create = CreateReshapeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
