// TopK on the cpu backend: float32 (AVX2 prefilter and a scalar variant), int32/int64 scalar. The k largest (or
// smallest) elements along `axis` and their int64 indices, always sorted, ties keeping the lower index first, NaN
// ranking above every number (as in ref). k is the attribute (opset 1) or the 1-element K input (a host input:
// Prepare plans the outputs when it is constant, else Compute reads it and the outputs are dynamic).
//
// Small k (k <= 128 and 16 k <= n): one pass over each row keeps the best k in a sorted buffer; an element enters
// only when it ranks strictly before the buffer's last, and the AVX2 variant skips 8 elements at a time while none
// can (one compare against that threshold). Larger k: ref's partial sort of (value, index) pairs. A strided axis
// (inner > 1) gathers each column into a contiguous row first. Threads split the rows.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/top_k.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// a ranks strictly before b (values only): larger first for kLargest, else smaller first; NaN above every number.
template <bool kLargest, typename T>
inline bool Before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(kLargest ? a : b)) return !std::isnan(kLargest ? b : a);
    if (std::isnan(kLargest ? b : a)) return false;
  }
  return kLargest ? a > b : a < b;
}

// The first index in [j, n) whose element may rank before `t` (n when none): a superset filter, so the caller
// confirms with Before(). The scalar form filters nothing.
using SkipFn = int64_t (*)(const float* x, int64_t j, int64_t n, float t);

int64_t SkipNone(const float*, int64_t j, int64_t, float) { return j; }

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

template <bool kLargest>
int64_t Skip(const float* x, int64_t j, int64_t n, float t) {
  const __m256 vt = _mm256_set1_ps(t);
  for (; j + 8 <= n; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    // Largest: v > t or v NaN; smallest: v < t or t NaN (then every number ranks before it).
    const __m256 m = kLargest ? _mm256_or_ps(_mm256_cmp_ps(v, vt, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q))
                              : _mm256_or_ps(_mm256_cmp_ps(v, vt, _CMP_LT_OQ), _mm256_cmp_ps(vt, vt, _CMP_UNORD_Q));
    const int bits = _mm256_movemask_ps(m);
    if (bits != 0) return j + __builtin_ctz(static_cast<unsigned>(bits));
  }
  return j;
}

}  // namespace avx2
#pragma GCC pop_options

// Per-thread scratch: a gathered column and the (value, index) pairs of the partial sort.
template <typename T>
struct Scratch {
  std::vector<T> column;
  std::vector<std::pair<T, int64_t>> items;
};

// The top k of row x[0, n) into vals / idx (k >= 1).
template <bool kLargest, typename T>
void RowTopK(const T* x, int64_t n, int64_t k, T* vals, int64_t* idx, SkipFn skip, Scratch<T>& s) {
  if (k > 128 || 16 * k > n) {
    s.items.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) s.items[static_cast<size_t>(j)] = {x[j], j};
    std::partial_sort(s.items.begin(), s.items.begin() + k, s.items.end(), [](const auto& p, const auto& q) {
      return Before<kLargest>(p.first, q.first) || (!Before<kLargest>(q.first, p.first) && p.second < q.second);
    });
    for (int64_t j = 0; j < k; ++j) {
      vals[j] = s.items[static_cast<size_t>(j)].first;
      idx[j] = s.items[static_cast<size_t>(j)].second;
    }
    return;
  }
  // Insert x[j] (ranking before vals[size - 1], or filling) keeping the buffer sorted; equal values keep index order.
  auto insert = [&](int64_t j, int64_t size) {
    int64_t pos = size;
    while (pos > 0 && Before<kLargest>(x[j], vals[pos - 1])) {
      if (pos < k) vals[pos] = vals[pos - 1], idx[pos] = idx[pos - 1];
      --pos;
    }
    vals[pos] = x[j];
    idx[pos] = j;
  };
  for (int64_t j = 0; j < k; ++j) insert(j, j);
  for (int64_t j = k; j < n; ++j) {
    if constexpr (std::is_same_v<T, float>) {
      j = skip(x, j, n, vals[k - 1]);
      if (j >= n) break;
    }
    if (Before<kLargest>(x[j], vals[k - 1])) insert(j, k);
  }
}

using ref::TopKPlan;

class TopK final : public ref::TopKBase {
 public:
  TopK(const ir::Node& node, SkipFn skip_largest, SkipFn skip_smallest)
      : TopKBase(node), skip_(largest() ? skip_largest : skip_smallest) {}

  // X's dtype, then ref's checks and plan.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat && x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be float32, int32 or int64, got " +
                                 ctx.InputString(0));
    }
    TopKBase::Prepare(ctx);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const TopKPlan* prepared = ctx.state_if_any<TopKPlan>();
    TopKPlan resolved;
    if (!prepared) resolved = Resolve(x.shape(), ctx.input(1), ctx.Describe());  // K read at run time
    const TopKPlan& p = prepared ? *prepared : resolved;
    Tensor& values = prepared ? ctx.OutputUninitialized(0) : ctx.OutputUninitialized(0, x.dtype(), p.out_shape);
    Tensor& indices =
        prepared ? ctx.OutputUninitialized(1) : ctx.OutputUninitialized(1, DataType::kInt64, p.out_shape);
    if (values.size() == 0) return;
    switch (x.dtype()) {
      case DataType::kFloat:
        return Run(x.data<float>(), p, values.data<float>(), indices.data<int64_t>(), ctx.threads());
      case DataType::kInt32:
        return Run(x.data<int32_t>(), p, values.data<int32_t>(), indices.data<int64_t>(), ctx.threads());
      case DataType::kInt64:
        return Run(x.data<int64_t>(), p, values.data<int64_t>(), indices.data<int64_t>(), ctx.threads());
      default:
        throw InvalidArgumentError(ctx.Describe() + ": unsupported dtype " + std::string(DataTypeName(x.dtype())));
    }
  }

 private:
  template <typename T>
  void Run(const T* x, const TopKPlan& p, T* vals, int64_t* idx, int threads) const {
    if (largest()) {
      RunDirected<true>(x, p, vals, idx, threads);
    } else {
      RunDirected<false>(x, p, vals, idx, threads);
    }
  }

  template <bool kLargest, typename T>
  void RunDirected(const T* x, const TopKPlan& p, T* vals, int64_t* idx, int threads) const {
    const int64_t k = p.k, n = p.n, inner = p.inner;
    ParallelFor(threads, p.outer * inner, std::max<int64_t>(1, 8192 / n), [&](int64_t b, int64_t e) {
      Scratch<T> s;
      std::vector<T> v(inner == 1 ? 0 : static_cast<size_t>(k));
      std::vector<int64_t> ix(inner == 1 ? 0 : static_cast<size_t>(k));
      for (int64_t r = b; r < e; ++r) {
        const int64_t o = r / inner, i = r % inner;
        if (inner == 1) {
          RowTopK<kLargest>(x + o * n, n, k, vals + o * k, idx + o * k, skip_, s);
          continue;
        }
        s.column.resize(static_cast<size_t>(n));
        const T* src = x + o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) s.column[static_cast<size_t>(j)] = src[j * inner];
        RowTopK<kLargest>(s.column.data(), n, k, v.data(), ix.data(), skip_, s);
        for (int64_t j = 0; j < k; ++j) {
          vals[(o * k + j) * inner + i] = v[static_cast<size_t>(j)];
          idx[(o * k + j) * inner + i] = ix[static_cast<size_t>(j)];
        }
      }
    });
  }

  SkipFn skip_;
};

}  // namespace

void RegisterTopKKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    SkipFn largest, smallest;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::Skip<true>, &avx2::Skip<false>},
      {"scalar", {}, &SkipNone, &SkipNone},
  };
  // Opset 1: k attribute; 10: K input; 11: largest / sorted and integer types (ref's ranges).
  const struct {
    int since, until;
    bool ints;
  } versions[] = {{1, 9, false}, {10, 10, false}, {11, 23, true}, {24, kOpsetOpen, true}};
  for (const auto& ver : versions) {
    const std::vector<DataType> types = ver.ints ? std::vector<DataType>{DataType::kFloat, DataType::kInt32,
                                                                         DataType::kInt64}
                                                 : std::vector<DataType>{DataType::kFloat};
    for (const auto& v : variants) {
      const SkipFn largest = v.largest, smallest = v.smallest;
      KernelDef def{.op = "TopK",
                    .since = ver.since,
                    .until = ver.until,
                    .types = {{"T", types}, {"I", {DataType::kInt64}}},
                    .create = [largest, smallest](const ir::Node& node,
                                                  const KernelOptions&) -> std::unique_ptr<OpKernel> {
                      return std::make_unique<TopK>(node, largest, smallest);
                    },
                    .isa = v.isa,
                    .name = std::string("cpu.topk__") + v.impl + "." + std::to_string(ver.since)};
      if (ver.since >= 10) def.host_inputs = {1};
      r.Add(std::move(def));
    }
  }
}

}  // namespace ferry::cpu
