// GemmF32: a Goto-style blocked float GEMM. op(A) is cut into kMc×kKc blocks packed as kMr-row panels, op(B) into
// kKc×nc blocks packed as kNr-column panels (both zero-padded at the edges), and a kMr×kNr micro-kernel multiplies
// one A panel by one B panel. The micro-kernel is plain C++ written so that g++ -O2/-O3 keeps the accumulators in
// SSE registers and vectorises the column loop (baseline x86-64, no intrinsics); on this layout it runs near the
// SSE2 peak of 8 flop/cycle. Work is split into a grid of (row block, column block) tasks over the threads.
// Matrix-vector products (m == 1 or n == 1) take separate streaming loops: packing would only add traffic there.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel.h"
#include "kernels/ref/gemm.h"

namespace ferry::ref {
namespace {

constexpr int64_t kMr = 4;    // micro-tile rows
constexpr int64_t kNr = 16;   // micro-tile columns (4 SSE vectors)
constexpr int64_t kKc = 256;  // depth of a packed block: a B panel (kKc×kNr, 16 KB) stays in L1
constexpr int64_t kMc = 128;  // rows of a packed A block (128 KB, in L2)
constexpr int64_t kNcMax = 1024;  // columns of a packed B block (1 MB at most)

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// acc(kMr×kNr, row-major) = Σ_p a[p][0..kMr) ⊗ b[p][0..kNr). a and b are packed panels.
#if defined(__GNUC__) && !defined(__clang__)
#define FERRY_UNROLL _Pragma("GCC unroll 16")
#else
#define FERRY_UNROLL
#endif
inline void MicroKernel(int64_t kc, const float* __restrict a, const float* __restrict b, float* __restrict out) {
  float acc[kMr][kNr];
  FERRY_UNROLL
  for (int i = 0; i < kMr; ++i) {
    FERRY_UNROLL
    for (int j = 0; j < kNr; ++j) acc[i][j] = 0.0f;
  }
  for (int64_t p = 0; p < kc; ++p) {
    FERRY_UNROLL
    for (int i = 0; i < kMr; ++i) {
      const float av = a[i];
      FERRY_UNROLL
      for (int j = 0; j < kNr; ++j) acc[i][j] += av * b[j];
    }
    a += kMr;
    b += kNr;
  }
  FERRY_UNROLL
  for (int i = 0; i < kMr; ++i) {
    FERRY_UNROLL
    for (int j = 0; j < kNr; ++j) out[i * kNr + j] = acc[i][j];
  }
}
#undef FERRY_UNROLL

// Packs rows [0, mc) × depth [0, kc) of op(A) (already offset to the block's origin) as kMr-row panels:
// panel r holds, for each p, the kMr values op(A)[r*kMr + i][p].
void PackA(bool trans_a, const float* a, int64_t lda, int64_t mc, int64_t kc, float* out) {
  for (int64_t r0 = 0; r0 < mc; r0 += kMr) {
    const int64_t rows = std::min(kMr, mc - r0);
    if (trans_a) {  // A is stored k×m: op(A)[r][p] = a[p*lda + r]
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = a + p * lda + r0;
        float* dst = out + p * kMr;
        int64_t i = 0;
        for (; i < rows; ++i) dst[i] = src[i];
        for (; i < kMr; ++i) dst[i] = 0.0f;
      }
    } else {
      for (int64_t i = 0; i < kMr; ++i) {
        if (i < rows) {
          const float* src = a + (r0 + i) * lda;
          for (int64_t p = 0; p < kc; ++p) out[p * kMr + i] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) out[p * kMr + i] = 0.0f;
        }
      }
    }
    out += kMr * kc;
  }
}

// Packs depth [0, kc) × columns [0, nc) of op(B) (offset to the block's origin) as kNr-column panels.
void PackB(bool trans_b, const float* b, int64_t ldb, int64_t kc, int64_t nc, float* out) {
  for (int64_t c0 = 0; c0 < nc; c0 += kNr) {
    const int64_t cols = std::min(kNr, nc - c0);
    if (trans_b) {  // B is stored n×k: op(B)[p][c] = b[c*ldb + p]
      for (int64_t j = 0; j < kNr; ++j) {
        if (j < cols) {
          const float* src = b + (c0 + j) * ldb;
          for (int64_t p = 0; p < kc; ++p) out[p * kNr + j] = src[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) out[p * kNr + j] = 0.0f;
        }
      }
    } else if (cols == kNr) {
      for (int64_t p = 0; p < kc; ++p) std::memcpy(out + p * kNr, b + p * ldb + c0, sizeof(float) * kNr);
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b + p * ldb + c0;
        float* dst = out + p * kNr;
        int64_t j = 0;
        for (; j < cols; ++j) dst[j] = src[j];
        for (; j < kNr; ++j) dst[j] = 0.0f;
      }
    }
    out += kNr * kc;
  }
}

// C block *= beta (beta == 0: cleared without reading).
void ScaleBlock(float beta, int64_t rows, int64_t cols, float* c, int64_t ldc) {
  if (beta == 1.0f) return;
  for (int64_t i = 0; i < rows; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + cols, 0.0f);
    } else {
      for (int64_t j = 0; j < cols; ++j) row[j] *= beta;
    }
  }
}

// Per-thread packing buffers, reused across calls; grown to exactly the size asked (AddGemmF32Workspace).
float* ThreadBuffer(std::vector<float>& buf, int64_t size) {
  if (static_cast<int64_t>(buf.size()) < size) {
    buf.reserve(static_cast<size_t>(size));
    buf.resize(static_cast<size_t>(size));
  }
  return buf.data();
}

// The packed panels' sizes in floats, for a block of mc rows and nc columns.
int64_t APanelFloats(int64_t mc) { return RoundUp(std::min(mc, kMc), kMr) * kKc; }
int64_t BPanelFloats(int64_t nc) { return RoundUp(nc, kNr) * kKc; }

struct GemmArgs {
  bool trans_a, trans_b;
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
};

// The calling thread's packing panels, grown by its blocks and kept for the thread's life.
thread_local std::vector<float> t_a_panels, t_b_panels;

// One task: C[m0, m0+mc) × [n0, n0+nc) over the whole depth.
void GemmBlock(const GemmArgs& g, int64_t m0, int64_t mc, int64_t n0, int64_t nc) {
  std::vector<float>& a_buf = t_a_panels;
  std::vector<float>& b_buf = t_b_panels;
  float* pa = ThreadBuffer(a_buf, APanelFloats(mc));
  float* pb = ThreadBuffer(b_buf, BPanelFloats(nc));
  ScaleBlock(g.beta, mc, nc, g.c + m0 * g.ldc + n0, g.ldc);
  alignas(64) float tile[kMr * kNr];
  for (int64_t p0 = 0; p0 < g.k; p0 += kKc) {
    const int64_t kc = std::min(kKc, g.k - p0);
    PackB(g.trans_b, g.b + (g.trans_b ? n0 * g.ldb + p0 : p0 * g.ldb + n0), g.ldb, kc, nc, pb);
    for (int64_t i0 = m0; i0 < m0 + mc; i0 += kMc) {
      const int64_t mcc = std::min(kMc, m0 + mc - i0);
      PackA(g.trans_a, g.a + (g.trans_a ? p0 * g.lda + i0 : i0 * g.lda + p0), g.lda, mcc, kc, pa);
      for (int64_t jr = 0; jr < nc; jr += kNr) {
        const int64_t cols = std::min(kNr, nc - jr);
        const float* bp = pb + (jr / kNr) * kNr * kc;
        for (int64_t ir = 0; ir < mcc; ir += kMr) {
          const int64_t rows = std::min(kMr, mcc - ir);
          MicroKernel(kc, pa + (ir / kMr) * kMr * kc, bp, tile);
          float* cp = g.c + (i0 + ir) * g.ldc + n0 + jr;
          const float alpha = g.alpha;
          if (cols == kNr) {
            for (int64_t i = 0; i < rows; ++i) {
              float* crow = cp + i * g.ldc;
              const float* trow = tile + i * kNr;
              for (int64_t j = 0; j < kNr; ++j) crow[j] += alpha * trow[j];
            }
          } else {
            for (int64_t i = 0; i < rows; ++i)
              for (int64_t j = 0; j < cols; ++j) cp[i * g.ldc + j] += alpha * tile[i * kNr + j];
          }
        }
      }
    }
  }
}

// Σ x[i]·y[i] with eight partial sums so the loop vectorises without reassociation flags.
float Dot(const float* x, const float* y, int64_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += x[i + j] * y[i + j];
  float t = ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
  for (; i < n; ++i) t += x[i] * y[i];
  return t;
}

// y[0, n) = alpha · Σ_p x[p] · rows[p][0, n) + y (y already scaled by beta): streaming row updates.
void AxpyRows(int64_t k, int64_t n, float alpha, const float* x, int64_t incx, const float* rows, int64_t ld,
              float* y) {
  for (int64_t p = 0; p < k; ++p) {
    const float s = alpha * x[p * incx];
    const float* r = rows + p * ld;
    for (int64_t j = 0; j < n; ++j) y[j] += s * r[j];
  }
}

// The task grid of one product (m, n > 1, k > 0): blocks of mc rows and nc columns, and the threads that run them.
struct Grid {
  int64_t mc = 0, nc = 0, n_blocks = 0, tasks = 0, workers = 0;
};

Grid PlanGrid(int64_t m, int64_t n, int64_t k, int threads) {
  // Task grid: row blocks of at most kMc rows, column blocks of at most kNcMax columns, refined until there are a
  // few tasks per thread. Each task packs its own panels, so a split along N re-packs A (m·k) and a split along M
  // re-packs B (k·n): split the dimension whose re-packing is cheaper. Threads pull tasks from a shared counter,
  // so a thread that gets descheduled on a busy machine does not hold up the others.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  if (flops < 2e5) threads = 1;
  int64_t m_blocks = CeilDiv(m, kMc);
  int64_t n_blocks = CeilDiv(n, kNcMax);
  if (threads > 1) {
    const int64_t max_n_blocks = std::max<int64_t>(1, n / (4 * kNr));
    const int64_t max_m_blocks = std::max<int64_t>(1, m / (8 * kMr));
    while (m_blocks * n_blocks < 4 * threads) {
      const bool can_n = n_blocks < max_n_blocks, can_m = m_blocks < max_m_blocks;
      if (!can_n && !can_m) break;
      if (can_n && (!can_m || m <= n)) {
        ++n_blocks;
      } else {
        ++m_blocks;
      }
    }
  }
  Grid g;
  g.mc = RoundUp(CeilDiv(m, m_blocks), kMr);
  g.nc = RoundUp(CeilDiv(n, n_blocks), kNr);
  g.n_blocks = CeilDiv(n, g.nc);
  g.tasks = CeilDiv(m, g.mc) * g.n_blocks;
  g.workers = std::min<int64_t>(threads, g.tasks);
  return g;
}

// m == 1 or n == 1. Writes one output vector of length `len` with stride `inc`.
void Gemv(const GemmArgs& g, int threads) {
  const bool row_vector = g.m == 1;  // else column vector (n == 1)
  const int64_t len = row_vector ? g.n : g.m;
  const int64_t inc = row_vector ? 1 : g.ldc;
  // The vector operand as a contiguous array.
  std::vector<float> xbuf;
  const float* x;
  int64_t incx;
  if (row_vector) {  // x = op(A)[0][p] = trans_a ? a[p*lda] : a[p]
    x = g.a;
    incx = g.trans_a ? g.lda : 1;
  } else {  // x = op(B)[p][0] = trans_b ? b[p] : b[p*ldb]
    x = g.b;
    incx = g.trans_b ? 1 : g.ldb;
  }
  if (incx != 1) {
    xbuf.resize(static_cast<size_t>(g.k));
    for (int64_t p = 0; p < g.k; ++p) xbuf[static_cast<size_t>(p)] = x[p * incx];
    x = xbuf.data();
  }
  // The matrix operand M (len×k as "dot rows" or k×len as "axpy rows").
  const float* mat = row_vector ? g.b : g.a;
  const int64_t ldm = row_vector ? g.ldb : g.lda;
  // Row vector: out[j] = Σ_p x[p]·op(B)[p][j]; op(B)[p][j] = trans_b ? b[j*ldb+p] (dot rows) : b[p*ldb+j] (axpy).
  // Column vector: out[i] = Σ_p op(A)[i][p]·x[p]; op(A)[i][p] = trans_a ? a[p*lda+i] (axpy) : a[i*lda+p] (dot).
  const bool dot_rows = row_vector ? g.trans_b : !g.trans_a;
  const int64_t work = len * g.k;
  const int t = work < (1 << 15) ? 1 : threads;
  ParallelFor(t, len, dot_rows ? 16 : 64, [&](int64_t begin, int64_t end) {
    if (dot_rows) {
      for (int64_t j = begin; j < end; ++j) {
        float& out = g.c[j * inc];
        const float prev = g.beta == 0.0f ? 0.0f : g.beta * out;
        out = prev + g.alpha * Dot(mat + j * ldm, x, g.k);
      }
    } else {
      std::vector<float> acc(static_cast<size_t>(end - begin), 0.0f);
      AxpyRows(g.k, end - begin, g.alpha, x, 1, mat + begin, ldm, acc.data());
      for (int64_t j = begin; j < end; ++j) {
        float& out = g.c[j * inc];
        const float prev = g.beta == 0.0f ? 0.0f : g.beta * out;
        out = prev + acc[static_cast<size_t>(j - begin)];
      }
    }
  });
}

}  // namespace

void GemmF32(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
             const float* b, int64_t ldb, float beta, float* c, int64_t ldc, int threads) {
  if (m <= 0 || n <= 0) return;
  const GemmArgs g{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  if (k <= 0 || alpha == 0.0f) {
    ScaleBlock(beta, m, n, c, ldc);
    return;
  }
  if (m == 1 || n == 1) {
    Gemv(g, threads);
    return;
  }
  const Grid grid = PlanGrid(m, n, k, threads);
  const int64_t mc = grid.mc, nc = grid.nc, n_blocks = grid.n_blocks, tasks = grid.tasks, workers = grid.workers;
  std::atomic<int64_t> next{0};
  ParallelFor(static_cast<int>(workers), workers, 1, [&](int64_t, int64_t) {
    for (int64_t t = next.fetch_add(1); t < tasks; t = next.fetch_add(1)) {
      const int64_t mb = t / n_blocks, nb = t % n_blocks;
      const int64_t m0 = mb * mc, n0 = nb * nc;
      GemmBlock(g, m0, std::min(mc, m - m0), n0, std::min(nc, n - n0));
    }
  });
}

int64_t GemmF32PanelBytesOnThisThread() {
  return static_cast<int64_t>((t_a_panels.capacity() + t_b_panels.capacity()) * sizeof(float));
}

void AddGemmF32Workspace(int64_t m, int64_t n, int64_t k, int threads, Workspace& ws, int callers) {
  if (m <= 1 || n <= 1 || k <= 0) return;  // nothing, or a matrix-vector product: no panels
  // Each of the workers packs the panels of the blocks it takes: at most the first (largest) block's.
  const Grid grid = PlanGrid(m, n, k, threads);
  const int workers = static_cast<int>(grid.workers) * std::max(callers, 1);
  ws.Need("ref GEMM A panels", APanelFloats(std::min(grid.mc, m)) * static_cast<int64_t>(sizeof(float)), workers);
  ws.Need("ref GEMM B panels", BPanelFloats(std::min(grid.nc, n)) * static_cast<int64_t>(sizeof(float)), workers);
}

}  // namespace ferry::ref
