// com.microsoft::CDist on cpu (semantics: ref/cdist.cc): C[i, j] = ||A_i - B_j||^2 (metric "sqeuclidean") or its
// square root ("euclidean") for A [M, N], B [K, N], float and double, through the product form ONNX Runtime uses:
// C = -2 A B^T (float: oneDNN's sgemm; double: blocks of 6 x 8 of C in AVX2+FMA registers, or, without AVX2, a loop
// over rows of C against B^T that the compiler vectorizes along K; rows spread over threads), then
// C[i, j] = max((C[i, j] + ||A_i||^2) + ||B_j||^2, 0) (ONNX Runtime's order of the additions; the clamp where it
// takes |.|: rounding can push a distance near 0 below it) and the square root for "euclidean". The squared norms
// are summed in double and rounded to the type. Against ref's direct sums the result differs by rounding of the
// norms' size: ~eps (||A_i||^2 + ||B_j||^2) absolute, which the square root magnifies for rows that (nearly)
// coincide; an infinite input gives NaN here (inf - inf) where ref gives inf.
#include <dnnl.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/cdist.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Columns of C per block of the double product: a block of B^T's columns stays in cache across the k loop.
constexpr int64_t kColBlock = 256;

template <typename T>
void SquaredNorms(const T* x, int64_t rows, int64_t n, std::vector<T>& out) {
  out.resize(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) {
    double s = 0;
    for (int64_t t = 0; t < n; ++t) s += static_cast<double>(x[i * n + t]) * static_cast<double>(x[i * n + t]);
    out[static_cast<size_t>(i)] = static_cast<T>(s);
  }
}

// c = -2 a b^T for rows [begin, end) of a (a [m, n], bt = b^T [n, k], c [m, k]): row by row, the k loop vectorized.
void MinusTwoABt(const double* a, const double* bt, double* c, int64_t n, int64_t k, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    double* __restrict crow = c + i * k;
    for (int64_t j0 = 0; j0 < k; j0 += kColBlock) {
      const int64_t j1 = std::min(k, j0 + kColBlock);
      for (int64_t j = j0; j < j1; ++j) crow[j] = 0;
      for (int64_t t = 0; t < n; ++t) {
        const double av = -2.0 * a[i * n + t];
        const double* __restrict brow = bt + t * k;
        for (int64_t j = j0; j < j1; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
// The same with AVX2+FMA: blocks of 6 rows x 8 columns of c summed in 12 registers over the whole n (each element's
// products added in n order, as the row-by-row loop adds them, but fused); the columns past the last block of 8 and
// the rows past the last block of 6 take the row-by-row loop.
void MinusTwoABtAvx2(const double* a, const double* bt, double* c, int64_t n, int64_t k, int64_t begin, int64_t end) {
  const __m256d minus_two = _mm256_set1_pd(-2.0);
  int64_t i = begin;
  constexpr int kRows = 6;
  for (; i + kRows <= end; i += kRows) {
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
      __m256d acc[kRows][2];
      for (auto& r : acc) r[0] = r[1] = _mm256_setzero_pd();
      for (int64_t t = 0; t < n; ++t) {
        const __m256d b0 = _mm256_loadu_pd(bt + t * k + j), b1 = _mm256_loadu_pd(bt + t * k + j + 4);
        for (int r = 0; r < kRows; ++r) {
          const __m256d av = _mm256_broadcast_sd(a + (i + r) * n + t);
          acc[r][0] = _mm256_fmadd_pd(av, b0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_pd(av, b1, acc[r][1]);
        }
      }
      for (int r = 0; r < kRows; ++r) {
        _mm256_storeu_pd(c + (i + r) * k + j, _mm256_mul_pd(minus_two, acc[r][0]));
        _mm256_storeu_pd(c + (i + r) * k + j + 4, _mm256_mul_pd(minus_two, acc[r][1]));
      }
    }
    for (int r = 0; r < kRows && j < k; ++r) {
      double* crow = c + (i + r) * k;
      for (int64_t jj = j; jj < k; ++jj) {
        double s = 0;
        for (int64_t t = 0; t < n; ++t) s = std::fma(a[(i + r) * n + t], bt[t * k + jj], s);
        crow[jj] = -2.0 * s;
      }
    }
  }
  if (i < end) MinusTwoABt(a, bt, c, n, k, i, end);
}
#pragma GCC pop_options

using ProductF64 = void (*)(const double* a, const double* bt, double* c, int64_t n, int64_t k, int64_t begin,
                            int64_t end);

class CDist : public OpKernel {
 public:
  CDist(const ir::Node& node, ProductF64 product) : euclidean_(ref::CDistIsEuclidean(node)), product_(product) {}

  void Prepare(PrepareContext& ctx) const override {
    const ref::CDistGeometry g = ref::CheckCDistInputs(ctx);
    ctx.EmplaceState(g);
    ctx.SetOutput(0, ctx.tensor_input(0).dtype, {g.m, g.k});
  }

  void Compute(KernelContext& ctx) const override {
    const ref::CDistGeometry& g = ctx.state<ref::CDistGeometry>();
    Tensor& c = ctx.OutputUninitialized(0);
    if (c.size() == 0) return;
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() == DataType::kFloat) {
      Run<float>(ctx, g, a.data<float>(), b.data<float>(), c.data<float>());
    } else {
      Run<double>(ctx, g, a.data<double>(), b.data<double>(), c.data<double>());
    }
  }

 private:
  template <typename T>
  void Run(const KernelContext& ctx, const ref::CDistGeometry& g, const T* a, const T* b, T* c) const {
    const int threads = ctx.threads();
    const int64_t m = g.m, k = g.k, n = g.n;
    if (n == 0) {
      std::fill(c, c + m * k, T(0));
      return;
    }
    std::vector<T> a2, b2;
    SquaredNorms(a, m, n, a2);
    SquaredNorms(b, k, n, b2);
    // Rows of C per chunk: about 32k multiply-adds.
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, k * n));
    if constexpr (std::is_same_v<T, float>) {
      ScopedOmpThreads omp(threads);
      const dnnl_status_t st = dnnl_sgemm('N', 'T', m, k, n, -2.0f, a, n, b, n, 0.0f, c, k);
      if (st != dnnl_success) {
        throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(st));
      }
    } else {
      std::vector<double> bt(static_cast<size_t>(n * k));
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t t = 0; t < n; ++t) bt[static_cast<size_t>(t * k + j)] = b[j * n + t];
      }
      ParallelFor(threads, m, std::max<int64_t>(6, grain),
                  [&](int64_t begin, int64_t end) { product_(a, bt.data(), c, n, k, begin, end); });
    }
    const bool euclidean = euclidean_;
    ParallelFor(threads, m, std::max<int64_t>(1, 16384 / k), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T* __restrict row = c + i * k;
        const T ai = a2[static_cast<size_t>(i)];
        const T* __restrict bn = b2.data();
        for (int64_t j = 0; j < k; ++j) {
          const T d = (row[j] + ai) + bn[j];
          row[j] = d > T(0) ? d : (d != d ? d : T(0));  // the clamp keeps NaN
        }
        if (euclidean) {
          for (int64_t j = 0; j < k; ++j) row[j] = std::sqrt(row[j]);
        }
      }
    });
  }

  bool euclidean_;
  ProductF64 product_;
};

}  // namespace

void RegisterCDistKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, ProductF64 product) {
    r.Add({.op = "CDist",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat, DataType::kDouble}}},
           .create = [product](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<CDist>(node, product);
           },
           .isa = isa,
           .name = "cpu.com.microsoft.f32_f64_cdist__" + impl + ".1",
           .library = "oneDNN"});
  };
  def("avx2", {Isa::kAvx2, Isa::kFma}, &MinusTwoABtAvx2);
  def("gemm", {}, &MinusTwoABt);
}

}  // namespace ferry::cpu
