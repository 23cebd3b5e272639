// Sum Mean Max Min (opsets 6, 8, 12, 13: any number of inputs, numpy broadcasting of all) on the cpu backend with
// ref's semantics: float32, float64 and float16 for all four, and every integer type (int8..int64, uint8..uint64)
// for Max and Min (opset 12+; the schema gives Sum and Mean float types only). float16 computes in float32 and
// rounds after each step, as ref does (HalfMapRows); bfloat16 is left to ref. The inputs fold left to right in
// ref's order: y = x0 op x1, then y = y op x2, ...; Mean divides the sum by the input count at the end. Max/Min
// propagate NaN like numpy (the first NaN met wins) and otherwise keep the earlier operand on ties (Max(+0, -0) =
// +0, as ref). Sum wraps integers. Opset 1 (the ignored consumed_inputs) is left to ref. Prepare checks the types
// and resolves the output shape and one broadcast plan per step once per signature (binary_elementwise_map.h); the
// row loops come in AVX-512F, AVX2+FMA and baseline variants, registered best first (float16: the baseline one).
#include <algorithm>
#include <cstdint>
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
  template <class T>
  static T Apply(T a, T count) {
    return a / count;
  }
};

// The row loops of Op on T: float16 through float32 in blocks, the others plain loops compiled for `isa`.
template <class T, class Op>
BinaryMapRows<T, T, T> Rows(MapIsa isa) {
  if constexpr (ref::kIsHalf<T>) {
    return HalfMapRows<T, Op>();
  } else {
    return MapRows<T, T, T, Op>(isa);
  }
}

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
        rows_(Rows<T, Op>(isa)),
        first_(MapRows<T, T, T, FirstOp>(isa)),
        divide_(Rows<T, DivideOp>(isa)) {}

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
      const T count = static_cast<T>(n);  // exact: a model has far fewer than 2^11 inputs
      ParallelFor(threads, p.steps[0].n, kBinaryMapGrain,
                  [&](int64_t s, int64_t e) { divide_.vs(po + s, count, po + s, e - s); });
    }
  }

 private:
  struct FirstOp {
    static T Apply(T a, T) { return a; }
  };
  DataType dtype_;
  BinaryMapRows<T, T, T> rows_, first_, divide_;
};

// One kernel per ISA variant, best first.
template <class T, class Op, bool kMean = false>
void Add(KernelRegistry& r, const std::string& op, const std::string& lower, int since, const std::string& tag,
         DataType dtype) {
  for (MapIsa isa : kMapIsas) {
    if (ref::kIsHalf<T> && isa != MapIsa::kScalar) continue;  // the float loops inside are the baseline ones
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
  auto floats = [&]<class T>(T, const std::string& tag, DataType dtype) {
    Add<T, SumOp>(r, "Sum", "sum", 6, tag, dtype);
    Add<T, SumOp, true>(r, "Mean", "mean", 6, tag, dtype);
    Add<T, MaxOp>(r, "Max", "max", 6, tag, dtype);
    Add<T, MinOp>(r, "Min", "min", 6, tag, dtype);
  };
  floats(float{}, "f32", DataType::kFloat);
  floats(double{}, "f64", DataType::kDouble);
  floats(Float16{}, "f16", DataType::kFloat16);
  auto ints = [&]<class T>(T, const std::string& tag, DataType dtype) {
    Add<T, MaxOp>(r, "Max", "max", 12, tag, dtype);
    Add<T, MinOp>(r, "Min", "min", 12, tag, dtype);
  };
  ints(int8_t{}, "i8", DataType::kInt8);
  ints(int16_t{}, "i16", DataType::kInt16);
  ints(int32_t{}, "i32", DataType::kInt32);
  ints(int64_t{}, "i64", DataType::kInt64);
  ints(uint8_t{}, "u8", DataType::kUint8);
  ints(uint16_t{}, "u16", DataType::kUint16);
  ints(uint32_t{}, "u32", DataType::kUint32);
  ints(uint64_t{}, "u64", DataType::kUint64);
}

}  // namespace ferry::cpu
