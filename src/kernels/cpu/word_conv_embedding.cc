// com.microsoft::WordConvEmbedding on cpu (semantics and the per-word rules: ref/word_conv_embedding.cc). The
// windows of every word of non-zero length are unfolded into one matrix U [windows, w * E] (row t of a word: the C
// rows of its characters t .. t + w - 1, copied straight from C), so the whole convolution is one oneDNN sgemm,
// Z = U W^T + B ([windows, M], W read as [M, w * E]; Z starts as B's rows, beta 1); then, word by word, the max-pool
// of Z over its windows in ONNX Runtime's form and one tanh per output (simd_kernels.inc's Tanh, <= 2 ulp against
// glibc, AVX-512F / AVX2+FMA variants; the scalar variant uses std::tanh). Pooling before the tanh picks what
// pooling after it does: tanh is increasing and keeps NaN (where it rounds two inputs to one value, either gives
// that value), and a z below the pool's start -1e12 has tanh -1, what ONNX Runtime's pool gives then. The unfolding
// and the pooling are spread over threads by words; oneDNN threads the product. Against ref (double sums and tanh)
// the results differ by float rounding of the sums.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/word_conv_embedding.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

void TanhScalar(const float* x, float* y, int64_t n, const simd::UnaryParams&) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

using TanhFn = void (*)(const float* x, float* y, int64_t n, const simd::UnaryParams& p);

class WordConvEmbedding final : public OpKernel {
 public:
  WordConvEmbedding(const ir::Node& node, TanhFn tanh)
      : attrs_(ref::ParseWordConvEmbeddingAttributes(node)), tanh_(tanh) {}

  void Prepare(PrepareContext& ctx) const override {
    const ref::WordConvEmbeddingGeometry g = ref::CheckWordConvEmbeddingInputs(ctx, attrs_);
    ctx.EmplaceState(g);
    ctx.SetOutput(0, DataType::kFloat, {g.words, g.filters});
  }

  void Compute(KernelContext& ctx) const override {
    const ref::WordConvEmbeddingGeometry& g = ctx.state<ref::WordConvEmbeddingGeometry>();
    const int32_t* seq = ctx.required_input(0).data<int32_t>();
    const float* w = ctx.required_input(1).data<float>();
    const float* bias = ctx.required_input(2).data<float>();
    const float* emb = ctx.required_input(3).data<float>();
    float* y = ctx.OutputUninitialized(0).data<float>();
    const int64_t S = g.words, L = g.word_len, M = g.filters, K = g.window, E = g.char_dim;
    const int threads = ctx.threads();
    if (S == 0 || M == 0) return;
    // Each word's first window row in U (windows of words of length 0: none), and the ids' check.
    std::vector<int64_t> first(static_cast<size_t>(S + 1), 0);
    for (int64_t s = 0; s < S; ++s) {
      const int32_t* chars = seq + s * L;
      const int64_t n = ref::WordLength(chars, L);
      int64_t windows = 0;
      if (n > 0) {
        const int64_t looked_up = std::max(n, K);
        for (int64_t c = 0; c < looked_up; ++c) {
          if (chars[c] < 0 || chars[c] >= g.vocab) {
            throw InvalidArgumentError(ctx.Describe() + ": Sequence[" + std::to_string(s) + ", " + std::to_string(c) +
                                       "] = " + std::to_string(chars[c]) + " is not a row of C [" +
                                       std::to_string(g.vocab) + ", " + std::to_string(E) + "]");
          }
        }
        windows = looked_up - K + 1;
      }
      first[static_cast<size_t>(s + 1)] = first[static_cast<size_t>(s)] + windows;
    }
    const int64_t rows = first.back(), cols = K * E;
    std::vector<float> u(static_cast<size_t>(rows * cols)), z(static_cast<size_t>(rows * M));
    // Words per chunk: each copies about windows * w * E floats and pools windows * M.
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, L * (cols + M)));
    ParallelFor(threads, S, grain, [&](int64_t begin, int64_t end) {
      for (int64_t s = begin; s < end; ++s) {
        const int32_t* chars = seq + s * L;
        for (int64_t r = first[static_cast<size_t>(s)]; r < first[static_cast<size_t>(s + 1)]; ++r) {
          const int64_t t = r - first[static_cast<size_t>(s)];
          float* row = u.data() + r * cols;
          for (int64_t i = 0; i < K; ++i) {
            std::memcpy(row + i * E, emb + static_cast<int64_t>(chars[t + i]) * E, sizeof(float) * E);
          }
          std::memcpy(z.data() + r * M, bias, sizeof(float) * M);
        }
      }
    });
    if (rows > 0 && cols > 0) {
      ScopedOmpThreads omp(threads);
      const dnnl_status_t st = dnnl_sgemm('N', 'T', rows, M, cols, 1.0f, u.data(), cols, w, cols, 1.0f, z.data(), M);
      if (st != dnnl_success) {
        throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(st));
      }
    }
    const simd::UnaryParams params;
    ParallelFor(threads, S, grain, [&](int64_t begin, int64_t end) {
      for (int64_t s = begin; s < end; ++s) {
        float* out = y + s * M;
        const int64_t r0 = first[static_cast<size_t>(s)], r1 = first[static_cast<size_t>(s + 1)];
        if (r0 == r1) {
          std::fill(out, out + M, 0.0f);
          continue;
        }
        const float* zs = z.data() + r0 * M;
        std::fill(out, out + M, ref::kPoolStart);
        for (int64_t r = 0; r < r1 - r0; ++r) {
          const float* zr = zs + r * M;
          for (int64_t m = 0; m < M; ++m) out[m] = ref::PoolMax(zr[m], out[m]);
        }
        tanh_(out, out, M, params);
      }
    });
  }

 private:
  ref::WordConvEmbeddingAttributes attrs_;
  TanhFn tanh_;
};

}  // namespace

void RegisterWordConvEmbeddingKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, TanhFn fn) {
    r.Add({.op = "WordConvEmbedding",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kInt32}}, {"T1", {DataType::kFloat}}},
           .create = [fn](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<WordConvEmbedding>(node, fn);
           },
           .isa = isa,
           .name = "cpu.com.microsoft.f32_wordconvembedding__" + impl + ".1",
           .library = "oneDNN"});
  };
  def("avx512", {Isa::kAvx512f}, &avx512::Unary<avx512::TanhOp>);
  def("avx2", {Isa::kAvx2, Isa::kFma}, &avx2::Unary<avx2::TanhOp>);
  def("scalar", {}, &TanhScalar);
}

}  // namespace ferry::cpu
