// Variadic elementwise ops with numpy broadcasting of all inputs (from opset 8; opsets 1-6 required equal
// shapes, which broadcasting accepts too): Sum Mean Max Min. Max/Min propagate NaN like numpy. Prepare checks the
// inputs' types and broadcast.
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

enum class Variadic { kSum, kMean, kMax, kMin };

template <Variadic kOp>
class VariadicKernel : public OpKernel {
 public:
  explicit VariadicKernel(const ir::Node&) {}

  // Every input a tensor of input 0's type; the output has their broadcast shape.
  void Prepare(PrepareContext& ctx) const override {
    std::vector<Shape> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      const InputSpec& t = ctx.tensor_input(i);
      if (i > 0 && t.dtype != ctx.input(0).dtype) {
        throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(i) + " has type " +
                                   std::string(DataTypeName(t.dtype)) + ", expected " +
                                   std::string(DataTypeName(ctx.input(0).dtype)) + " (" + ctx.InputString(i) + ")");
      }
      shapes.push_back(t.shape);
    }
    if (shapes.empty()) throw InvalidModelError(ctx.Describe() + ": needs at least one input");
    ctx.SetOutput(0, ctx.input(0).dtype, BroadcastShapes(shapes, ctx.Describe()));
  }

  void Compute(KernelContext& ctx) const override {
    const int n = ctx.input_count();
    std::vector<const Tensor*> ins;
    for (int i = 0; i < n; ++i) ins.push_back(&ctx.required_input(i));
    Tensor& out = ctx.Output(0);
    Dispatch(NumericTypes{}, ins[0]->dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = Acc<T>;
      BroadcastCopy<T>(ctx.threads(), *ins[0], out);
      for (size_t k = 1; k < ins.size(); ++k) {
        BinaryMap<T, T, T>(ctx.threads(), out, *ins[k], out, [](T a, T b) -> T { return Combine<T>(a, b); });
      }
      if constexpr (kOp == Variadic::kMean) {
        const A count = static_cast<A>(ins.size());
        T* p = out.data<T>();
        UnaryMap(ctx.threads(), p, p, out.size(), [count](T v) { return static_cast<T>(static_cast<A>(v) / count); });
      }
    });
  }

 private:
  template <typename T>
  static T Combine(T a, T b) {
    using A = Acc<T>;
    const A x = static_cast<A>(a), y = static_cast<A>(b);
    if constexpr (kOp == Variadic::kSum || kOp == Variadic::kMean) {
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<WrapInt<T>>(static_cast<WrapInt<T>>(a) + static_cast<WrapInt<T>>(b)));
      } else {
        return static_cast<T>(x + y);
      }
    } else {
      if (x != x) return a;  // NaN propagates
      if (y != y) return b;
      if constexpr (kOp == Variadic::kMax) {
        return x >= y ? a : b;
      } else {
        return x <= y ? a : b;
      }
    }
  }
};

}  // namespace

void RegisterVariadicKernels(KernelRegistry& r) {
  // Sum/Mean: 1 (consumed_inputs, ignored), 6, 8 (broadcasting), 13 (bfloat16): float types.
  r.Add({.op = "Sum", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<VariadicKernel<Variadic::kSum>>});
  r.Add({.op = "Mean", .since = 1, .types = {{"T", dtypes::Floats()}}, .create = MakeKernel<VariadicKernel<Variadic::kMean>>});
  // Max/Min: 1, 6, 8 (broadcasting), 12 (integer types), 13 (bfloat16).
  r.Add({.op = "Max", .since = 1, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<VariadicKernel<Variadic::kMax>>});
  r.Add({.op = "Min", .since = 1, .types = {{"T", dtypes::Numeric()}}, .create = MakeKernel<VariadicKernel<Variadic::kMin>>});
}

}  // namespace ferry::ref
