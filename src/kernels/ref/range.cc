// Range: [start, start + delta, ...) up to `limit` (exclusive), max(ceil((limit - start) / delta), 0) elements.
// Integers count exactly; float16/bfloat16 compute through float (opset 27 stash_type=1, the default) or by
// successive additions rounded to the type (any other stash_type). com.microsoft::Range-1 (ONNX Runtime's contrib op)
// is the same op with delta optional (1 when absent); this kernel serves both.
#include <cmath>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using RangeTypes = TypeList<float, double, Float16, BFloat16, int16_t, int32_t, int64_t, int8_t, uint8_t, uint16_t,
                            uint32_t, uint64_t>;

// The element count of the range, in Prepare from constant bounds or in Compute from the data; throws naming
// ctx's node for a zero or non-finite delta or bound, or a range too long to hold.
template <typename T, typename Ctx>
int64_t RangeCount(T start, T limit, T delta, const Ctx& ctx) {
  int64_t n = 0;
  if constexpr (std::is_integral_v<T>) {
    if (delta == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'delta' is 0");
    const __int128 diff = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 d = static_cast<__int128>(delta);
    __int128 q = diff / d;
    if (q * d != diff && ((diff > 0) == (d > 0))) ++q;  // ceil for a positive quotient
    if (q > 0) n = q > INT64_MAX ? INT64_MAX : static_cast<int64_t>(q);
  } else {
    const double s = static_cast<double>(static_cast<Acc<T>>(start));
    const double l = static_cast<double>(static_cast<Acc<T>>(limit));
    const double d = static_cast<double>(static_cast<Acc<T>>(delta));
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
      throw InvalidArgumentError(ctx.Describe() + ": start, limit and delta must be finite with delta != 0");
    }
    const Acc<T> c = static_cast<Acc<T>>((static_cast<Acc<T>>(limit) - static_cast<Acc<T>>(start)) /
                                         static_cast<Acc<T>>(delta));
    const double q = std::ceil(static_cast<double>(c));
    if (q >= 9.2e18) throw ResourceExhaustedError(ctx.Describe() + ": the range has too many elements");
    if (q > 0) n = static_cast<int64_t>(q);
  }
  return n;
}

class Range : public OpKernel {
 public:
  explicit Range(const ir::Node& node) : stash_float_(node.GetInt("stash_type", 1) == 1) {}

  // The output length when start, limit and delta are constants; dynamic otherwise.
  void Prepare(PrepareContext& ctx) const override {
    const bool has_delta = ctx.has_input(2);  // only com.microsoft::Range may omit it
    const InputSpec* in[] = {&ctx.tensor_input(0), &ctx.tensor_input(1),
                             has_delta ? &ctx.tensor_input(2) : &ctx.tensor_input(0)};
    for (const InputSpec* t : in) {
      if (ShapeElementCount(t->shape) != 1 || t->dtype != in[0]->dtype) {
        auto str = [](const InputSpec* x) { return std::string(DataTypeName(x->dtype)) + ShapeToString(x->shape); };
        throw InvalidArgumentError(ctx.Describe() + ": start, limit and delta must be scalars of one type, got " +
                                   str(in[0]) + ", " + str(in[1]) + ", " + (has_delta ? str(in[2]) : "no delta"));
      }
    }
    const Tensor* start = ctx.constant(0);
    const Tensor* limit = ctx.constant(1);
    const Tensor* delta = has_delta ? ctx.constant(2) : nullptr;
    if (!start || !limit || (has_delta && !delta)) return ctx.SetOutputDynamic(0);
    int64_t n = 0;
    Dispatch(RangeTypes{}, in[0]->dtype, ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      n = RangeCount(start->data<T>()[0], limit->data<T>()[0], delta ? delta->data<T>()[0] : T(1), ctx);
    });
    ctx.EmplaceState(n);
    ctx.SetOutput(0, in[0]->dtype, {n});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& start_t = ctx.required_input(0);
    const Tensor& limit_t = ctx.required_input(1);
    const Tensor* delta_t = ctx.input(2);  // absent: 1 (com.microsoft::Range)
    const int64_t* prepared = ctx.state_if_any<int64_t>();
    Dispatch(RangeTypes{}, start_t.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T start = start_t.data<T>()[0], limit = limit_t.data<T>()[0];
      const T delta = delta_t ? delta_t->data<T>()[0] : T(1);
      const int64_t n = prepared ? *prepared : RangeCount(start, limit, delta, ctx);
      Tensor& y = prepared ? ctx.Output(0) : ctx.Output(0, start_t.dtype(), {n});
      T* out = y.data<T>();
      if constexpr (kIsHalf<T>) {
        if (!stash_float_) {
          T v = start;
          for (int64_t i = 0; i < n; ++i) {
            out[i] = v;
            v = static_cast<T>(static_cast<float>(v) + static_cast<float>(delta));
          }
          return;
        }
      }
      if constexpr (std::is_integral_v<T>) {
        __int128 v = start;  // every value lies between start and limit, so the cast back is exact
        for (int64_t i = 0; i < n; ++i, v += delta) out[i] = static_cast<T>(v);
        return;
      }
      using C = Acc<T>;
      for (int64_t i = 0; i < n; ++i) {
        out[i] = static_cast<T>(static_cast<C>(static_cast<C>(start) + static_cast<C>(i) * static_cast<C>(delta)));
      }
    });
  }

 private:
  bool stash_float_;
};

}  // namespace

void RegisterRangeKernels(KernelRegistry& r) {
  r.Add({.op = "Range",
         .since = 11,
         .types = {{"T",
                    {DataType::kFloat, DataType::kDouble, DataType::kInt16, DataType::kInt32, DataType::kInt64,
                     DataType::kFloat16, DataType::kBFloat16}}},
         .create = MakeKernel<Range>,
         .host_inputs = {0, 1, 2}});
  r.Add({.op = "Range",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kInt16, DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Range>,
         .host_inputs = {0, 1, 2}});
}

}  // namespace ferry::ref
