// See recurrent_common.h.
#include "kernels/cpu/recurrent_common.h"

#include <dnnl.h>

#include <algorithm>
#include <cstring>

#include "core/isa.h"
#include "kernels/cpu/dnnl_util.h"  // ScopedOmpThreads
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"

namespace ferry::cpu::recurrent {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
void SigmoidRow(float* x, int64_t n) { Unary<SigmoidOp>(x, x, n, simd::UnaryParams{}); }
void TanhRow(float* x, int64_t n) { Unary<TanhOp>(x, x, n, simd::UnaryParams{}); }
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
void SigmoidRow(float* x, int64_t n) { Unary<SigmoidOp>(x, x, n, simd::UnaryParams{}); }
void TanhRow(float* x, int64_t n) { Unary<TanhOp>(x, x, n, simd::UnaryParams{}); }
}  // namespace avx2
#pragma GCC pop_options

using RowFn = void (*)(float* x, int64_t n);

struct ActivationFns {
  RowFn sigmoid = nullptr, tanh = nullptr;  // nullptr: no vector ISA, the scalar expressions
};

ActivationFns Fns(Simd simd) {
  if (simd == Simd::kAvx512) return ActivationFns{&avx512::SigmoidRow, &avx512::TanhRow};
  if (simd == Simd::kAvx2) return ActivationFns{&avx2::SigmoidRow, &avx2::TanhRow};
  return ActivationFns{};
}

}  // namespace

Sizes SizesOf(const Tensor& x, const Tensor& r, const rnn::Attributes& attrs, int64_t gates) {
  Sizes s;
  s.layout = attrs.layout;
  s.seq = attrs.layout == 0 ? x.dim(0) : x.dim(1);
  s.batch = attrs.layout == 0 ? x.dim(1) : x.dim(0);
  s.input = x.dim(2);
  s.hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r.dim(2);
  s.dir = attrs.num_directions;
  s.gates = gates;
  return s;
}

PackedWeights Pack(const float* r, const float* b, int64_t dir, int64_t g, int64_t hidden,
                   const std::vector<int64_t>& ends, Simd panels) {
  PackedWeights p;
  p.rt.resize(static_cast<size_t>(dir * hidden * g));
  for (int64_t d = 0; d < dir; ++d) {
    const float* rd = r + d * g * hidden;  // [g, hidden]
    float* out = p.rt.data() + d * hidden * g;  // [hidden, g]
    for (int64_t row = 0; row < g; ++row) {
      for (int64_t k = 0; k < hidden; ++k) out[k * g + row] = rd[row * hidden + k];
    }
  }
  if (b) {
    p.bias.assign(b, b + dir * 2 * g);
  } else {
    p.bias.assign(static_cast<size_t>(dir * 2 * g), 0.0f);
  }
  p.segments = static_cast<int64_t>(ends.size());
  if (panels == Simd::kNone || hidden == 0) return p;
  for (int64_t d = 0; d < dir; ++d) {
    int64_t begin = 0;
    for (const int64_t end : ends) {
      p.panels.push_back(PackPanels(panels, p.Rt(d, hidden, g) + begin * hidden, g, hidden, (end - begin) * hidden));
      begin = end;
    }
  }
  return p;
}

PackedWeights PackFromInputs(const KernelContext& ctx, const Sizes& s, const std::vector<int64_t>& ends, Simd simd) {
  const Tensor* b = ctx.input(3);
  return Pack(ctx.required_input(2).data<float>(), b ? b->data<float>() : nullptr, s.dir, s.G(), s.hidden, ends,
              s.batch <= kMaxSmallRows && s.seq > 1 ? simd : Simd::kNone);
}

void PackConstants(PrepareContext& ctx, int64_t gates, const rnn::Attributes& attrs,
                   const std::vector<int64_t>& ends, Simd simd) {
  const Tensor* r = ctx.constant(2);
  const Tensor* b = ctx.has_input(3) ? ctx.constant(3) : nullptr;
  if (!r || !r->raw_data() || (ctx.has_input(3) && (!b || !b->raw_data()))) return;
  const int64_t hidden = attrs.hidden_size > 0 ? attrs.hidden_size : r->dim(2);
  ctx.EmplaceState(Pack(r->data<float>(), b ? b->data<float>() : nullptr, attrs.num_directions, gates * hidden,
                        hidden, ends, simd));
}

void Gemm(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    }
    return;
  }
  const dnnl_status_t st = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
  if (st != dnnl_success) {
    throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(st));
  }
}

void StepGemm(const KernelContext& ctx, int64_t step, int64_t m, int64_t n, int64_t k, const float* a,
              int64_t lda, const float* b, int64_t ldb, const Panels* panels, float beta, float* c, int64_t ldc) {
  if (panels && panels->n == n && panels->k == k &&
      SmallGemm(ctx.threads(), m, a, lda, *panels, step % 2 == 1, beta, c, ldc)) {
    return;
  }
  Gemm(ctx, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void ProjectInput(const KernelContext& ctx, const Sizes& s, int64_t d, const float* bias, const float* bias2,
                  std::vector<float>& xw) {
  const int64_t rows = s.seq * s.batch, G = s.G(), K = s.input;
  xw.resize(static_cast<size_t>(rows * G));
  if (rows == 0 || G == 0) return;
  const float* x = ctx.required_input(0).data<float>();
  const float* w = ctx.required_input(1).data<float>() + d * G * K;  // [G, K]
  if (K == 0) {
    std::fill(xw.begin(), xw.end(), 0.0f);
  } else {
    const dnnl_status_t st = dnnl_sgemm('N', 'T', rows, G, K, 1.0f, x, K, w, K, 0.0f, xw.data(), G);
    if (st != dnnl_success) {
      throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(st));
    }
  }
  std::vector<float> sum(bias, bias + G);
  if (bias2) {
    for (int64_t g = 0; g < G; ++g) sum[static_cast<size_t>(g)] += bias2[g];
  }
  for (int64_t row = 0; row < rows; ++row) {
    float* o = xw.data() + row * G;
    for (int64_t g = 0; g < G; ++g) o[g] += sum[static_cast<size_t>(g)];
  }
}

std::vector<int64_t> ReadLens(const KernelContext& ctx, const Sizes& s) {
  std::vector<int64_t> lens(static_cast<size_t>(s.batch), s.seq);
  const Tensor* sl = ctx.input(4);
  if (!sl) return lens;
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t l = sl->dtype() == DataType::kInt32 ? sl->data<int32_t>()[b] : sl->data<int64_t>()[b];
    if (l < 0 || l > s.seq) {
      throw InvalidArgumentError(ctx.Describe() + ": sequence_lens value " + std::to_string(l) + " is outside [0, " +
                                 std::to_string(s.seq) + "]");
    }
    lens[static_cast<size_t>(b)] = l;
  }
  return lens;
}

std::vector<float> ReadState(const KernelContext& ctx, int idx, const Sizes& s) {
  std::vector<float> out(static_cast<size_t>(s.dir * s.batch * s.hidden), 0.0f);
  const Tensor* t = ctx.input(idx);
  if (!t) return out;
  const float* p = t->data<float>();
  for (int64_t d = 0; d < s.dir; ++d) {
    for (int64_t b = 0; b < s.batch; ++b) {
      std::copy_n(p + s.StateOffset(d, b), s.hidden, out.data() + (d * s.batch + b) * s.hidden);
    }
  }
  return out;
}

void WriteState(KernelContext& ctx, int idx, const Sizes& s, const std::vector<float>& state) {
  if (!ctx.output_requested(idx)) return;
  float* p = ctx.OutputUninitialized(idx).data<float>();
  for (int64_t d = 0; d < s.dir; ++d) {
    for (int64_t b = 0; b < s.batch; ++b) {
      std::copy_n(state.data() + (d * s.batch + b) * s.hidden, s.hidden, p + s.StateOffset(d, b));
    }
  }
}

void Activate(Simd simd, const rnn::Activation& act, float* x, int64_t n) {
  const ActivationFns f = Fns(simd);
  if (act.kind == rnn::Activation::Kind::kSigmoid && f.sigmoid) {
    f.sigmoid(x, n);
  } else if (act.kind == rnn::Activation::Kind::kTanh && f.tanh) {
    f.tanh(x, n);
  } else {
    act.Apply(x, n);
  }
}

void AddVariants(KernelRegistry& r, const std::string& op, const std::string& lower, const Maker& make) {
  const struct {
    const char* impl;
    IsaSet isa;
    Simd simd;
  } variants[] = {{"avx512", {Isa::kAvx512f}, Simd::kAvx512},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, Simd::kAvx2},
                  {"sgemm", {}, Simd::kNone}};
  for (const auto& v : variants) {
    const Simd simd = v.simd;
    r.Add({.op = op,
           .since = 7,
           .types = {{"T", {DataType::kFloat}}, {"T1", {DataType::kInt32}}},
           .create = [make, simd](const ir::Node& node, const KernelOptions&) { return make(node, simd); },
           .isa = v.isa,
           .name = "cpu.f32_" + lower + "__" + v.impl + ".7",
           .library = "oneDNN"});
  }
}

void Clip(float* x, int64_t n, float clip) {
  if (!(clip > 0)) return;
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], -clip), clip);
}

}  // namespace ferry::cpu::recurrent
