// ArgMax and ArgMin on the cpu backend: float32 with AVX2 loops (and a scalar variant), int32/int64 scalar. The
// int64 index of the largest / smallest element along `axis` (keepdims, select_last_index), X seen as
// [outer, n, inner] around the axis (resolved in Prepare). As in ref, NaN counts as the extreme for both: the first
// NaN wins, or the last with select_last_index; ties keep the first (last) index.
//   - inner == 1 (the last axis: class scores): one vector pass for the extreme and whether a NaN occurs, then a
//     scan for its first (last) position;
//   - inner > 1: per column the best value and its row, vertical SIMD over the columns (8 at a time).
// Threads split the outer rows (inner == 1) or (row, column block) pairs.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// True when a is strictly "better" than b: larger for ArgMax, smaller for ArgMin; NaN beats any number (ref's).
template <bool kMax, typename A>
inline bool Better(A a, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return kMax ? a > b : a < b;
}

// The index along one row of n contiguous elements (n >= 1).
template <bool kMax, typename T>
int64_t RowScalar(const T* x, int64_t n, bool last) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (last ? !Better<kMax>(x[best], x[j]) : Better<kMax>(x[j], x[best])) best = j;
  }
  return best;
}

// Columns [0, w) of n rows `stride` apart: idx[i] = the best row of column i.
template <bool kMax, typename T>
void ColumnsScalar(const T* x, int64_t n, int64_t stride, int64_t w, int64_t* idx, bool last) {
  for (int64_t i = 0; i < w; ++i) {
    T best = x[i];
    int64_t b = 0;
    for (int64_t j = 1; j < n; ++j) {
      const T v = x[j * stride + i];
      if (last ? !Better<kMax>(best, v) : Better<kMax>(v, best)) best = v, b = j;
    }
    idx[i] = b;
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

// The extreme over the row (NaN when one occurs), then its first (last) position.
template <bool kMax>
int64_t Row(const float* x, int64_t n, bool last) {
  __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0;
  __m256 nan = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    m0 = kMax ? _mm256_max_ps(a, m0) : _mm256_min_ps(a, m0);  // a NaN keeps m0; `nan` records it
    m1 = kMax ? _mm256_max_ps(b, m1) : _mm256_min_ps(b, m1);
    nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q)));
  }
  m0 = kMax ? _mm256_max_ps(m0, m1) : _mm256_min_ps(m0, m1);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m0);
  bool has_nan = _mm256_movemask_ps(nan) != 0;
  float m = lanes[0];
  for (int j = 1; j < 8; ++j) m = (kMax ? lanes[j] > m : lanes[j] < m) ? lanes[j] : m;
  for (; i < n; ++i) {
    if (std::isnan(x[i])) has_nan = true;
    else if (kMax ? x[i] > m : x[i] < m) m = x[i];
  }
  if (std::isnan(x[0])) has_nan = true;
  if (last) {
    for (int64_t j = n; j-- > 0;) {
      if (has_nan ? std::isnan(x[j]) : x[j] == m) return j;
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      if (has_nan ? std::isnan(x[j]) : x[j] == m) return j;
    }
  }
  return 0;
}

// Columns [0, w): the best value and row per column, 8 columns per vector; the rest scalar.
template <bool kMax>
void Columns(const float* x, int64_t n, int64_t stride, int64_t w, int64_t* idx, bool last) {
  int64_t i = 0;
  for (; i + 8 <= w; i += 8) {
    __m256 best = _mm256_loadu_ps(x + i);
    __m256i row = _mm256_setzero_si256();
    __m256 bn = _mm256_cmp_ps(best, best, _CMP_UNORD_Q);
    for (int64_t j = 1; j < n; ++j) {
      const __m256 v = _mm256_loadu_ps(x + j * stride + i);
      const __m256 vn = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
      __m256 take;
      if (last) {  // !Better(best, v)
        const __m256 bv = _mm256_cmp_ps(best, v, kMax ? _CMP_GT_OQ : _CMP_LT_OQ);
        take = _mm256_xor_ps(_mm256_or_ps(bv, _mm256_andnot_ps(vn, bn)), _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
      } else {  // Better(v, best)
        const __m256 vb = _mm256_cmp_ps(v, best, kMax ? _CMP_GT_OQ : _CMP_LT_OQ);
        take = _mm256_or_ps(vb, _mm256_andnot_ps(bn, vn));
      }
      best = _mm256_blendv_ps(best, v, take);
      bn = _mm256_blendv_ps(bn, vn, take);
      row = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(row), _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(j))),
                           take));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(row)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + i + 4),
                        _mm256_cvtepi32_epi64(_mm256_extracti128_si256(row, 1)));
  }
  if (i < w) ColumnsScalar<kMax>(x + i, n, stride, w - i, idx + i, last);
}

}  // namespace avx2
#pragma GCC pop_options

// One ISA's float32 loops.
struct ArgFns {
  int64_t (*row)(const float* x, int64_t n, bool last);
  void (*columns)(const float* x, int64_t n, int64_t stride, int64_t w, int64_t* idx, bool last);
};

// X as [outer, n, inner] around the axis.
struct ArgPlan {
  int64_t outer = 1, n = 1, inner = 1;
};

template <bool kMax>
class ArgExtremum : public OpKernel {
 public:
  ArgExtremum(const ir::Node& node, ArgFns fns)
      : fns_(fns),
        axis_(node.GetInt("axis", 0)),
        keepdims_(node.GetInt("keepdims", 1) != 0),
        select_last_(node.GetInt("select_last_index", 0) != 0) {}

  // Checks X's dtype and the axis; an empty axis (with a non-empty output) is an error, as in ref.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat && x.dtype != DataType::kInt32 && x.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' must be float32, int32 or int64, got " +
                                 ctx.InputString(0));
    }
    const auto rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    ArgPlan p;
    p.n = rank ? x.shape[static_cast<size_t>(axis)] : 1;
    Shape out_shape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = x.shape[static_cast<size_t>(d)];
      if (d < axis) p.outer *= dim;
      if (d > axis) p.inner *= dim;
      if (d != axis) {
        out_shape.push_back(dim);
      } else if (keepdims_) {
        out_shape.push_back(1);
      }
    }
    if (ShapeElementCount(out_shape) != 0 && p.n == 0) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'data' has shape " + ShapeToString(x.shape) +
                                 "; cannot take the arg " + (kMax ? "max" : "min") + " of an empty axis " +
                                 std::to_string(axis));
    }
    ctx.EmplaceState(p);
    ctx.SetOutput(0, DataType::kInt64, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ArgPlan& p = ctx.state<ArgPlan>();
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    switch (x.dtype()) {
      case DataType::kFloat:
        return Run(x.data<float>(), p, y.data<int64_t>(), ctx.threads(), fns_.row, fns_.columns);
      case DataType::kInt32:
        return Run(x.data<int32_t>(), p, y.data<int64_t>(), ctx.threads(), &RowScalar<kMax, int32_t>,
                   &ColumnsScalar<kMax, int32_t>);
      case DataType::kInt64:
        return Run(x.data<int64_t>(), p, y.data<int64_t>(), ctx.threads(), &RowScalar<kMax, int64_t>,
                   &ColumnsScalar<kMax, int64_t>);
      default:
        throw InvalidArgumentError(ctx.Describe() + ": unsupported dtype " + std::string(DataTypeName(x.dtype())));
    }
  }

 private:
  template <typename T, typename RowFn, typename ColumnsFn>
  void Run(const T* x, const ArgPlan& p, int64_t* y, int threads, RowFn row, ColumnsFn columns) const {
    const int64_t n = p.n, inner = p.inner;
    const bool last = select_last_;
    if (inner == 1) {
      ParallelFor(threads, p.outer, std::max<int64_t>(1, 32768 / n), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) y[o] = row(x + o * n, n, last);
      });
      return;
    }
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (inner + kBlock - 1) / kBlock;
    const int64_t work = n * std::min(inner, kBlock);
    ParallelFor(threads, p.outer * blocks, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / blocks, c0 = (it % blocks) * kBlock, w = std::min(kBlock, inner - c0);
        columns(x + o * n * inner + c0, n, inner, w, y + o * inner + c0, last);
      }
    });
  }

  ArgFns fns_;
  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

template <bool kMax>
void RegisterArg(KernelRegistry& r, const char* op, const char* lower) {
  const struct {
    const char* impl;
    IsaSet isa;
    ArgFns fns;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, {&avx2::Row<kMax>, &avx2::Columns<kMax>}},
      {"scalar", {}, {&RowScalar<kMax, float>, &ColumnsScalar<kMax, float>}},
  };
  const int versions[] = {1, 11, 12, 13};
  for (int i = 0; i < 4; ++i) {
    for (const auto& v : variants) {
      const ArgFns fns = v.fns;
      r.Add({.op = op,
             .since = versions[i],
             .until = i < 3 ? versions[i + 1] - 1 : kOpsetOpen,
             .types = {{"T", {DataType::kFloat, DataType::kInt32, DataType::kInt64}}},
             .create = [fns](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<ArgExtremum<kMax>>(node, fns);
             },
             .isa = v.isa,
             .name = std::string("cpu.") + lower + "__" + v.impl + "." + std::to_string(versions[i])});
    }
  }
}

}  // namespace

void RegisterArgMaxMinKernels(KernelRegistry& r) {
  RegisterArg<true>(r, "ArgMax", "argmax");
  RegisterArg<false>(r, "ArgMin", "argmin");
}

}  // namespace ferry::cpu
