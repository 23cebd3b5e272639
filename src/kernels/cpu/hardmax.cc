// Hardmax on the cpu backend (float32; AVX2 loops and a scalar variant): 1 at the first maximum along the
// normalised dimension, 0 elsewhere. Opsets 1-12 coerce X to 2-D at `axis` (default 1) and normalise each row of
// [prod(dims[:axis]), prod(dims[axis:])]; opset 13 normalises along `axis` (default -1): an [outer, n, inner] view.
// As in ref, the maximum is found by `v > best` from the first element: a NaN there wins (nothing compares
// greater), a NaN elsewhere never does.
//   - inner == 1: one vector pass for the maximum (NaN lanes ignored), then a scan for its first position;
//   - inner > 1: per column the best value and its row, vertical SIMD over 8 columns.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The position of the first maximum of x[0, n) (n >= 1), by ref's `v > best` rule.
int64_t RowArgScalar(const float* x, int64_t n) {
  float best = x[0];
  int64_t arg = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > best) best = x[i], arg = i;
  }
  return arg;
}

// Columns [0, w) of n rows `stride` apart: the row of each column's first maximum into rows[0, w).
void ColumnsArgScalar(const float* x, int64_t n, int64_t stride, int64_t w, int64_t* rows) {
  for (int64_t i = 0; i < w; ++i) {
    float best = x[i];
    int64_t arg = 0;
    for (int64_t j = 1; j < n; ++j) {
      const float v = x[j * stride + i];
      if (v > best) best = v, arg = j;
    }
    rows[i] = arg;
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

int64_t RowArg(const float* x, int64_t n) {
  if (std::isnan(x[0])) return 0;
  __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);  // a NaN element keeps m0
    m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
  }
  m0 = _mm256_max_ps(m0, m1);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m0);
  float m = lanes[0];
  for (int j = 1; j < 8; ++j) m = lanes[j] > m ? lanes[j] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (int64_t j = 0; j < n; ++j) {
    if (x[j] == m) return j;
  }
  return 0;
}

void ColumnsArg(const float* x, int64_t n, int64_t stride, int64_t w, int64_t* rows) {
  int64_t i = 0;
  for (; i + 8 <= w; i += 8) {
    __m256 best = _mm256_loadu_ps(x + i);
    __m256i row = _mm256_setzero_si256();
    for (int64_t j = 1; j < n; ++j) {
      const __m256 v = _mm256_loadu_ps(x + j * stride + i);
      const __m256 take = _mm256_cmp_ps(v, best, _CMP_GT_OQ);  // false when either is NaN, as `v > best`
      best = _mm256_blendv_ps(best, v, take);
      row = _mm256_castps_si256(_mm256_blendv_ps(
          _mm256_castsi256_ps(row), _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(j))), take));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + i), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(row)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rows + i + 4),
                        _mm256_cvtepi32_epi64(_mm256_extracti128_si256(row, 1)));
  }
  if (i < w) ColumnsArgScalar(x + i, n, stride, w - i, rows + i);
}

}  // namespace avx2
#pragma GCC pop_options

struct HardmaxFns {
  int64_t (*row)(const float* x, int64_t n);
  void (*columns)(const float* x, int64_t n, int64_t stride, int64_t w, int64_t* rows);
};

// X as [outer, n, inner]; outer = 0 for an empty X.
struct HardmaxPlan {
  int64_t outer = 0, n = 1, inner = 1;
};

class Hardmax : public OpKernel {
 public:
  Hardmax(const ir::Node& node, HardmaxFns fns)
      : fns_(fns), coerce_2d_(node.opset() < 13), axis_(node.GetInt("axis", node.opset() < 13 ? 1 : -1)) {}

  // Checks X's dtype and `axis` (an empty X has none to check), declares Y (X's shape) and resolves the view.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input must be float32, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    HardmaxPlan& p = ctx.EmplaceState(HardmaxPlan{});
    if (ShapeElementCount(x.shape) == 0) return;
    const auto rank = static_cast<int64_t>(x.shape.size());
    auto dim = [&](int64_t d) { return x.shape[static_cast<size_t>(d)]; };
    // A scalar is a single-element row; the 2-D coercion also accepts axis == rank (rows of one element).
    const int64_t axis = rank == 0                       ? 0
                         : (coerce_2d_ && axis_ == rank) ? rank
                                                         : ref::NormalizeAxis(axis_, rank, ctx.Describe());
    p.outer = 1;
    for (int64_t d = 0; d < axis; ++d) p.outer *= dim(d);
    if (coerce_2d_) {
      for (int64_t d = axis; d < rank; ++d) p.n *= dim(d);
    } else {
      if (rank > 0) p.n = dim(axis);
      for (int64_t d = axis + 1; d < rank; ++d) p.inner *= dim(d);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const HardmaxPlan& p = ctx.state<HardmaxPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (p.outer == 0) return;
    const int64_t n = p.n, inner = p.inner, block = n * inner;
    const float* in = x.data<float>();
    float* out = y.data<float>();
    ParallelFor(ctx.threads(), p.outer, std::max<int64_t>(1, 16384 / block), [&](int64_t b, int64_t e) {
      std::vector<int64_t> rows(static_cast<size_t>(inner == 1 ? 0 : inner));
      for (int64_t o = b; o < e; ++o) {
        const float* src = in + o * block;
        float* dst = out + o * block;
        std::memset(dst, 0, static_cast<size_t>(block) * sizeof(float));
        if (inner == 1) {
          dst[fns_.row(src, n)] = 1.0f;
          continue;
        }
        fns_.columns(src, n, inner, inner, rows.data());
        for (int64_t i = 0; i < inner; ++i) dst[rows[static_cast<size_t>(i)] * inner + i] = 1.0f;
      }
    });
  }

 private:
  HardmaxFns fns_;
  bool coerce_2d_;
  int64_t axis_;
};

}  // namespace

void RegisterHardmaxKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    HardmaxFns fns;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, {&avx2::RowArg, &avx2::ColumnsArg}},
      {"scalar", {}, {&RowArgScalar, &ColumnsArgScalar}},
  };
  // 1 and 11 differ only in the allowed axis range (2-D coercion); 13 normalises along one axis.
  for (const auto& [since, until] : {std::pair{1, 12}, std::pair{13, kOpsetOpen}}) {
    for (const auto& v : variants) {
      const HardmaxFns fns = v.fns;
      r.Add({.op = "Hardmax",
             .since = since,
             .until = until,
             .types = {{"T", {DataType::kFloat}}},
             .create = [fns](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<Hardmax>(node, fns);
             },
             .isa = v.isa,
             .name = std::string("cpu.hardmax__") + v.impl + "." + std::to_string(since)});
    }
  }
}

}  // namespace ferry::cpu
