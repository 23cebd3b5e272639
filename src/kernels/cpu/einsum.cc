// Einsum (opset 12, float32 and float64) on cpu, lowered onto GEMM: with two inputs every label is a batch label (in
// the output and both inputs), an M label (output and the first input), an N label (output and the second), a K label
// (summed, in both) or a label summed in one input only. Per batch, each operand becomes an [M, K] / [K, N] matrix —
// read in place when its labels already lie that way (row-major or transposed, any leading dimension: "bij,bjk->bik",
// "bhqd,bhkd->bhqk"), else packed once, summing its own summed labels while it is packed — and one dnnl_sgemm (float32;
// a vectorized loop nest for float64) makes the [M, N] block, written in place or scattered into the output's label
// order. Batches are split over the threads (each GEMM single-threaded) when there are at least as many as threads,
// else the GEMM gets the threads. One input (transposes, diagonals, sums) is a strided gather-and-sum. The equation,
// its checks and the label strides are ref's (einsum_plan.h). Three or more inputs fall back to ref (the KernelDef
// predicate).
#include <dnnl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/einsum_plan.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

using ref::einsum::Plan;

// The element offsets of every index tuple over `labels` (row-major, first label outermost), with `stride[l]` per
// loop label l. No labels: one offset, 0.
std::vector<int64_t> Offsets(const std::vector<size_t>& labels, const std::vector<int64_t>& size,
                             const std::vector<int64_t>& stride) {
  std::vector<int64_t> out{0};
  for (size_t l : labels) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(size[l]));
    for (int64_t base : out) {
      for (int64_t i = 0; i < size[l]; ++i) next.push_back(base + i * stride[l]);
    }
    out = std::move(next);
  }
  return out;
}

// How a GEMM operand reads a [rows, cols] block in place: 'N' (row-major, leading dimension ld) or 'T' (column-major),
// or 0 when it must be packed.
struct InPlace {
  char trans = 0;
  int64_t ld = 0;
};

InPlace ReadInPlace(const std::vector<int64_t>& row, const std::vector<int64_t>& col, int64_t rows, int64_t cols) {
  auto unit = [](const std::vector<int64_t>& t) {
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  };
  auto even = [](const std::vector<int64_t>& t, int64_t min_ld, int64_t& ld) {
    ld = t.size() > 1 ? t[1] : min_ld;
    if (ld < min_ld) return false;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i] != static_cast<int64_t>(i) * ld) return false;
    }
    return true;
  };
  InPlace r;
  if (unit(col) && even(row, std::max<int64_t>(cols, 1), r.ld)) {
    r.trans = 'N';
  } else if (unit(row) && even(col, std::max<int64_t>(rows, 1), r.ld)) {
    r.trans = 'T';
  }
  return r;
}

// The two-input GEMM lowering of one plan (the prepared state).
struct GemmPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> a_batch, a_m, a_k, a_sum;  // A's offsets per batch / M / K index, and over its own summed labels
  std::vector<int64_t> b_batch, b_k, b_n, b_sum;
  std::vector<int64_t> y_batch, y_m, y_n;
  InPlace a, b, y;  // y.trans 'N' when C is written in place
  bool empty_sum = false;  // a summed label of size 0: Y is zeros
};

// The one-input lowering: Y's labels but the last as offsets into X, the last one's stride, X's summed labels.
struct GatherPlan {
  std::vector<int64_t> outer, sum;
  int64_t inner = 1, inner_stride = 0;
  bool empty_sum = false;
};

struct EinsumState {
  Plan plan;
  GemmPlan gemm;
  GatherPlan gather;
};

GemmPlan MakeGemmPlan(const Plan& p) {
  const std::vector<int64_t>& sa = p.strides[0];
  const std::vector<int64_t>& sb = p.strides[1];
  std::vector<int64_t> sy(p.nloop, 0);
  int64_t s = 1;
  for (size_t i = p.nout; i-- > 0;) {
    sy[i] = s;
    s *= p.loop_size[i];
  }
  std::vector<size_t> batch, m, n, k, ea, eb;
  GemmPlan g;
  for (size_t i = 0; i < p.nloop; ++i) {
    const bool in_a = sa[i] != 0, in_b = sb[i] != 0;
    if (i < p.nout) {
      if (in_a && in_b) {
        batch.push_back(i);
      } else if (in_a) {
        m.push_back(i);
      } else if (in_b) {
        n.push_back(i);
      } else {
        batch.push_back(i);  // size 1 everywhere it occurs: any class will do
      }
    } else if (in_a && in_b) {
      k.push_back(i);
    } else if (in_a) {
      ea.push_back(i);
    } else if (in_b) {
      eb.push_back(i);
    } else if (p.loop_size[i] == 0) {
      g.empty_sum = true;
    }
    if (i >= p.nout && p.loop_size[i] == 0) g.empty_sum = true;
  }
  g.a_batch = Offsets(batch, p.loop_size, sa);
  g.a_m = Offsets(m, p.loop_size, sa);
  g.a_k = Offsets(k, p.loop_size, sa);
  g.a_sum = Offsets(ea, p.loop_size, sa);
  g.b_batch = Offsets(batch, p.loop_size, sb);
  g.b_k = Offsets(k, p.loop_size, sb);
  g.b_n = Offsets(n, p.loop_size, sb);
  g.b_sum = Offsets(eb, p.loop_size, sb);
  g.y_batch = Offsets(batch, p.loop_size, sy);
  g.y_m = Offsets(m, p.loop_size, sy);
  g.y_n = Offsets(n, p.loop_size, sy);
  g.batch = static_cast<int64_t>(g.a_batch.size());
  g.m = static_cast<int64_t>(g.a_m.size());
  g.n = static_cast<int64_t>(g.b_n.size());
  g.k = static_cast<int64_t>(g.a_k.size());
  if (g.a_sum.size() == 1 && g.a_sum[0] == 0) g.a = ReadInPlace(g.a_m, g.a_k, g.m, g.k);
  if (g.b_sum.size() == 1 && g.b_sum[0] == 0) g.b = ReadInPlace(g.b_k, g.b_n, g.k, g.n);
  const InPlace y = ReadInPlace(g.y_m, g.y_n, g.m, g.n);
  if (y.trans == 'N') g.y = y;
  return g;
}

GatherPlan MakeGatherPlan(const Plan& p) {
  const std::vector<int64_t>& sx = p.strides[0];
  GatherPlan g;
  std::vector<size_t> outer, sum;
  for (size_t i = 0; i + 1 < p.nout; ++i) outer.push_back(i);
  if (p.nout > 0) {
    g.inner = p.loop_size[p.nout - 1];
    g.inner_stride = sx[p.nout - 1];
  }
  for (size_t i = p.nout; i < p.nloop; ++i) {
    sum.push_back(i);
    if (p.loop_size[i] == 0) g.empty_sum = true;
  }
  g.outer = Offsets(outer, p.loop_size, sx);
  g.sum = Offsets(sum, p.loop_size, sx);
  return g;
}

// dst[i, j] (rows.size() x cols.size(), row-major) = the sum over `sum` of src[rows[i] + cols[j] + e], in its order:
// an operand packed for the GEMM, its own summed labels summed out.
template <typename T>
void PackSummed(const T* src, const std::vector<int64_t>& rows, const std::vector<int64_t>& cols,
                const std::vector<int64_t>& sum, std::vector<T>& dst) {
  const size_t nr = rows.size(), nc = cols.size();
  dst.resize(nr * nc);
  for (size_t i = 0; i < nr; ++i) {
    for (size_t j = 0; j < nc; ++j) {
      const T* p = src + rows[i] + cols[j];
      T acc = 0;
      for (int64_t e : sum) acc += p[e];
      dst[i * nc + j] = acc;
    }
  }
}

// C[m, n] = op(A)[m, k] op(B)[k, n], row-major with leading dimensions: oneDNN's sgemm for float32; for float64
// (oneDNN has no dgemm) a loop nest over rows of C that the compiler vectorizes along n.
void Gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc, const std::string& what) {
  const dnnl_status_t st = dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
  if (st != dnnl_success) throw InternalError(what + ": oneDNN dnnl_sgemm failed with status " + std::to_string(st));
}

void Gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc, const std::string&) {
  std::vector<double> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double av = ta == 'N' ? a[i * lda + p] : a[p * lda + i];
      if (tb == 'N') {
        const double* br = b + p * ldb;
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * br[j];
      } else {
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] += av * b[j * ldb + p];
      }
    }
    std::copy(row.begin(), row.end(), c + i * ldc);
  }
}

class Einsum : public OpKernel {
 public:
  explicit Einsum(const ir::Node& node) : eq_(ref::einsum::ParseEquation(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    EinsumState st{.plan = ref::einsum::Resolve(eq_, ctx)};
    if (st.plan.dtype != DataType::kFloat && st.plan.dtype != DataType::kDouble) {
      throw InvalidArgumentError(ctx.Describe() + ": cpu Einsum takes float32 or float64 inputs, got " +
                                 ctx.InputString(0));
    }
    if (st.plan.strides.size() == 2) {
      st.gemm = MakeGemmPlan(st.plan);
    } else {
      st.gather = MakeGatherPlan(st.plan);
    }
    ctx.SetOutput(0, st.plan.dtype, st.plan.out_shape);
    ctx.EmplaceState(std::move(st));
  }

  void Compute(KernelContext& ctx) const override {
    const EinsumState& st = ctx.state<EinsumState>();
    const bool f64 = st.plan.dtype == DataType::kDouble;
    if (st.plan.strides.size() == 2) {
      f64 ? RunGemm<double>(ctx, st.gemm) : RunGemm<float>(ctx, st.gemm);
    } else {
      f64 ? RunGather<double>(ctx, st.gather) : RunGather<float>(ctx, st.gather);
    }
  }

 private:
  template <class T>
  static void RunGather(KernelContext& ctx, const GatherPlan& g) {
    Tensor& yt = ctx.Output(0);
    if (yt.size() == 0 || g.empty_sum) return;  // Output() is zeroed: an empty sum is 0
    const T* x = ctx.required_input(0).data<T>();
    T* y = yt.data<T>();
    const int64_t rows = static_cast<int64_t>(g.outer.size());
    const int64_t work = g.inner * static_cast<int64_t>(g.sum.size());
    ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(work, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    T* yr = y + r * g.inner;
                    const T* xr = x + g.outer[static_cast<size_t>(r)];
                    for (int64_t j = 0; j < g.inner; ++j) {
                      const T* xj = xr + j * g.inner_stride;
                      T acc = 0;
                      for (int64_t e : g.sum) acc += xj[e];
                      yr[j] = acc;
                    }
                  }
                });
  }

  template <class T>
  static void RunGemm(KernelContext& ctx, const GemmPlan& g) {
    Tensor& yt = ctx.Output(0);
    if (yt.size() == 0 || g.empty_sum) return;  // zeroed
    const T* a = ctx.required_input(0).data<T>();
    const T* b = ctx.required_input(1).data<T>();
    T* y = yt.data<T>();
    const std::string what = ctx.Describe();
    auto one = [&](int64_t bi, std::vector<T>& ap, std::vector<T>& bp, std::vector<T>& cp) {
      const auto ub = static_cast<size_t>(bi);
      const T* a0 = a + g.a_batch[ub];
      const T* b0 = b + g.b_batch[ub];
      char ta = g.a.trans, tb = g.b.trans;
      int64_t lda = g.a.ld, ldb = g.b.ld;
      if (!ta) {  // pack A as [M, K], summing its own summed labels
        PackSummed(a0, g.a_m, g.a_k, g.a_sum, ap);
        a0 = ap.data(), ta = 'N', lda = std::max<int64_t>(g.k, 1);
      }
      if (!tb) {  // pack B as [K, N]
        PackSummed(b0, g.b_k, g.b_n, g.b_sum, bp);
        b0 = bp.data(), tb = 'N', ldb = std::max<int64_t>(g.n, 1);
      }
      if (g.y.trans == 'N') {
        Gemm(ta, tb, g.m, g.n, g.k, a0, lda, b0, ldb, y + g.y_batch[ub], g.y.ld, what);
        return;
      }
      cp.resize(static_cast<size_t>(g.m * g.n));
      Gemm(ta, tb, g.m, g.n, g.k, a0, lda, b0, ldb, cp.data(), std::max<int64_t>(g.n, 1), what);
      T* y0 = y + g.y_batch[ub];
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) {
          y0[g.y_m[static_cast<size_t>(i)] + g.y_n[static_cast<size_t>(j)]] = cp[static_cast<size_t>(i * g.n + j)];
        }
      }
    };
    const int threads = ctx.threads();
    if (threads > 1 && g.batch >= threads) {
      ParallelFor(threads, g.batch, 1, [&](int64_t begin, int64_t end) {
        std::vector<T> ap, bp, cp;
        for (int64_t bi = begin; bi < end; ++bi) one(bi, ap, bp, cp);
      });
      return;
    }
    const ScopedOmpThreads omp(threads);
    std::vector<T> ap, bp, cp;
    for (int64_t bi = 0; bi < g.batch; ++bi) one(bi, ap, bp, cp);
  }

  ref::einsum::Equation eq_;
};

std::string OneOrTwoInputs(const ir::Node& node) {
  if (node.num_inputs() <= 2) return "";
  return "Einsum: " + std::to_string(node.num_inputs()) + " inputs are not implemented on cpu (one or two are)";
}

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) {
  r.Add({.op = "Einsum",
         .since = 12,
         .types = {{"T", {DataType::kFloat, DataType::kDouble}}},
         .create = MakeKernel<Einsum>,
         .predicate = OneOrTwoInputs,
         .name = "cpu.any_einsum__gemm.12",
         .constraints = "one or two inputs",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
