// com.microsoft::Inverse on cpu: Y[..., :, :] = X[..., :, :]^-1 for float32, float64 and float16 (float16 computed
// in float; ONNX Runtime's CPU kernel computes it in half precision through Eigen, ref in double). The same
// elimination as ref (ref/inverse.cc: Gauss-Jordan with partial pivoting, the first largest |pivot| on ties, row
// swaps undone as column swaps), in place on a copy of each matrix, in the compute type (float for float32 and
// float16, double for float64).
//   - Up to 8 rows: a copy of the elimination with the size fixed at compile time (every loop unrolled); with AVX2,
//     8 float32 (4 float64) matrices at a time across the vector lanes, each lane following its own pivots
//     (lane-wise selects).
//   - Larger: each step a row scaling and n - 1 row updates y_i -= f y_k, contiguous loops vectorized (an AVX2+FMA
//     variant, registered first, and a baseline one).
// Matrices are spread over the threads when there are enough of them; a batch smaller than the thread count splits
// each step's row updates instead (for matrices of 64 rows or more). A singular matrix gives inf or NaN, as in ref.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/inverse.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Rows per thread chunk of one step's updates (each an n-element axpy).
constexpr int64_t kRowGrain = 16;
// Matrices of at least this many rows split their steps over threads when the batch cannot use them all.
constexpr int64_t kSplitRows = 64;

// One step's updates of rows [begin, end) but k: y_i -= y_i[k] * row_k, where y_i[k] counts as 0 (the elimination
// zeroes it first): its new value, -y_i[k] row_k[k], is stored after the loop, as a store of y_i[k] before the
// vector loads of y_i would stall them (no store-to-load forwarding into a wider load).
template <typename C>
void UpdateRows(C* __restrict a, const C* __restrict row_k, int64_t n, int64_t k, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (i == k) continue;
    C* __restrict row_i = a + i * n;
    const C f = row_i[k];
    for (int64_t j = 0; j < n; ++j) row_i[j] -= f * row_k[j];
    row_i[k] = -(f * row_k[k]);  // what 0 - f row_k[k] gives, written after the vector loop (see above)
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
// The same loops compiled for AVX2+FMA (the compiler vectorizes the row update 8 floats / 4 doubles wide, fused).
void UpdateRowsAvx2(float* __restrict a, const float* __restrict row_k, int64_t n, int64_t k, int64_t begin,
                    int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (i == k) continue;
    float* __restrict row_i = a + i * n;
    const float f = row_i[k];
    for (int64_t j = 0; j < n; ++j) row_i[j] -= f * row_k[j];
    row_i[k] = -(f * row_k[k]);
  }
}
void UpdateRowsAvx2(double* __restrict a, const double* __restrict row_k, int64_t n, int64_t k, int64_t begin,
                    int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (i == k) continue;
    double* __restrict row_i = a + i * n;
    const double f = row_i[k];
    for (int64_t j = 0; j < n; ++j) row_i[j] -= f * row_k[j];
    row_i[k] = -(f * row_k[k]);
  }
}
// Batches of small matrices (n <= 8) across the vector lanes: 8 float32 (4 float64) matrices at once, element
// (i, j) of every matrix of the group in one register, the same elimination per lane (the pivot search and the row
// and column exchanges as lane-wise selects, each lane following its own pivots).
typedef float V8f __attribute__((vector_size(32)));
typedef int32_t V8i __attribute__((vector_size(32)));
typedef double V4d __attribute__((vector_size(32)));
typedef int64_t V4i __attribute__((vector_size(32)));

template <typename V, typename VI, int N>
void InvertLanesFixed(V* a) {
  VI pivots[N];
  for (int k = 0; k < N; ++k) {
    V best = a[k * N + k];
    best = best < 0 ? -best : best;
    VI p = VI{} + k;
    for (int i = k + 1; i < N; ++i) {
      V v = a[i * N + k];
      v = v < 0 ? -v : v;
      const VI m = v > best;
      best = m ? v : best;
      p = m ? VI{} + i : p;
    }
    pivots[k] = p;
    for (int i = k + 1; i < N; ++i) {
      const VI m = p == i;
      for (int j = 0; j < N; ++j) {
        const V t = a[k * N + j];
        a[k * N + j] = m ? a[i * N + j] : t;
        a[i * N + j] = m ? t : a[i * N + j];
      }
    }
    const V inv = (V{} + 1) / a[k * N + k];
    a[k * N + k] = V{} + 1;
    for (int j = 0; j < N; ++j) a[k * N + j] *= inv;
    for (int i = 0; i < N; ++i) {
      if (i == k) continue;
      const V f = a[i * N + k];
      a[i * N + k] = V{};
      for (int j = 0; j < N; ++j) a[i * N + j] -= f * a[k * N + j];
    }
  }
  for (int k = N; k-- > 0;) {
    for (int q = k + 1; q < N; ++q) {
      const VI m = pivots[k] == q;
      for (int i = 0; i < N; ++i) {
        const V t = a[i * N + k];
        a[i * N + k] = m ? a[i * N + q] : t;
        a[i * N + q] = m ? t : a[i * N + q];
      }
    }
  }
}

// `mats` (lanes) consecutive n x n matrices at `x` (row-major, n <= 8) inverted in place.
template <typename V, typename VI, typename C, int Lanes>
void InvertLanes(C* x, int64_t n) {
  V a[64];
  const int64_t nn = n * n;
  for (int64_t e = 0; e < nn; ++e) {
    for (int l = 0; l < Lanes; ++l) a[e][l] = x[l * nn + e];
  }
  switch (n) {
    case 1: InvertLanesFixed<V, VI, 1>(a); break;
    case 2: InvertLanesFixed<V, VI, 2>(a); break;
    case 3: InvertLanesFixed<V, VI, 3>(a); break;
    case 4: InvertLanesFixed<V, VI, 4>(a); break;
    case 5: InvertLanesFixed<V, VI, 5>(a); break;
    case 6: InvertLanesFixed<V, VI, 6>(a); break;
    case 7: InvertLanesFixed<V, VI, 7>(a); break;
    default: InvertLanesFixed<V, VI, 8>(a); break;
  }
  for (int64_t e = 0; e < nn; ++e) {
    for (int l = 0; l < Lanes; ++l) x[l * nn + e] = a[e][l];
  }
}

void InvertLanesAvx2(float* x, int64_t n) { InvertLanes<V8f, V8i, float, 8>(x, n); }
void InvertLanesAvx2(double* x, int64_t n) { InvertLanes<V4d, V4i, double, 4>(x, n); }
#pragma GCC pop_options

template <typename C>
using LanesFn = void (*)(C* x, int64_t n);

template <typename C>
using UpdateFn = void (*)(C* a, const C* row_k, int64_t n, int64_t k, int64_t begin, int64_t end);

// The row updates of one ISA variant, per compute type.
struct Updates {
  UpdateFn<float> f32;
  UpdateFn<double> f64;
  LanesFn<float> lanes_f32 = nullptr;  // small matrices across the lanes (8 float32 / 4 float64), or none
  LanesFn<double> lanes_f64 = nullptr;
  template <typename C>
  UpdateFn<C> get() const {
    if constexpr (std::is_same_v<C, float>) {
      return f32;
    } else {
      return f64;
    }
  }
  template <typename C>
  LanesFn<C> lanes() const {
    if constexpr (std::is_same_v<C, float>) {
      return lanes_f32;
    } else {
      return lanes_f64;
    }
  }
};

// Small matrices (n <= kMaxFixed): the same elimination with the size known at compile time, so every loop unrolls.
constexpr int64_t kMaxFixed = 8;

template <typename C, int N>
void InvertFixed(C* a) {
  int pivots[N];
  for (int k = 0; k < N; ++k) {
    int p = k;
    C best = std::abs(a[k * N + k]);
    for (int i = k + 1; i < N; ++i) {
      const C v = std::abs(a[i * N + k]);
      if (v > best) best = v, p = i;
    }
    pivots[k] = p;
    if (p != k) {
      for (int j = 0; j < N; ++j) std::swap(a[k * N + j], a[p * N + j]);
    }
    C* row_k = a + k * N;
    const C inv = C(1) / row_k[k];
    row_k[k] = C(1);
    for (int j = 0; j < N; ++j) row_k[j] *= inv;
    for (int i = 0; i < N; ++i) {
      if (i == k) continue;
      C* row_i = a + i * N;
      const C f = row_i[k];
      row_i[k] = C(0);
      for (int j = 0; j < N; ++j) row_i[j] -= f * row_k[j];
    }
  }
  for (int k = N; k-- > 0;) {
    if (pivots[k] == k) continue;
    for (int i = 0; i < N; ++i) std::swap(a[i * N + k], a[i * N + pivots[k]]);
  }
}

template <typename C>
void InvertSmall(C* a, int64_t n) {
  switch (n) {
    case 1: return InvertFixed<C, 1>(a);
    case 2: return InvertFixed<C, 2>(a);
    case 3: return InvertFixed<C, 3>(a);
    case 4: return InvertFixed<C, 4>(a);
    case 5: return InvertFixed<C, 5>(a);
    case 6: return InvertFixed<C, 6>(a);
    case 7: return InvertFixed<C, 7>(a);
    default: return InvertFixed<C, 8>(a);
  }
}

// In place: a (n x n, row-major) becomes its inverse; `threads` > 1 splits each step's row updates.
template <typename C>
void InvertInPlace(C* a, int64_t n, int threads, UpdateFn<C> update, std::vector<int64_t>& pivots,
                   std::vector<C>& pivot_row) {
  if (n <= kMaxFixed) return InvertSmall(a, n);
  pivots.assign(static_cast<size_t>(n), 0);
  pivot_row.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    C best = std::abs(a[k * n + k]);
    for (int64_t i = k + 1; i < n; ++i) {
      const C v = std::abs(a[i * n + k]);
      if (v > best) best = v, p = i;
    }
    pivots[static_cast<size_t>(k)] = p;
    if (p != k) std::swap_ranges(a + k * n, a + (k + 1) * n, a + p * n);
    C* row_k = a + k * n;
    const C inv = C(1) / row_k[k];
    row_k[k] = C(1);
    for (int64_t j = 0; j < n; ++j) row_k[j] *= inv;
    // The pivot row is read by every update while row_k's own slot is skipped: a copy keeps the loops free of
    // aliasing.
    std::copy(row_k, row_k + n, pivot_row.begin());
    if (threads > 1) {
      ParallelFor(threads, n, kRowGrain,
                  [&](int64_t begin, int64_t end) { update(a, pivot_row.data(), n, k, begin, end); });
    } else {
      update(a, pivot_row.data(), n, k, 0, n);
    }
  }
  for (int64_t k = n; k-- > 0;) {
    const int64_t p = pivots[static_cast<size_t>(k)];
    if (p == k) continue;
    for (int64_t i = 0; i < n; ++i) std::swap(a[i * n + k], a[i * n + p]);
  }
}

class Inverse : public OpKernel {
 public:
  Inverse(const ir::Node&, Updates updates) : updates_(updates) {}

  void Prepare(PrepareContext& ctx) const override {
    ref::CheckInverseInput(ctx);
    const InputSpec& x = ctx.tensor_input(0);
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t n = x.dim(x.rank() - 1), mats = x.size() / (n * n);
    ref::Dispatch(ref::TypeList<float, double, Float16>{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const T* in = x.data<T>();
      T* out = y.data<T>();
      const int threads = ctx.threads();
      const UpdateFn<C> update = updates_.get<C>();
      // Few large matrices: one at a time, each step's updates threaded. Otherwise matrices over threads.
      const bool split_steps = mats < threads && n >= kSplitRows;
      const LanesFn<C> lanes = n <= kMaxFixed ? updates_.lanes<C>() : nullptr;
      constexpr int64_t kLanes = 32 / sizeof(C);
      auto invert = [&](int64_t begin, int64_t end, int step_threads) {
        std::vector<C> a(static_cast<size_t>(n * n * (lanes ? kLanes : 1))), pivot_row;
        std::vector<int64_t> pivots;
        int64_t m = begin;
        for (; lanes && m + kLanes <= end; m += kLanes) {  // groups of small matrices across the lanes
          const T* src = in + m * n * n;
          T* dst = out + m * n * n;
          for (int64_t i = 0; i < kLanes * n * n; ++i) a[static_cast<size_t>(i)] = static_cast<C>(src[i]);
          lanes(a.data(), n);
          for (int64_t i = 0; i < kLanes * n * n; ++i) dst[i] = static_cast<T>(a[static_cast<size_t>(i)]);
        }
        for (; m < end; ++m) {
          const T* src = in + m * n * n;
          T* dst = out + m * n * n;
          if constexpr (std::is_same_v<T, C>) {
            std::copy(src, src + n * n, a.begin());
          } else {
            for (int64_t i = 0; i < n * n; ++i) a[static_cast<size_t>(i)] = static_cast<C>(src[i]);
          }
          InvertInPlace(a.data(), n, step_threads, update, pivots, pivot_row);
          if constexpr (std::is_same_v<T, C>) {
            std::copy(a.begin(), a.begin() + n * n, dst);
          } else {
            for (int64_t i = 0; i < n * n; ++i) dst[i] = static_cast<T>(a[static_cast<size_t>(i)]);
          }
        }
      };
      if (split_steps) {
        invert(0, mats, threads);
      } else {
        // About n^3 multiply-adds a matrix: chunks of at least ~32k of them.
        const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * n * n));
        ParallelFor(threads, mats, grain, [&](int64_t begin, int64_t end) { invert(begin, end, 1); });
      }
    });
  }

 private:
  Updates updates_;
};

}  // namespace

void RegisterInverseKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, Updates updates) {
    r.Add({.op = "Inverse",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat16, DataType::kFloat, DataType::kDouble}}},
           .create = [updates](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Inverse>(node, updates);
           },
           .isa = isa,
           .name = "cpu.com.microsoft.f16_f32_f64_inverse__" + impl + ".1"});
  };
  def("avx2", {Isa::kAvx2, Isa::kFma}, Updates{&UpdateRowsAvx2, &UpdateRowsAvx2, &InvertLanesAvx2, &InvertLanesAvx2});
  def("scalar", {}, Updates{&UpdateRows<float>, &UpdateRows<double>});
}

}  // namespace ferry::cpu
