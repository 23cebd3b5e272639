// Shared pieces of the cpu LSTM, GRU and RNN kernels (float32): the problem sizes in the node's layout, weights packed
// for the per-step GEMM (R transposed to [hidden, gates*hidden] per direction, the two biases side by side, and for
// small batches R^T's column segments in recurrent_gemv.h's panels), the input projection X*W^T + bias for every
// timestep in one dnnl_sgemm per direction, the per-step [batch, hidden] x R^T product (recurrent_gemv.h's kernel for
// small batches, dnnl_sgemm above), and the activations (Sigmoid and Tanh vectorized for the host's best ISA, the
// others through ref's scalar expressions). Attribute parsing and the Prepare checks are ref's (rnn_common.h), so both
// backends accept and refuse the same nodes with the same messages.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "kernels/cpu/recurrent_gemv.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "kernels/ref/rnn_common.h"

namespace ferry::cpu::recurrent {

namespace rnn = ::ferry::ref::rnn;

// Sizes of one run. Rows of X, and of the projection, are (t, b) at Row(t, b): t * batch + b in layout 0,
// b * seq + t in layout 1.
struct Sizes {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dir = 1, gates = 1, layout = 0;
  int64_t G() const { return gates * hidden; }
  int64_t Row(int64_t t, int64_t b) const { return layout == 0 ? t * batch + b : b * seq + t; }
  // Offset of Y[t, d, b, :] (layout 0: [seq, dir, batch, hidden]; layout 1: [batch, seq, dir, hidden]).
  int64_t YOffset(int64_t t, int64_t d, int64_t b) const {
    return (layout == 0 ? (t * dir + d) * batch + b : (b * seq + t) * dir + d) * hidden;
  }
  // Offset of a state's [d, b, :] (layout 0: [dir, batch, hidden]; layout 1: [batch, dir, hidden]).
  int64_t StateOffset(int64_t d, int64_t b) const { return (layout == 0 ? d * batch + b : b * dir + d) * hidden; }
};

Sizes SizesOf(const Tensor& x, const Tensor& r, const rnn::Attributes& attrs, int64_t gates);

// R transposed per direction, [dir][hidden, G], and the biases [dir][2G] (Wb then Rb; zeros when B is absent).
// panels: per direction, R^T's column segments [0, ends[0] * hidden), [ends[0] * hidden, ends[1] * hidden), ...
// packed for SmallGemm (empty when not packed: a batch above kMaxSmallRows, or no vector ISA).
struct PackedWeights {
  std::vector<float> rt;
  std::vector<float> bias;
  std::vector<Panels> panels;  // [dir][segment]
  int64_t segments = 1;
  const float* Rt(int64_t d, int64_t hidden, int64_t g) const { return rt.data() + d * hidden * g; }
  const Panels* Segment(int64_t d, int64_t seg) const {
    return panels.empty() ? nullptr : &panels[static_cast<size_t>(d * segments + seg)];
  }
  const float* Wb(int64_t d, int64_t g) const { return bias.data() + d * 2 * g; }
  const float* Rb(int64_t d, int64_t g) const { return bias.data() + d * 2 * g + g; }
};

// `ends`: the segments' column ends in units of hidden (the last one = gates); panels are packed when `panels`.
PackedWeights Pack(const float* r, const float* b, int64_t dir, int64_t g, int64_t hidden,
                   const std::vector<int64_t>& ends, Simd panels);

// The packed weights of a Compute: Prepare's when R and B were constants (its state), else packed from the inputs
// (with panels only when the batch is small enough for SmallGemm).
PackedWeights PackFromInputs(const KernelContext& ctx, const Sizes& s, const std::vector<int64_t>& ends, Simd simd);

// In Prepare, after rnn::Prepare: packs R and B into the kernel's state when both are known before the run.
void PackConstants(PrepareContext& ctx, int64_t gates, const rnn::Attributes& attrs, const std::vector<int64_t>& ends,
                   Simd simd);

// xw[Row(t, b) * G + g] = X[t, b, :] . W[d, g, :] + bias[g] + (bias2 ? bias2[g] : 0), for every t and b.
void ProjectInput(const KernelContext& ctx, const Sizes& s, int64_t d, const float* bias, const float* bias2,
                  std::vector<float>& xw);

// c[m, n] = a[m, k] * b[k, n] + beta * c (row-major, lda/ldb/ldc in floats), through dnnl_sgemm.
void Gemm(const KernelContext& ctx, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float beta, float* c, int64_t ldc);

// The per-step product c[m, n] = a[m, k] * b[k, n] + beta * c: SmallGemm on `panels` (columns [0, n) of b packed)
// when it serves m, else Gemm.
// `step`: the timestep, whose parity picks SmallGemm's panel order.
void StepGemm(const KernelContext& ctx, int64_t step, int64_t m, int64_t n, int64_t k, const float* a,
              int64_t lda, const float* b, int64_t ldb, const Panels* panels, float beta, float* c, int64_t ldc);

// sequence_lens (validated against [0, seq], the message naming the node), or seq for every batch row.
std::vector<int64_t> ReadLens(const KernelContext& ctx, const Sizes& s);

// A state input (initial_h, initial_c) in layout 0 order [dir, batch, hidden], or zeros when absent.
std::vector<float> ReadState(const KernelContext& ctx, int idx, const Sizes& s);

// Writes a [dir, batch, hidden] state to output `idx` in the node's layout, when requested.
void WriteState(KernelContext& ctx, int idx, const Sizes& s, const std::vector<float>& state);

// In place: x = act(x) over n floats; Sigmoid and Tanh vectorized for `simd`, the others as ref computes them.
void Activate(Simd simd, const rnn::Activation& act, float* x, int64_t n);

using Maker = std::function<std::unique_ptr<OpKernel>(const ir::Node& node, Simd simd)>;

// Registers an op's cpu variants, best first: cpu.f32_<lower>__avx512.7 (AVX-512F), __avx2.7 (AVX2+FMA) and
// __sgemm.7 (no vector ISA), each made by make(node, its Simd). Versions 7, 14 (layout) and 22 (bfloat16, not
// taken here): one float32 implementation serves them.
void AddVariants(KernelRegistry& r, const std::string& op, const std::string& lower, const Maker& make);

// In place: clamp to [-clip, clip] when clip > 0.
void Clip(float* x, int64_t n, float clip);

// Time index of batch row with length `len` at step `step` of direction d (reverse rows walk len-1..0).
inline int64_t TimeIndex(const rnn::Attributes& attrs, int64_t d, int64_t len, int64_t step) {
  return rnn::TimeIndex(attrs, d, len, step);
}

}  // namespace ferry::cpu::recurrent
