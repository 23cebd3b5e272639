// See skinny_gemm.h.
#include "kernels/cpu/skinny_gemm.h"

#include <immintrin.h>

#include <algorithm>

#include "core/parallel.h"

namespace ferry::cpu {
namespace {

constexpr int64_t kBlockCols = 128;  // the unit of columns split over the threads
constexpr int64_t kSlabCols = 512;   // columns of a pass's rows of b kept in L1 while every row of c passes over them

#pragma GCC push_options
#pragma GCC target("avx2,fma")

// Lanes [0, n) of a vector, for the masked loads and stores of a last partial vector.
__m256i FirstLanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// c[r][s0, s1) += sum over u < U of a[r][k0 + u] * b[k0 + u][s0, s1) for every row r: b read row after row, the
// rows of c (m x the task's columns) staying in L1/L2.
template <int U>
__attribute__((always_inline)) inline void Rows(int64_t m, int64_t k0, int64_t s0, int64_t s1, const float* a,
                                                int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  const float* bk[U];
  for (int u = 0; u < U; ++u) bk[u] = b + (k0 + u) * ldb;
  const int64_t full_end = s0 + (s1 - s0) / 8 * 8;
  const __m256i tail = FirstLanes(s1 - full_end);
  int64_t r = 0;
  // Two rows of c at a time: each vector of b loaded once for both.
  for (; r + 2 <= m; r += 2) {
    __m256 a0[U], a1[U];
    for (int u = 0; u < U; ++u) {
      a0[u] = _mm256_broadcast_ss(a + r * lda + k0 + u);
      a1[u] = _mm256_broadcast_ss(a + (r + 1) * lda + k0 + u);
    }
    float* c0 = c + r * ldc;
    float* c1 = c0 + ldc;
    for (int64_t v = s0; v < full_end; v += 8) {
      __m256 x0 = _mm256_loadu_ps(c0 + v), x1 = _mm256_loadu_ps(c1 + v);
      for (int u = 0; u < U; ++u) {
        const __m256 bv = _mm256_loadu_ps(bk[u] + v);
        x0 = _mm256_fmadd_ps(a0[u], bv, x0);
        x1 = _mm256_fmadd_ps(a1[u], bv, x1);
      }
      _mm256_storeu_ps(c0 + v, x0);
      _mm256_storeu_ps(c1 + v, x1);
    }
    if (full_end < s1) {
      __m256 x0 = _mm256_maskload_ps(c0 + full_end, tail), x1 = _mm256_maskload_ps(c1 + full_end, tail);
      for (int u = 0; u < U; ++u) {
        const __m256 bv = _mm256_maskload_ps(bk[u] + full_end, tail);
        x0 = _mm256_fmadd_ps(a0[u], bv, x0);
        x1 = _mm256_fmadd_ps(a1[u], bv, x1);
      }
      _mm256_maskstore_ps(c0 + full_end, tail, x0);
      _mm256_maskstore_ps(c1 + full_end, tail, x1);
    }
  }
  for (; r < m; ++r) {
    __m256 av[U];
    for (int u = 0; u < U; ++u) av[u] = _mm256_broadcast_ss(a + r * lda + k0 + u);
    float* cr = c + r * ldc;
    for (int64_t v = s0; v < full_end; v += 8) {
      __m256 acc = _mm256_loadu_ps(cr + v);
      for (int u = 0; u < U; ++u) acc = _mm256_fmadd_ps(av[u], _mm256_loadu_ps(bk[u] + v), acc);
      _mm256_storeu_ps(cr + v, acc);
    }
    if (full_end < s1) {
      __m256 acc = _mm256_maskload_ps(cr + full_end, tail);
      for (int u = 0; u < U; ++u) acc = _mm256_fmadd_ps(av[u], _mm256_maskload_ps(bk[u] + full_end, tail), acc);
      _mm256_maskstore_ps(cr + full_end, tail, acc);
    }
  }
}

// Columns [n0, n1) of c, every row: c = bias (or 0), then b's rows eight (four, one) at a time, in slabs of kSlabCols
// columns.
void Block(int64_t m, int64_t k, int64_t n0, int64_t n1, const float* a, int64_t lda, const float* b, int64_t ldb,
           const float* bias, float* c, int64_t ldc) {
  for (int64_t r = 0; r < m; ++r) {
    float* cr = c + r * ldc;
    for (int64_t j = n0; j < n1; ++j) cr[j] = bias ? bias[j] : 0.0f;
  }
  int64_t k0 = 0;
  for (; k0 + 8 <= k; k0 += 8) {
    for (int64_t s0 = n0; s0 < n1; s0 += kSlabCols) {
      Rows<8>(m, k0, s0, std::min(n1, s0 + kSlabCols), a, lda, b, ldb, c, ldc);
    }
  }
  for (; k0 + 4 <= k; k0 += 4) {
    for (int64_t s0 = n0; s0 < n1; s0 += kSlabCols) {
      Rows<4>(m, k0, s0, std::min(n1, s0 + kSlabCols), a, lda, b, ldb, c, ldc);
    }
  }
  for (; k0 < k; ++k0) {
    for (int64_t s0 = n0; s0 < n1; s0 += kSlabCols) {
      Rows<1>(m, k0, s0, std::min(n1, s0 + kSlabCols), a, lda, b, ldb, c, ldc);
    }
  }
}

#pragma GCC pop_options

}  // namespace

void SkinnyGemmAvx2(int threads, int64_t m, int64_t k, int64_t n, const float* a, int64_t lda, const float* b,
                    int64_t ldb, const float* bias, float* c, int64_t ldc) {
  const int64_t blocks = (n + kBlockCols - 1) / kBlockCols;
  // About 64K multiply-adds per task before a second thread pays for its fork.
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, m * k * kBlockCols));
  ParallelFor(threads, blocks, grain, [&](int64_t begin, int64_t end) {
    Block(m, k, begin * kBlockCols, std::min(n, end * kBlockCols), a, lda, b, ldb, bias, c, ldc);
  });
}

}  // namespace ferry::cpu
