// CumSum and CumProd on the cpu backend (cum_sum.h): float32, float64, int32 and int64, loops compiled for AVX2
// (and a baseline variant). The running sum or product along one axis (the `axis` input: a host input, resolved
// in Prepare when constant, else by Compute; ref's checks, ref/cumulative.h), inclusive or exclusive, optionally
// reversed. X is seen as [outer, n, inner] around the axis:
//   - inner > 1: the n rows of `inner` elements are accumulated column-wise into a row of accumulators
//     (vectorized over the columns); threads split (block, column range) pairs;
//   - inner == 1 (the last axis): a sequential scan per row; threads split the rows.
// Floats accumulate in double in ref's order, so results equal ref's; integers wrap like numpy (and ref).
#include "kernels/cpu/cum_sum.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/cumulative.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Wide accumulator: double for floats (ref's), uint64 (wrapping) for integers.
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

// One ISA's loops for T (cum_sum_kernels.inc).
template <typename T>
struct CumFns {
  void (*scan)(const T* in, T* out, int64_t n, bool exclusive, bool reverse);
  void (*rows)(const T* in, T* out, int64_t n, int64_t w, int64_t stride, bool exclusive, bool reverse, Wide<T>* acc);
};

struct CumTable {
  CumFns<float> f32;
  CumFns<double> f64;
  CumFns<int32_t> i32;
  CumFns<int64_t> i64;
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

class Cumulative : public OpKernel {
 public:
  Cumulative(const ir::Node& node, bool prod, CumTable fns)
      : fns_(fns),
        prod_(prod),
        exclusive_(node.GetInt("exclusive", 0) != 0),
        reverse_(node.GetInt("reverse", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override { ref::PrepareCumulative(ctx); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ref::CumulativeBounds p = ref::CumulativeBoundsOf(ctx);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    switch (x.dtype()) {
      case DataType::kFloat:
        return Run(fns_.f32, x.data<float>(), y.data<float>(), p, ctx.threads());
      case DataType::kDouble:
        return Run(fns_.f64, x.data<double>(), y.data<double>(), p, ctx.threads());
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
  void Run(const CumFns<T>& fns, const T* in, T* out, const ref::CumulativeBounds& p, int threads) const {
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
    const Wide<T> start_value = prod_ ? 1 : 0;
    ParallelFor(threads, p.outer * ranges, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
      auto acc = std::make_unique<Wide<T>[]>(static_cast<size_t>(std::min(inner, kColumns)));
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / ranges, c0 = (it % ranges) * kColumns, w = std::min(kColumns, inner - c0);
        std::fill(acc.get(), acc.get() + w, start_value);
        const int64_t start = o * n * inner + c0;
        fns.rows(in + start, out + start, n, w, inner, exclusive_, reverse_, acc.get());
      }
    });
  }

  CumTable fns_;
  bool prod_;
  bool exclusive_;
  bool reverse_;
};

}  // namespace

void AddCumulativeKernels(KernelRegistry& r, const std::string& op, bool prod, int since, int until) {
  const struct {
    const char* impl;
    IsaSet isa;
    CumTable fns;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, prod ? avx2::TableFor<true>() : avx2::TableFor<false>()},
      {"baseline", {}, prod ? baseline::TableFor<true>() : baseline::TableFor<false>()},
  };
  std::string lower = op;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& v : variants) {
    const CumTable fns = v.fns;
    r.Add({.op = op,
           .since = since,
           .until = until,
           .types = {{"T", {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64}},
                     {"T2", {DataType::kInt32, DataType::kInt64}}},
           .create = [fns, prod](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Cumulative>(node, prod, fns);
           },
           .host_inputs = {1},
           .isa = v.isa,
           .name = "cpu." + lower + "__" + v.impl + "." + std::to_string(since)});
  }
}

void RegisterCumSumKernels(KernelRegistry& r) {
  AddCumulativeKernels(r, "CumSum", false, 11, 13);
  AddCumulativeKernels(r, "CumSum", false, 14, kOpsetOpen);
}

}  // namespace ferry::cpu
