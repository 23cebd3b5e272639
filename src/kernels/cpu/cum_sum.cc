// CumSum on the cpu backend: float32, int32 and int64, loops compiled for AVX2 (and a baseline variant). The running
// sum along one axis (the `axis` input: a host input, resolved in Prepare when constant, else by Compute), inclusive
// or exclusive, optionally reversed. X is seen as [outer, n, inner] around the axis:
//   - inner > 1: the n rows of `inner` elements are summed column-wise into a row of accumulators (vectorized over
//     the columns); threads split (block, column range) pairs;
//   - inner == 1 (the last axis): a sequential scan per row; threads split the rows.
// Float32 accumulates in double in ref's order, so results equal ref's; integers wrap like numpy (and ref).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The loop over [outer, n, inner] around the axis.
struct CumSumPlan {
  int64_t outer = 1, n = 1, inner = 1;
};

// Wide accumulator: double for float32 (ref's), uint64 (wrapping) for integers.
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// One ISA's loops for T (cum_sum_kernels.inc).
template <typename T>
struct CumSumFns {
  void (*scan)(const T* in, T* out, int64_t n, bool exclusive, bool reverse);
  void (*rows)(const T* in, T* out, int64_t n, int64_t w, int64_t stride, bool exclusive, bool reverse, Wide<T>* acc);
};

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "kernels/cpu/cum_sum_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

namespace baseline {
#include "kernels/cpu/cum_sum_kernels.inc"
}  // namespace baseline

struct CumSumTable {
  CumSumFns<float> f32;
  CumSumFns<int32_t> i32;
  CumSumFns<int64_t> i64;
};

class CumSum : public OpKernel {
 public:
  CumSum(const ir::Node& node, CumSumTable fns)
      : fns_(fns), exclusive_(node.GetInt("exclusive", 0) != 0), reverse_(node.GetInt("reverse", 0) != 0) {}

  // Y has X's type and shape. X's dtype and rank and the axis input's type and size are checked here; the loop
  // bounds are resolved here when the axis is known, else by Compute from its value.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat && x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'x' must be float32, int32 or int64, got " +
                                 ctx.InputString(0));
    }
    const InputSpec& axis = ctx.tensor_input(1);
    if (axis.dtype != DataType::kInt64 && axis.dtype != DataType::kInt32) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'axis': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    if (ShapeElementCount(axis.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'axis' must hold exactly one value, got " +
                                 std::to_string(ShapeElementCount(axis.shape)));
    }
    if (x.shape.empty()) throw InvalidArgumentError(ctx.Describe() + ": input 'x' must have rank >= 1, got a scalar");
    ctx.SetOutput(0, x.dtype, x.shape);
    if (const Tensor* a = ctx.constant(1)) ctx.EmplaceState(Resolve(x.shape, AxisValue(*a), ctx.Describe()));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const CumSumPlan* known = ctx.state_if_any<CumSumPlan>();
    const CumSumPlan p = known ? *known : Resolve(x.shape(), AxisValue(ctx.required_input(1)), ctx.Describe());
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    switch (x.dtype()) {
      case DataType::kFloat:
        return Run(fns_.f32, x.data<float>(), y.data<float>(), p, ctx.threads());
      case DataType::kInt32:
        return Run(fns_.i32, x.data<int32_t>(), y.data<int32_t>(), p, ctx.threads());
      case DataType::kInt64:
        return Run(fns_.i64, x.data<int64_t>(), y.data<int64_t>(), p, ctx.threads());
      default:
        throw InvalidArgumentError(ctx.Describe() + ": unsupported dtype " + std::string(DataTypeName(x.dtype())));
    }
  }

 private:
  template <typename T>
  void Run(const CumSumFns<T>& fns, const T* in, T* out, const CumSumPlan& p, int threads) const {
    const int64_t n = p.n, inner = p.inner;
    if (inner == 1) {
      ParallelFor(threads, p.outer, std::max<int64_t>(1, 32768 / n), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) fns.scan(in + o * n, out + o * n, n, exclusive_, reverse_);
      });
      return;
    }
    // (block, column range) pairs: a block's columns are independent, so few wide blocks still use every thread.
    constexpr int64_t kColumns = 1024;
    const int64_t ranges = (inner + kColumns - 1) / kColumns;
    const int64_t work = n * std::min(inner, kColumns);
    ParallelFor(threads, p.outer * ranges, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
      auto acc = std::make_unique<Wide<T>[]>(static_cast<size_t>(std::min(inner, kColumns)));
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / ranges, c0 = (it % ranges) * kColumns, w = std::min(kColumns, inner - c0);
        std::fill(acc.get(), acc.get() + w, Wide<T>(0));
        const int64_t start = o * n * inner + c0;
        fns.rows(in + start, out + start, n, w, inner, exclusive_, reverse_, acc.get());
      }
    });
  }

  // The axis input's one value (int32 or int64: Prepare checked).
  static int64_t AxisValue(const Tensor& t) {
    return t.dtype() == DataType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
  }

  static CumSumPlan Resolve(const Shape& x, int64_t axis_value, const std::string& what) {
    const auto rank = static_cast<int64_t>(x.size());
    const int64_t axis = ref::NormalizeAxis(axis_value, rank, what);
    CumSumPlan p;
    p.n = x[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) p.outer *= x[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) p.inner *= x[static_cast<size_t>(d)];
    return p;
  }

  CumSumTable fns_;
  bool exclusive_;
  bool reverse_;
};

}  // namespace

void RegisterCumSumKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    CumSumTable fns;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, {avx2::FnsFor<float>(), avx2::FnsFor<int32_t>(), avx2::FnsFor<int64_t>()}},
      {"baseline", {}, {baseline::FnsFor<float>(), baseline::FnsFor<int32_t>(), baseline::FnsFor<int64_t>()}},
  };
  for (const auto& [since, until] : {std::pair{11, 13}, std::pair{14, kOpsetOpen}}) {
    for (const auto& v : variants) {
      const CumSumTable fns = v.fns;
      r.Add({.op = "CumSum",
             .since = since,
             .until = until,
             .types = {{"T", {DataType::kFloat, DataType::kInt32, DataType::kInt64}},
                       {"T2", {DataType::kInt32, DataType::kInt64}}},
             .create = [fns](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<CumSum>(node, fns);
             },
             .host_inputs = {1},
             .isa = v.isa,
             .name = std::string("cpu.cumsum__") + v.impl + "." + std::to_string(since)});
    }
  }
}

}  // namespace ferry::cpu
