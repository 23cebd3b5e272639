// RotaryEmbedding (opset 23, and com.microsoft RotaryEmbedding, whose cache rows and input order Prepare resolves;
// the semantics are ref's, src/kernels/ref/rotary_embedding.cc) on the cpu backend, float32, AVX2+FMA. Prepare is
// ref's (ref::PrepareRotaryEmbedding). Compute splits the (batch, position) rows over the threads; per row the
// cache's cos / sin are read once and applied to every head:
//   non-interleaved (pairs k, k + rot/2): y1 = c x1 - s x2, y2 = s x1 + c x2 on contiguous halves;
//   interleaved (pairs 2k, 2k + 1): the row's cos / sin are first widened to per-feature [c0 c0 c1 c1 ..] and
//   [s0 s0 s1 s1 ..], then y = fmaddsub(x, c, swap_pairs(x) * s) gives c x1 - s x2 in even and s x1 + c x2 in
//   odd lanes.
// Features past rot are copied. Memory-bound: an AVX-512 variant would not pay, so a CPU without AVX2 and FMA
// leaves the node to ref.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/rotary_embedding.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

// y = c * x1 - s * x2 and c * x2 + s * x1 for the halves x1 = x[0, half), x2 = x[half, 2 half).
void RotateHalves(const float* x, const float* c, const float* s, float* y, int64_t half) {
  int64_t k = 0;
  for (; k + 8 <= half; k += 8) {
    const __m256 cv = _mm256_loadu_ps(c + k), sv = _mm256_loadu_ps(s + k);
    const __m256 x1 = _mm256_loadu_ps(x + k), x2 = _mm256_loadu_ps(x + half + k);
    _mm256_storeu_ps(y + k, _mm256_sub_ps(_mm256_mul_ps(cv, x1), _mm256_mul_ps(sv, x2)));
    _mm256_storeu_ps(y + half + k, _mm256_add_ps(_mm256_mul_ps(sv, x1), _mm256_mul_ps(cv, x2)));
  }
  for (; k < half; ++k) {
    const float x1 = x[k], x2 = x[half + k];
    y[k] = c[k] * x1 - s[k] * x2;
    y[half + k] = s[k] * x1 + c[k] * x2;
  }
}

// The same on pairs (x[2k], x[2k + 1]) with the widened rows cc / ss of rot = 2 half features.
void RotatePairs(const float* x, const float* cc, const float* ss, float* y, int64_t rot) {
  int64_t i = 0;
  for (; i + 8 <= rot; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    const __m256 swapped = _mm256_permute_ps(xv, 0xB1);  // [x1 x0 x3 x2 ..]
    const __m256 t = _mm256_mul_ps(swapped, _mm256_loadu_ps(ss + i));
    _mm256_storeu_ps(y + i, _mm256_fmaddsub_ps(xv, _mm256_loadu_ps(cc + i), t));
  }
  for (; i < rot; i += 2) {
    const float x1 = x[i], x2 = x[i + 1];
    y[i] = cc[i] * x1 - ss[i] * x2;
    y[i + 1] = ss[i] * x1 + cc[i] * x2;
  }
}

// Rows [begin, end) of (b, s): `rows[bs]` is the cache row of (b, s) (empty: bs itself).
void RotateRows(const ref::RotaryEmbeddingPlan& p, bool interleaved, const std::vector<int64_t>& rows,
                const float* in, const float* cos, const float* sin, float* out, int64_t begin, int64_t end) {
  std::vector<float> wide(static_cast<size_t>(interleaved ? 2 * p.rot : 0));
  for (int64_t bs = begin; bs < end; ++bs) {
    const int64_t b = bs / p.S, s = bs % p.S;
    const int64_t row = rows.empty() ? bs : rows[static_cast<size_t>(bs)];
    const float* cr = cos + row * p.half;
    const float* sr = sin + row * p.half;
    if (interleaved) {
      for (int64_t k = 0; k < p.half; ++k) {
        wide[static_cast<size_t>(2 * k)] = wide[static_cast<size_t>(2 * k + 1)] = cr[k];
        wide[static_cast<size_t>(p.rot + 2 * k)] = wide[static_cast<size_t>(p.rot + 2 * k + 1)] = sr[k];
      }
    }
    for (int64_t h = 0; h < p.H; ++h) {
      const float* x = in + b * p.sb + h * p.sh + s * p.ss;
      float* y = out + b * p.sb + h * p.sh + s * p.ss;
      if (interleaved) {
        RotatePairs(x, wide.data(), wide.data() + p.rot, y, p.rot);
      } else {
        RotateHalves(x, cr, sr, y, p.half);
      }
      std::copy(x + p.rot, x + p.D, y + p.rot);
    }
  }
}

}  // namespace avx2
#pragma GCC pop_options

class RotaryEmbedding : public OpKernel {
 public:
  explicit RotaryEmbedding(const ir::Node& node) : attrs_(node) {}

  void Prepare(PrepareContext& ctx) const override {
    ctx.EmplaceState(ref::PrepareRotaryEmbedding(ctx, attrs_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ref::RotaryEmbeddingPlan& p = ctx.state<ref::RotaryEmbeddingPlan>();
    const Tensor& cos = ctx.required_input(p.cos_in);
    const Tensor& sin = ctx.required_input(p.sin_in);
    const std::vector<int64_t> rows = ref::RotaryEmbeddingPositions(p, ctx.input(p.pos_in), cos, ctx.Describe());
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const float* in = x.data<float>();
    const float* cp = cos.data<float>();
    const float* sp = sin.data<float>();
    float* out = y.data<float>();
    const bool interleaved = attrs_.interleaved;
    const int64_t chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(p.H * p.D, 1));  // >= ~64 KB a chunk
    ParallelFor(ctx.threads(), p.B * p.S, chunk, [&](int64_t begin, int64_t end) {
      avx2::RotateRows(p, interleaved, rows, in, cp, sp, out, begin, end);
    });
  }

 private:
  ref::RotaryEmbeddingAttrs attrs_;
};

}  // namespace

void RegisterRotaryEmbeddingKernels(KernelRegistry& r) {
  r.Add({.op = "RotaryEmbedding",
         .since = 23,
         .types = {{"T", {DataType::kFloat}}, {"M", {DataType::kInt64}}},
         .create = MakeKernel<RotaryEmbedding>,
         .isa = {Isa::kAvx2, Isa::kFma},
         .name = "cpu.f32_rotary_embedding__avx2.23"});
  // com.microsoft, group "attention": the same kernel.
  r.Add({.op = "RotaryEmbedding",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}, {"M", {DataType::kInt64}}},
         .create = MakeKernel<RotaryEmbedding>,
         .isa = {Isa::kAvx2, Isa::kFma},
         .name = "cpu.f32_ms_rotary_embedding__avx2.1"});
}

}  // namespace ferry::cpu
