// Range: [start, start + delta, ...) up to `limit` (exclusive), max(ceil((limit - start) / delta), 0) elements,
// for float32, int32 and int64 (the other types fall back to ref). Each element is computed from its position,
// out[i] = start + i * delta (float32 in float, as ref; integers exactly), so the output is filled in parallel
// chunks when long. The count comes from ref's rule (ref/range.cc), in Prepare when start, limit and delta are
// constants (the output is declared there), else in Compute from the data (the output is dynamic).
// com.microsoft::Range-1 (ONNX Runtime's contrib op) is the same op with delta optional (1 when absent); this kernel
// serves both.
#include <cmath>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using CpuRangeTypes = ref::TypeList<float, int32_t, int64_t>;

// The element count (ref's rule); throws naming ctx's node for a zero or non-finite delta or bound, or a range too
// long to hold.
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
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) {
      throw InvalidArgumentError(ctx.Describe() + ": start, limit and delta must be finite with delta != 0");
    }
    const double q = std::ceil(static_cast<double>(static_cast<T>((limit - start) / delta)));
    if (q >= 9.2e18) throw ResourceExhaustedError(ctx.Describe() + ": the range has too many elements");
    if (q > 0) n = static_cast<int64_t>(q);
  }
  return n;
}

class Range : public OpKernel {
 public:
  explicit Range(const ir::Node&) {}

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
    ref::Dispatch(CpuRangeTypes{}, in[0]->dtype, ctx.Describe(), [&](auto tag) {
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
    ref::Dispatch(CpuRangeTypes{}, start_t.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const T start = start_t.data<T>()[0], limit = limit_t.data<T>()[0];
      const T delta = delta_t ? delta_t->data<T>()[0] : T(1);
      const int64_t n = prepared ? *prepared : RangeCount(start, limit, delta, ctx);
      Tensor& y = prepared ? ctx.OutputUninitialized(0) : ctx.OutputUninitialized(0, start_t.dtype(), {n});
      T* out = y.data<T>();
      const int threads = CopyThreads(ctx.threads(), n * static_cast<int64_t>(sizeof(T)));
      const int64_t grain = kCopyGrainBytes / static_cast<int64_t>(sizeof(T));
      ParallelFor(threads, n, grain, [&](int64_t begin, int64_t end) {
        if constexpr (std::is_integral_v<T>) {
          // Every value lies between start and limit, so the cast back is exact.
          __int128 v = static_cast<__int128>(start) + static_cast<__int128>(begin) * delta;
          for (int64_t i = begin; i < end; ++i, v += delta) out[i] = static_cast<T>(v);
        } else {
          for (int64_t i = begin; i < end; ++i) out[i] = start + static_cast<T>(i) * delta;
        }
      });
    });
  }
};

}  // namespace

void RegisterRangeKernels(KernelRegistry& r) {
  r.Add({.op = "Range",
         .since = 11,
         .types = {{"T", {DataType::kFloat, DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Range>,
         .host_inputs = {0, 1, 2},
         .name = "cpu.f32_i32_i64_range__parallel.11"});
  r.Add({.op = "Range",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat, DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Range>,
         .host_inputs = {0, 1, 2},
         .name = "cpu.com.microsoft.f32_i32_i64_range__parallel.1"});
}

}  // namespace ferry::cpu
