// ONNX Attention (opsets 23, 24; the semantics are ref's, src/kernels/ref/attention.cc) on the cpu backend, float32
// and float16 (computed in float32: inputs converted once, outputs rounded once).
//
// Prepare runs ref's checks (ref::PrepareOnnxAttention: one copy of the shape logic for both backends) and cuts the
// work into tasks. A task is a block of query rows of one "unit": one (batch, q head), or, when the layout lets
// the rows of a group of q heads sharing a kv head form one strided matrix (4-D Q and Y, or a single query row),
// the whole group. Grouped-query decode thus multiplies group x Sq rows against a kv head at once.
// Each task: S = scale Q_block K^T with dnnl_sgemm (K read in place through its row stride: 3-D or 4-D, or the
// past + new concatenation, written into present_key when that is requested); then, row by row while the block is
// in cache, softcap, the bias (mask row, the causal frontier and nonpad_kv_seqlen folded into one `limit`: keys from
// it on get -inf added, as ref adds its -inf bias) and the vector softmax (onnx_attention_kernels.inc), copying the
// qk_matmul_output row out at the stage its mode names; then Y_block = P V with a second dnnl_sgemm writing Y in
// place (3-D or 4-D). dnnl_sgemm inside the parallel region runs single-threaded; inline it gets ctx.threads().
//
// Variants: AVX-512F and AVX2+FMA; a CPU with neither leaves the node to ref. A scale that is zero or not finite
// is applied after the product (sgemm's alpha = 0 would skip it, losing the NaN of inf * 0).
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "ferry/float16.h"
#include "kernels/cpu/attention_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/onnx_attention.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// What the per-ISA row function needs besides the row (onnx_attention_kernels.inc).
struct OnnxAttentionRow {
  bool scale_here = false;  // multiply by `scale` (not folded into the GEMM)
  float scale = 1.0f;
  float softcap = 0.0f;
  const float* mask = nullptr;  // the float mask row (nullptr: none)
  int64_t limit = 0;            // keys [limit, n) are masked
  bool all_masked = false;      // the bias is -inf everywhere: P = 0
  int64_t mode = 0;             // qk_matmul_output_mode
  float* qk = nullptr;          // the qk_matmul_output row (nullptr: not requested)
};

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/onnx_attention_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
#include "kernels/cpu/softmax_kernels.inc"
#include "kernels/cpu/onnx_attention_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

using RowFn = void (*)(float* s, int64_t n, const OnnxAttentionRow& a);

// A float32 matrix source: row j of head (b, h) at base + b*sb + h*sh + j*ss.
struct Rows {
  const float* base = nullptr;
  int64_t sb = 0, sh = 0, ss = 0;
  const float* At(int64_t b, int64_t h) const { return base + b * sb + h * sh; }
};

// The prepared state: ref's geometry and the task split.
struct OnnxAttentionState {
  ref::OnnxAttentionPlan plan;
  int threads = 1;
  int64_t unit_heads = 1;                   // q heads per unit (the group when its rows form one matrix, else 1)
  int64_t q_row = 0, y_row = 0;             // the row stride of a unit's matrix in Q and in Y
  int64_t units = 0, rows = 0, blocks = 0;  // units; rows per task; tasks per unit
};

// Rows per task (attention_common.h): at least 4, and the tasks of a unit.
void SplitTasks(OnnxAttentionState& st) {
  const int64_t m = st.unit_heads * st.plan.q.seq;
  st.rows = AttentionRowsPerTask(st.units, m, st.plan.total, st.threads, 4);
  st.blocks = (m + st.rows - 1) / st.rows;
}

template <typename T>
float ToFloat(T x) {
  return static_cast<float>(x);
}

// [B, H, Spast + Snew, dim] float32 rows of the past followed by the new rows (view `cur`) into `dst`; the same
// in T into `present` when given (and not `dst` itself).
template <typename T>
void GatherKv(const T* past, const T* cur, const ref::AttentionHeadView& cv, int64_t spast, int64_t dim, float* dst,
              T* present, int threads) {
  const int64_t H = cv.heads, S = spast + cv.seq;
  ParallelFor(threads, cv.batch * H, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      for (int64_t s = 0; s < S; ++s) {
        const T* src = s < spast ? past + (bh * spast + s) * dim : cur + cv.At(b, h, s - spast);
        const int64_t o = (bh * S + s) * dim;
        if (present && static_cast<const void*>(present + o) != static_cast<const void*>(dst + o)) {
          std::copy(src, src + dim, present + o);
        }
        for (int64_t d = 0; d < dim; ++d) dst[o + d] = ToFloat(src[d]);
      }
    }
  });
}

class OnnxAttention : public OpKernel {
 public:
  OnnxAttention(const ir::Node& node, RowFn row) : attrs_(node), row_(row) {}

  void Prepare(PrepareContext& ctx) const override {
    OnnxAttentionState& st = ctx.EmplaceState(OnnxAttentionState{});
    st.plan = ref::PrepareOnnxAttention(ctx, attrs_);
    const ref::OnnxAttentionPlan& p = st.plan;
    st.threads = std::max(1, ctx.threads());
    const int64_t group = p.q.heads / p.k.heads, sq = p.q.seq;
    const bool one_matrix = sq == 1 || (p.q.sh == sq * p.q.ss && p.y.sh == sq * p.y.ss);
    st.unit_heads = group > 1 && one_matrix ? group : 1;
    st.q_row = st.unit_heads > 1 && sq == 1 ? p.q.sh : p.q.ss;
    st.y_row = st.unit_heads > 1 && sq == 1 ? p.y.sh : p.y.ss;
    st.units = p.q.batch * p.q.heads / st.unit_heads;
    if (st.units > 0 && sq > 0) SplitTasks(st);
  }

  void Compute(KernelContext& ctx) const override {
    if (ctx.required_input(0).dtype() == DataType::kFloat16) {
      Run<Float16>(ctx);
    } else {
      Run<float>(ctx);
    }
  }

 private:
  template <typename T>
  void Run(KernelContext& ctx) const {
    constexpr bool kF32 = std::is_same_v<T, float>;
    const OnnxAttentionState& st = ctx.state<OnnxAttentionState>();
    const ref::OnnxAttentionPlan& p = st.plan;
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past_k = ctx.input(4);
    const Tensor* past_v = ctx.input(5);
    const Tensor* nonpad = ctx.input(6);
    const int threads = st.threads;
    const int64_t B = p.q.batch, Hq = p.q.heads, Sq = p.q.seq, D = p.q.dim, Hkv = p.k.heads, Dv = p.v.dim;
    const int64_t S = p.total;
    Tensor& y = ctx.OutputUninitialized(0);
    Tensor* present_k = ctx.output_requested(1) ? &ctx.OutputUninitialized(1) : nullptr;
    Tensor* present_v = ctx.output_requested(2) ? &ctx.OutputUninitialized(2) : nullptr;
    Tensor* qk_out = ctx.output_requested(3) ? &ctx.OutputUninitialized(3) : nullptr;

    // K and V as float32 rows: in place (float32, no past), else gathered (into present when it is float32).
    std::vector<float> k_all, v_all;
    auto kv_rows = [&](const Tensor& cur, const ref::AttentionHeadView& cv, const Tensor* past, int64_t dim,
                       Tensor* present, std::vector<float>& scratch) {
      float* dst = nullptr;
      if constexpr (kF32) {
        if (!past) {
          if (present) GatherKv<T>(nullptr, cur.data<T>(), cv, 0, dim, present->data<T>(), nullptr, threads);
          return Rows{cur.data<T>(), cv.sb, cv.sh, cv.ss};
        }
        if (present) dst = present->data<T>();
      }
      if (!dst) {
        scratch.resize(static_cast<size_t>(B * cv.heads * S * dim));
        dst = scratch.data();
      }
      const T* pp = past ? past->data<T>() : nullptr;
      GatherKv(pp, cur.data<T>(), cv, p.spast, dim, dst, present ? present->data<T>() : nullptr, threads);
      return Rows{dst, cv.heads * S * dim, S * dim, dim};
    };
    const Rows kr = kv_rows(k, p.k, past_k, D, present_k, k_all);
    const Rows vr = kv_rows(v, p.v, past_v, Dv, present_v, v_all);
    if (st.units == 0 || Sq == 0) return;

    // Q, Y and qk_matmul_output as float32: the tensors themselves, or float copies (float16) in their layouts.
    std::vector<float> q_f, y_f, qk_f;
    const float* qp;
    float* yp;
    float* qkp = nullptr;
    if constexpr (kF32) {
      qp = q.data<float>();
      yp = y.data<float>();
      if (qk_out) qkp = qk_out->data<float>();
    } else {
      q_f.resize(static_cast<size_t>(q.size()));
      std::transform(q.data<T>(), q.data<T>() + q.size(), q_f.begin(), ToFloat<T>);
      y_f.resize(static_cast<size_t>(y.size()));
      if (qk_out) qk_f.resize(static_cast<size_t>(qk_out->size()));
      qp = q_f.data(), yp = y_f.data(), qkp = qk_out ? qk_f.data() : nullptr;
    }
    std::vector<float> mask_f;
    const float* mp = nullptr;
    if (mask && mask->dtype() == DataType::kFloat) {
      mp = mask->data<float>();
    } else if (mask) {
      mask_f = ref::AttentionMaskBias(*mask, ctx);
      mp = mask_f.data();
    }
    const std::vector<int64_t> valid_len = nonpad ? ref::ReadInt64s(*nonpad, ctx.Describe()) : std::vector<int64_t>();

    const float scale = attrs_.has_scale ? attrs_.scale : 1.0f / std::sqrt(static_cast<float>(D));
    const bool fold = std::isfinite(scale) && scale != 0.0f;
    const int64_t group = Hq / Hkv, hu = st.unit_heads, units_per_batch = Hq / hu, rows = st.rows;
    RunAttentionTasks(ctx, threads, st.units * st.blocks, rows * S, [&](int64_t t, float* s) {
      const int64_t unit = t / st.blocks, r0 = (t % st.blocks) * rows;
      const int64_t m = std::min(rows, hu * Sq - r0);
      const int64_t b = unit / units_per_batch, h0 = (unit % units_per_batch) * hu, hk = h0 / group;
      const float* qrow = qp + p.q.At(b, h0, 0) + r0 * st.q_row;
      float* yrow = yp + p.y.At(b, h0, 0) + r0 * st.y_row;
      dnnl_status_t rc = dnnl_success;
      if (S > 0 && D > 0) {
        rc = dnnl_sgemm('N', 'T', m, S, D, fold ? scale : 1.0f, qrow, st.q_row, kr.At(b, hk), kr.ss, 0.0f, s, S);
      } else {
        std::fill(s, s + m * S, 0.0f);
      }
      const int64_t offset = ref::AttentionCausalOffset(p, past_k != nullptr, valid_len, b);
      int64_t key_limit = mask ? p.mlen : S;
      if (nonpad) key_limit = std::clamp<int64_t>(valid_len[static_cast<size_t>(b)], 0, key_limit);
      for (int64_t r = 0; r < m && S > 0; ++r) {
        const int64_t h = h0 + (r0 + r) / Sq, i = (r0 + r) % Sq;
        OnnxAttentionRow a{.scale_here = !fold, .scale = scale, .softcap = attrs_.softcap, .mode = attrs_.mode};
        a.limit = attrs_.causal ? std::clamp<int64_t>(i + offset + 1, 0, key_limit) : key_limit;
        if (mp) a.mask = mp + b * p.mb + h * p.mh + i * p.mq;
        a.all_masked = a.limit == 0 || (a.mask && std::none_of(a.mask, a.mask + a.limit, [](float x) {
                                          return x > -std::numeric_limits<float>::infinity();
                                        }));
        if (qkp) a.qk = qkp + ((b * Hq + h) * Sq + i) * S;
        row_(s + r * S, S, a);
      }
      if (Dv > 0 && S > 0 && rc == dnnl_success) {
        rc = dnnl_sgemm('N', 'N', m, Dv, S, 1.0f, s, S, vr.At(b, hk), vr.ss, 0.0f, yrow, st.y_row);
      } else if (Dv > 0) {  // no keys: P V sums nothing
        for (int64_t r = 0; r < m; ++r) std::fill(yrow + r * st.y_row, yrow + r * st.y_row + Dv, 0.0f);
      }
      return rc;
    });
    if constexpr (!kF32) {
      std::transform(y_f.begin(), y_f.end(), y.data<T>(), [](float x) { return T(x); });
      if (qk_out) std::transform(qk_f.begin(), qk_f.end(), qk_out->data<T>(), [](float x) { return T(x); });
    }
  }

  ref::OnnxAttentionAttrs attrs_;
  RowFn row_;
};

}  // namespace

void RegisterOnnxAttentionKernels(KernelRegistry& r) {
  const std::vector<DataType> types = {DataType::kFloat, DataType::kFloat16};
  const std::vector<DataType> mask =
      dtypes::Concat(dtypes::Concat({DataType::kBool}, dtypes::Floats()), dtypes::Ints());
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
           .since = 23,
           .types = {{"T1", types}, {"T2", types}, {"U", mask}},
           .create = [row](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<OnnxAttention>(node, row);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_onnx_attention__") + v.impl + ".23",
           .library = "oneDNN"});
  }
}

}  // namespace ferry::cpu
