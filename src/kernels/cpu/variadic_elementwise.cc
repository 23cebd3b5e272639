// Sum Mean Max Min (opsets 6, 8, 12, 13: any number of inputs, numpy broadcasting of all) on the cpu backend with
// ref's semantics: float32 for all four, int32 and int64 for Max and Min (opset 12+; the schema gives Sum and
// Mean float types only). The inputs fold left to right in ref's order: y = x0 op x1, then y = y op x2, ...; Mean
// divides the float sum by the input count at the end. Max/Min propagate NaN like numpy (the first NaN met wins)
// and otherwise keep the earlier operand on ties (Max(+0, -0) = +0, as ref). Sum wraps integers. Opset 1 (the
// ignored consumed_inputs) is left to ref. Prepare checks the types and resolves the output shape and one
// broadcast plan per step once per signature (binary_elementwise_map.h); the row loops come in AVX-512F,
// AVX2+FMA and baseline variants, registered best first.
#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct SumOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};
struct MaxOp {
  template <class T>
  static T Apply(T a, T b) {
    if (a != a) return a;  // NaN propagates (never taken for integers)
    if (b != b) return b;
    return a >= b ? a : b;
  }
};
struct MinOp {
  template <class T>
  static T Apply(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    return a <= b ? a : b;
  }
};

// y = a / count for the mean.
struct DivideOp {
  static float Apply(float a, float count) { return a / count; }
};

// The prepared walk: with one input, a broadcast copy of it (step 0 maps x0 with itself, keeping the first
// operand); else step 0 maps x0 and x1 into Y's shape and step k (k >= 1) maps Y and x(k+1).
struct VariadicPlan {
  std::vector<BinaryMapPlan> steps;
};

template <class T, class Op, bool kMean>
class VariadicKernel final : public OpKernel {
 public:
  VariadicKernel(DataType dtype, MapIsa isa)
      : dtype_(dtype),
        rows_(MapRows<T, T, T, Op>(isa)),
        first_(MapRows<T, T, T, FirstOp>(isa)),
        divide_(MapRows<float, float, float, DivideOp>(isa)) {}

  // At least one input, each of the kernel's type, shapes that broadcast (InvalidArgumentError /
  // InvalidModelError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const int n = ctx.input_count();
    if (n == 0) throw InvalidModelError(ctx.Describe() + ": needs at least one input");
    std::vector<Shape> shapes;
    for (int i = 0; i < n; ++i) {
      const InputSpec& t = ctx.tensor_input(i);
      if (t.dtype != dtype_) {
        throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + ": expected " +
                                   std::string(DataTypeName(dtype_)) + " like every input");
      }
      shapes.push_back(t.shape);
    }
    const Shape out = ref::BroadcastShapes(shapes, ctx.Describe());
    VariadicPlan p;
    p.steps.emplace_back(shapes[0], n > 1 ? shapes[1] : shapes[0], out);
    for (int i = 2; i < n; ++i) p.steps.emplace_back(out, shapes[static_cast<size_t>(i)], out);
    ctx.SetOutput(0, dtype_, out);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const VariadicPlan& p = ctx.state<VariadicPlan>();
    const int n = ctx.input_count();
    Tensor& out = ctx.OutputUninitialized(0);
    T* po = out.data<T>();
    const int threads = ctx.threads();
    const T* x0 = ctx.required_input(0).data<T>();
    if (n == 1) {
      RunBinaryMap(threads, p.steps[0], x0, x0, po, first_);
    } else {
      RunBinaryMap(threads, p.steps[0], x0, ctx.required_input(1).data<T>(), po, rows_);
    }
    for (int i = 2; i < n; ++i) {
      RunBinaryMap(threads, p.steps[static_cast<size_t>(i - 1)], po, ctx.required_input(i).data<T>(), po, rows_);
    }
    if constexpr (kMean) {
      const float count = static_cast<float>(n);
      ParallelFor(threads, p.steps[0].n, kBinaryMapGrain,
                  [&](int64_t s, int64_t e) { divide_.vs(po + s, count, po + s, e - s); });
    }
  }

 private:
  struct FirstOp {
    static T Apply(T a, T) { return a; }
  };
  DataType dtype_;
  BinaryMapRows<T, T, T> rows_, first_;
  BinaryMapRows<float, float, float> divide_;
};

// One kernel per ISA variant, best first.
template <class T, class Op, bool kMean = false>
void Add(KernelRegistry& r, const std::string& op, const std::string& lower, int since, const std::string& tag,
         DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    r.Add({.op = op,
           .since = since,
           .types = {{"T", {dtype}}},
           .create = [dtype, isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<VariadicKernel<T, Op, kMean>>(dtype, isa);
           },
           .isa = MapIsaSet(isa),
           .name = "cpu." + tag + "_" + lower + "__" + MapIsaName(isa) + "." + std::to_string(since)});
  }
}

}  // namespace

void RegisterVariadicElementwiseKernels(KernelRegistry& r) {
  // Sum/Mean: 6, 8 (broadcasting), 13 (bfloat16: left to ref), float types. Max/Min: 6, 8, 12 (integer types), 13.
  Add<float, SumOp>(r, "Sum", "sum", 6, "f32", DataType::kFloat);
  Add<float, SumOp, true>(r, "Mean", "mean", 6, "f32", DataType::kFloat);
  Add<float, MaxOp>(r, "Max", "max", 6, "f32", DataType::kFloat);
  Add<int32_t, MaxOp>(r, "Max", "max", 12, "i32", DataType::kInt32);
  Add<int64_t, MaxOp>(r, "Max", "max", 12, "i64", DataType::kInt64);
  Add<float, MinOp>(r, "Min", "min", 6, "f32", DataType::kFloat);
  Add<int32_t, MinOp>(r, "Min", "min", 12, "i32", DataType::kInt32);
  Add<int64_t, MinOp>(r, "Min", "min", 12, "i64", DataType::kInt64);
}

}  // namespace ferry::cpu
