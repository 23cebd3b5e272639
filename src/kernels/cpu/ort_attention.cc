// com.microsoft Attention and MultiHeadAttention (the semantics are ref's, src/kernels/ref/ort_attention.cc) on the
// cpu backend, float32. Prepare is ref's (ref::PrepareOrtAttention / PrepareOrtMultiHeadAttention).
//
// Attention first projects: proj [B S, Dq + Dk + Dv] = bias + input · weights, one dnnl_sgemm over all rows (the bias
// rows written first, beta = 1, ONNX Runtime's order). Q, K and V are then read in place from proj through its row
// stride; MultiHeadAttention reads query, key and value in place (with a bias, its sum is written once into a
// scratch copy; key and value [B, N, L, H] are read as they are). With a past, the past rows and the new ones are
// joined into present (when requested) or a scratch buffer; without one, a requested present is a copy.
// The attention itself is the cpu ONNX Attention's (onnx_attention.cc): per (batch, head) blocks of query rows
// (attention_common.h), S = scale Q_block Kᵀ with dnnl_sgemm, then per row the additive bias (attention_bias + the
// mask as ONNX Runtime writes it, mask_filter_value for a masked key, summed once into a scratch row when both are
// given), the causal frontier as the row's key limit, and the vector softmax (onnx_attention_kernels.inc's
// AttentionScoreRow), then Y_block = P V with a second dnnl_sgemm writing the output [B, S, N Hv] in place.
//
// Variants: AVX-512F and AVX2+FMA; a CPU with neither leaves the node to ref. MultiHeadAttention's qk output is
// left to ref (the predicate); a scale that is not finite is applied after the product.
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/attention_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/ort_attention.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// What the per-ISA row function needs besides the row (onnx_attention_kernels.inc).
struct OnnxAttentionRow {
  bool scale_here = false;
  float scale = 1.0f;
  float softcap = 0.0f;
  const float* mask = nullptr;
  int64_t limit = 0;
  bool all_masked = false;
  int64_t mode = 0;
  float* qk = nullptr;
};

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
// clang-format off
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/onnx_attention_kernels.inc"
// clang-format on
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
// clang-format off
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/onnx_attention_kernels.inc"
// clang-format on
}  // namespace avx2
#pragma GCC pop_options

using RowFn = void (*)(float* s, int64_t n, const OnnxAttentionRow& a);

// A float32 matrix per (batch, head): row j of head (b, n) at base + b*sb + n*sn + j*ld.
struct Mat {
  const float* base = nullptr;
  int64_t sb = 0, sn = 0, ld = 0;
  const float* At(int64_t b, int64_t n) const { return base + b * sb + n * sn; }
};

struct State {
  ref::OrtAttentionPlan plan;
  int threads = 1;
  int64_t rows = 0, blocks = 0;  // query rows per task, tasks per (batch, head)
};

void Split(State& st) {
  const ref::OrtAttentionPlan& p = st.plan;
  st.threads = std::max(1, st.threads);
  if (p.B * p.N == 0 || p.S == 0) return;
  st.rows = AttentionRowsPerTask(p.B * p.N, p.S, p.T, st.threads, 4);
  st.blocks = (p.S + st.rows - 1) / st.rows;
}

// [B, N, T, dim] rows of the past [B, N, P, dim] followed by the new rows `cur` into dst.
void JoinKv(const ref::OrtAttentionPlan& p, const float* past, const Mat& cur, int64_t dim, float* dst, int threads) {
  ParallelFor(threads, p.B * p.N, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bn = begin; bn < end; ++bn) {
      const int64_t b = bn / p.N, n = bn % p.N;
      float* o = dst + bn * p.T * dim;
      if (p.P > 0) std::copy(past + bn * p.P * dim, past + (bn + 1) * p.P * dim, o);
      const float* c = cur.At(b, n);
      for (int64_t j = 0; j < p.L; ++j) std::copy(c + j * cur.ld, c + j * cur.ld + dim, o + (p.P + j) * dim);
    }
  });
}

// K or V as a Mat over all T keys: `cur` itself without a past (copied to `present` when requested), else the join
// written into `present` or `scratch`.
Mat KeysOf(const ref::OrtAttentionPlan& p, const Mat& cur, const float* past, int64_t dim, float* present,
           std::vector<float>& scratch, int threads) {
  if (!past && !present) return cur;
  float* dst = present;
  if (!dst) {
    scratch.resize(static_cast<size_t>(p.B * p.N * p.T * dim));
    dst = scratch.data();
  }
  JoinKv(p, past, cur, dim, dst, threads);
  return Mat{dst, p.N * p.T * dim, p.T * dim, dim};
}

// The attention of Q, K, V (T keys each) into y [B, S, N Hv]; ab: attention_bias (or null); mask: ref's mask rows
// without the causal part ([B, R, T], empty without a mask).
void RunCore(const KernelContext& ctx, const State& st, RowFn row_fn, const Mat& q, const Mat& k, const Mat& v,
             const float* ab, const std::vector<float>& mask, float* y) {
  const ref::OrtAttentionPlan& p = st.plan;
  const int64_t S = p.S, T = p.T, Dv = p.N * p.Hv, rows = st.rows, blocks = st.blocks;
  if (p.B * p.N == 0 || S == 0) return;
  const int64_t R = mask.empty() ? 0 : static_cast<int64_t>(mask.size()) / std::max<int64_t>(p.B * T, 1);
  const bool fold = std::isfinite(p.scale) && p.scale != 0.0f;
  const bool both = ab && R > 0;
  RunAttentionTasks(ctx, st.threads, p.B * p.N * blocks, rows * T + (both ? T : 0), [&](int64_t t, float* s) {
    const int64_t bn = t / blocks, r0 = (t % blocks) * rows, m = std::min(rows, S - r0);
    const int64_t b = bn / p.N, n = bn % p.N;
    float* sum_row = s + rows * T;  // attention_bias + mask, when both are given
    float* yrow = y + (b * S + r0) * Dv + n * p.Hv;
    dnnl_status_t rc = dnnl_success;
    if (T > 0 && p.H > 0) {
      rc = dnnl_sgemm('N', 'T', m, T, p.H, fold ? p.scale : 1.0f, q.At(b, n) + r0 * q.ld, q.ld, k.At(b, n), k.ld, 0.0f,
                      s, T);
    } else {
      std::fill(s, s + m * T, 0.0f);
    }
    for (int64_t r = 0; r < m && T > 0; ++r) {
      const int64_t i = r0 + r;
      OnnxAttentionRow a{.scale_here = !fold, .scale = p.scale};
      a.limit = p.causal && i + 1 < S ? std::clamp<int64_t>(p.P + i + 1, 0, T) : T;  // ref's causal rows
      const float* abr = ab ? ab + b * p.ab_sb + n * p.ab_sn + i * T : nullptr;
      const float* mr = R ? mask.data() + (b * R + (R == 1 ? 0 : i)) * T : nullptr;
      if (both) {
        for (int64_t j = 0; j < T; ++j) sum_row[j] = abr[j] + mr[j];
        a.mask = sum_row;
      } else {
        a.mask = abr ? abr : mr;
      }
      row_fn(s + r * T, T, a);
    }
    if (p.Hv > 0 && T > 0 && rc == dnnl_success) {
      rc = dnnl_sgemm('N', 'N', m, p.Hv, T, 1.0f, s, T, v.At(b, n), v.ld, 0.0f, yrow, Dv);
    } else if (p.Hv > 0) {
      for (int64_t r = 0; r < m; ++r) std::fill(yrow + r * Dv, yrow + r * Dv + p.Hv, 0.0f);
    }
    return rc;
  });
}

class OrtAttentionCpu : public OpKernel {
 public:
  OrtAttentionCpu(const ir::Node& node, RowFn row) : attrs_(node, false), row_(row) {}

  void Prepare(PrepareContext& ctx) const override {
    State& st = ctx.EmplaceState(State{});
    st.plan = ref::PrepareOrtAttention(ctx, attrs_);
    st.threads = ctx.threads();
    Split(st);
  }

  void Compute(KernelContext& ctx) const override {
    const State& st = ctx.state<State>();
    const ref::OrtAttentionPlan& p = st.plan;
    const int64_t B = p.B, S = p.S, N = p.N, H = p.H, Hv = p.Hv, Din = p.input_hidden;
    const int64_t width = 2 * N * H + N * Hv;
    const std::vector<float> mask = ref::OrtAttentionMaskRows(p, ctx.input(3), attrs_.mask_filter_value, false,
                                                              ctx.Describe());
    std::vector<float> proj(static_cast<size_t>(B * S * width), 0.0f);
    if (const Tensor* bias = ctx.input(2)) {
      const float* bp = bias->data<float>();
      for (int64_t r = 0; r < B * S; ++r) std::copy(bp, bp + width, proj.data() + r * width);
    }
    if (B * S > 0 && width > 0 && Din > 0) {
      ScopedOmpThreads omp(st.threads);
      const dnnl_status_t rc = dnnl_sgemm('N', 'N', B * S, width, Din, 1.0f, ctx.required_input(0).data<float>(), Din,
                                          ctx.required_input(1).data<float>(), width, 1.0f, proj.data(), width);
      if (rc != dnnl_success) {
        throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(rc));
      }
    }
    const Mat q{proj.data(), S * width, H, width};
    const Mat k_new{proj.data() + N * H, S * width, H, width};
    const Mat v_new{proj.data() + 2 * N * H, S * width, Hv, width};
    const float* past = p.has_past ? ctx.input(4)->data<float>() : nullptr;
    float* present = ctx.output_requested(1) ? ctx.OutputUninitialized(1).data<float>() : nullptr;
    std::vector<float> ks, vs;
    const Mat k = KeysOf(p, k_new, past, H, present, ks, st.threads);
    const Mat v = KeysOf(p, v_new, past ? past + B * N * p.P * H : nullptr, Hv,
                         present ? present + B * N * p.T * H : nullptr, vs, st.threads);
    const float* ab = p.has_attention_bias ? ctx.input(5)->data<float>() : nullptr;
    Tensor& y = ctx.OutputUninitialized(0);
    RunCore(ctx, st, row_, q, k, v, ab, mask, y.data<float>());
  }

 private:
  ref::OrtAttentionAttrs attrs_;
  RowFn row_;
};

class OrtMultiHeadAttentionCpu : public OpKernel {
 public:
  OrtMultiHeadAttentionCpu(const ir::Node& node, RowFn row) : attrs_(node, true), row_(row) {}

  void Prepare(PrepareContext& ctx) const override {
    State& st = ctx.EmplaceState(State{});
    st.plan = ref::PrepareOrtMultiHeadAttention(ctx, attrs_);
    st.threads = ctx.threads();
    Split(st);
  }

  void Compute(KernelContext& ctx) const override {
    const State& st = ctx.state<State>();
    const ref::OrtAttentionPlan& p = st.plan;
    const int64_t B = p.B, S = p.S, L = p.L, N = p.N, H = p.H, Hv = p.Hv, D = N * H, Dv = N * Hv;
    const std::vector<float> mask = ref::OrtAttentionMaskRows(p, ctx.input(4), attrs_.mask_filter_value, false,
                                                              ctx.Describe());
    const float* bias = p.has_bias ? ctx.input(3)->data<float>() : nullptr;
    // [B, rows, width] plus bias[offset ..], in place without a bias.
    std::vector<float> qs, kb, vb;
    auto with_bias = [&](const Tensor& t, int64_t rows, int64_t width, int64_t offset, std::vector<float>& buf) {
      const float* src = t.data<float>();
      if (!bias) return src;
      buf.resize(static_cast<size_t>(B * rows * width));
      ParallelFor(st.threads, B * rows, 64, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          for (int64_t c = 0; c < width; ++c) buf[r * width + c] = src[r * width + c] + bias[offset + c];
        }
      });
      return static_cast<const float*>(buf.data());
    };
    const Mat q{with_bias(ctx.required_input(0), S, D, 0, qs), S * D, H, D};
    Mat k_new, v_new;
    if (p.kv_bnsh) {
      k_new = Mat{ctx.required_input(1).data<float>(), N * L * H, L * H, H};
      v_new = Mat{ctx.required_input(2).data<float>(), N * L * Hv, L * Hv, Hv};
    } else {
      k_new = Mat{with_bias(ctx.required_input(1), L, D, D, kb), L * D, H, D};
      v_new = Mat{with_bias(ctx.required_input(2), L, Dv, 2 * D, vb), L * Dv, Hv, Dv};
    }
    float* pk_out = ctx.output_requested(1) ? ctx.OutputUninitialized(1).data<float>() : nullptr;
    float* pv_out = ctx.output_requested(2) ? ctx.OutputUninitialized(2).data<float>() : nullptr;
    std::vector<float> ks, vs;
    const Mat k = KeysOf(p, k_new, p.has_past ? ctx.input(6)->data<float>() : nullptr, H, pk_out, ks, st.threads);
    const Mat v = KeysOf(p, v_new, p.has_past ? ctx.input(7)->data<float>() : nullptr, Hv, pv_out, vs, st.threads);
    const float* ab = p.has_attention_bias ? ctx.input(5)->data<float>() : nullptr;
    Tensor& y = ctx.OutputUninitialized(0);
    RunCore(ctx, st, row_, q, k, v, ab, mask, y.data<float>());
  }

 private:
  ref::OrtAttentionAttrs attrs_;
  RowFn row_;
};

std::string AttentionPredicate(const ir::Node& n) {
  if (n.GetInt("do_rotary", 0) != 0) return "Attention: do_rotary = 1 is not implemented";
  if (n.GetInt("past_present_share_buffer", 0) != 0)
    return "Attention: past_present_share_buffer = 1 is not implemented";
  return "";
}

std::string MhaPredicate(const ir::Node& n) {
  if (n.num_outputs() > 3 && n.output(3)) return "MultiHeadAttention: output qk is computed by ref";
  for (size_t i : {8, 9}) {
    if (i < n.num_inputs() && n.input(i)) return "MultiHeadAttention: past_sequence_length / cache_indirection";
  }
  return "";
}

}  // namespace

void RegisterOrtAttentionKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    RowFn row;
  } variants[] = {
      {"avx512", {Isa::kAvx512f}, &avx512::AttentionScoreRow},
      {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::AttentionScoreRow},
  };
  for (const auto& v : variants) {
    const RowFn row = v.row;
    r.Add({.op = "Attention",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"M", {DataType::kInt32}}},
           .create = [row](const ir::Node& node,
                           const KernelOptions&) { return std::make_unique<OrtAttentionCpu>(node, row); },
           .predicate = AttentionPredicate,
           .shape_predicate = ref::OrtAttentionShapePredicate,
           .isa = v.isa,
           .name = std::string("cpu.f32_ms_attention__") + v.impl + ".1",
           .constraints = "float32; do_rotary, past_present_share_buffer and a 4-D mask_index not implemented",
           .library = "oneDNN"});
    r.Add({.op = "MultiHeadAttention",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"QK", {DataType::kFloat}}, {"M", {DataType::kInt32}}},
           .create = [row](const ir::Node& node,
                           const KernelOptions&) { return std::make_unique<OrtMultiHeadAttentionCpu>(node, row); },
           .predicate = MhaPredicate,
           .shape_predicate = ref::OrtAttentionShapePredicate,
           .isa = v.isa,
           .name = std::string("cpu.f32_ms_multi_head_attention__") + v.impl + ".1",
           .constraints = "float32; qk output, packed QKV / KV, past_sequence_length, cache_indirection on ref",
           .library = "oneDNN"});
  }
}

}  // namespace ferry::cpu
