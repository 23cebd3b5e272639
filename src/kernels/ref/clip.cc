// Clip: y = min(max(x, min), max). Opset 1 and 6 take float attributes min/max; from opset 11 they are optional
// scalar inputs (absent = the type's lowest/highest value). When min > max every element becomes max.
#include <limits>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Clip : public OpKernel {
 public:
  explicit Clip(const ir::Node& node) : from_inputs_(node.opset() >= 11) {
    if (!from_inputs_) {
      attr_min_ = node.GetFloat("min", -std::numeric_limits<float>::max());
      attr_max_ = node.GetFloat("max", std::numeric_limits<float>::max());
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    Dispatch(NumericTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      A lo, hi;
      if (from_inputs_) {
        lo = Bound<T>(ctx, 1, "min", std::numeric_limits<A>::lowest());
        hi = Bound<T>(ctx, 2, "max", std::numeric_limits<A>::max());
      } else {
        lo = static_cast<A>(attr_min_);
        hi = static_cast<A>(attr_max_);
      }
      UnaryMap(ctx.threads(), x.data<T>(), y.data<T>(), x.size(), [lo, hi](T v) -> T {
        A a = static_cast<A>(v);
        if (a != a) return v;  // NaN stays NaN
        return static_cast<T>(std::min(std::max(a, lo), hi));
      });
    });
  }

 private:
  template <typename T>
  static Acc<T> Bound(const KernelContext& ctx, int i, const char* name, Acc<T> def) {
    const Tensor* t = ctx.input(i);
    if (!t) return def;
    if (t->dtype() != kDataTypeOf<T>) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' has type " +
                                 std::string(DataTypeName(t->dtype())) + ", expected " +
                                 std::string(DataTypeName(kDataTypeOf<T>)));
    }
    if (t->size() != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' must be a scalar, got shape " +
                                 ShapeToString(t->shape()));
    }
    return static_cast<Acc<T>>(t->data<T>()[0]);
  }

  bool from_inputs_;
  float attr_min_ = 0, attr_max_ = 0;
};

}  // namespace

void RegisterClipKernels(KernelRegistry& r) {
  // Versions 1 (consumed_inputs, ignored) and 6: float attributes; 11: min/max inputs; 12: integer types;
  // 13: bfloat16. One kernel reads the node's opset to pick attributes or inputs.
  r.Add({.op = "Clip", .since = 1, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<Clip>});
}

}  // namespace ferry::ref
