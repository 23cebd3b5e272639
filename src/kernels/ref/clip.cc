// Clip: y = min(max(x, min), max). Opset 1 and 6 take float attributes min/max; from opset 11 they are optional
// scalar inputs (absent = the type's lowest/highest value). When min > max every element becomes max.
#include <limits>
#include <string>

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

  // From opset 11: min and max, when given, are scalars of x's type.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (from_inputs_) {
      for (int i : {1, 2}) {
        if (!ctx.has_input(i)) continue;
        const InputSpec& t = ctx.tensor_input(i);
        const char* name = i == 1 ? "min" : "max";
        if (t.dtype != x.dtype) {
          throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' has type " +
                                     std::string(DataTypeName(t.dtype)) + ", expected " +
                                     std::string(DataTypeName(x.dtype)));
        }
        if (ShapeElementCount(t.shape) != 1) {
          throw InvalidArgumentError(ctx.Describe() + ": input '" + name + "' must be a scalar, got shape " +
                                     ShapeToString(t.shape));
        }
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.Output(0);
    Dispatch(NumericTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      A lo, hi;
      if (from_inputs_) {
        lo = Bound<T>(ctx, 1, std::numeric_limits<A>::lowest());
        hi = Bound<T>(ctx, 2, std::numeric_limits<A>::max());
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
  // Input i's value (a scalar of type T, Prepare checked), or `def` when it is absent.
  template <typename T>
  static Acc<T> Bound(const KernelContext& ctx, int i, Acc<T> def) {
    const Tensor* t = ctx.input(i);
    if (!t) return def;
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
