// com.microsoft Attention and MultiHeadAttention (ONNX Runtime's contrib ops, as its CPU kernels compute them:
// onnxruntime/contrib_ops/cpu/bert/attention.cc, multihead_attention.cc, attention_cpu_base.h, attention_base.cc,
// multihead_attention_helper.h).
//
// Attention(input [B, S, Din], weights [Din, Dq + Dk + Dv], bias?, mask_index?, past?, attention_bias?) ->
// (output [B, S, Dv], present?): the projection bias + input · weights gives Q, K, V (Dq = Dk; the sizes are
// qkv_hidden_sizes, else three equal thirds of weights' second dim), each split into num_heads = N heads (H = Dq / N,
// Hv = Dv / N). past [2, B, N, P, H] is put before the new keys and values (T = P + S), present [2, B, N, T, H] is
// the result (it needs Dk = Dv).
// MultiHeadAttention(query [B, S, D], key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?,
// past_value?) -> (output [B, S, Dv], present_key?, present_value?, qk?): key [B, L, D] and value [B, L, Dv] plus
// the bias's parts (bias [D + D + Dv] adds to query, key and value), or key and value [B, N, L, H] used as they are
// (no bias); past_key / past_value [B, N, P, H] come first (T = P + L); present_key / present_value are the joined
// [B, N, T, H] keys and values; qk [B, N, S, T] is the scores before the softmax.
//
// Per (batch b, head n): scores = scale · Q Kᵀ + (attention_bias + mask), scale = the attribute, or 1 / sqrt(H) when
// it is absent or 0; P = softmax over the T keys; output[b, i, n Hv + d] = (P V)[i, d]. attention_bias is [B or 1,
// N or 1, S, T]. The mask (int32; ONNX Runtime's PrepareMask): [B] key lengths (keys j >= mask[b] masked; [3B + 2]
// reads its first B values so), Attention's [2B] end positions then start positions (j >= end or j < start masked),
// [B, T] or [B, S, T] with 0 for masked; a masked key adds mask_filter_value (default -10000) rather than -inf, so a
// row masked everywhere is the softmax of its scores. A [B, 1] or [1, 1] Attention mask is no mask. unidirectional
// = 1 with S > 1 hides key j from query row i < S - 1 when j > P + i (float's lowest value in place of the mask's;
// ONNX Runtime's loop leaves the last row alone, which sees every key when cross-attention has L > S). A
// negative end position is an error (as ONNX Runtime's). float, float16 and bfloat16, computed in float with Q, K and
// V rounded to the type as ONNX Runtime stores them.
//
// Refused as ONNX Runtime's CPU kernels refuse them: a 4-D (Megatron) mask, do_rotary, past_present_share_buffer and
// past_sequence_length, MultiHeadAttention's packed QKV [B, S, N, 3, H] and packed KV [B, L, N, 2, H], a past with
// [B, N, L, H] key and value, and cache_indirection. A missing Attention bias (ONNX Runtime's CPU kernel needs one)
// is zero.
#include "kernels/ref/ort_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ir/value_query.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/gemm.h"
#include "kernels/registry.h"
#include "kernels/static_shape.h"

namespace ferry::ref {

OrtAttentionAttrs::OrtAttentionAttrs(const ir::Node& node, bool m)
    : mha(m),
      num_heads(node.GetInt("num_heads", 0)),
      unidirectional(node.GetInt("unidirectional", 0) == 1),
      mask_filter_value(node.GetFloat("mask_filter_value", -10000.0f)),
      scale(node.GetFloat("scale", 0.0f)) {
  if (num_heads <= 0) {
    throw InvalidModelError(node.Describe() + ": attribute num_heads = " + std::to_string(num_heads) +
                            ", expected > 0");
  }
  if (mha) return;
  qkv_hidden_sizes = node.GetInts("qkv_hidden_sizes");
  if (qkv_hidden_sizes.empty()) return;
  if (qkv_hidden_sizes.size() != 3) {
    throw InvalidModelError(node.Describe() + ": attribute qkv_hidden_sizes has " +
                            std::to_string(qkv_hidden_sizes.size()) + " values, expected 3");
  }
  for (int64_t h : qkv_hidden_sizes) {
    if (h <= 0 || h % num_heads != 0) {
      throw InvalidModelError(node.Describe() + ": attribute qkv_hidden_sizes value " + std::to_string(h) +
                              " is not a positive multiple of num_heads = " + std::to_string(num_heads));
    }
  }
  if (qkv_hidden_sizes[0] != qkv_hidden_sizes[1]) {
    throw InvalidModelError(node.Describe() + ": attribute qkv_hidden_sizes: Q's size " +
                            std::to_string(qkv_hidden_sizes[0]) + " differs from K's " +
                            std::to_string(qkv_hidden_sizes[1]));
  }
}

namespace {

std::string Dims(const Shape& s) { return ShapeToString(s); }

// The input's spec when present and a tensor of the plan's dtype (nullptr when absent).
const InputSpec* TypedInput(PrepareContext& ctx, int i, DataType dtype) {
  if (!ctx.has_input(i)) return nullptr;
  const InputSpec& s = ctx.tensor_input(i);
  if (s.dtype != dtype) {
    throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + " has type " +
                               std::string(DataTypeName(s.dtype)) + ", expected " + std::string(DataTypeName(dtype)) +
                               " (input 0's)");
  }
  return &s;
}

// The mask (int32) and its form against B, S and T; `attention`: Attention's mask_index (else MHA's
// key_padding_mask).
void PlanMask(PrepareContext& ctx, int i, bool attention, OrtAttentionPlan& p) {
  if (!ctx.has_input(i)) return;
  const InputSpec& m = ctx.tensor_input(i);
  const std::string what = ctx.Describe() + ": " + ctx.InputString(i);
  if (m.dtype != DataType::kInt32) {
    throw InvalidArgumentError(what + " has type " + std::string(DataTypeName(m.dtype)) + ", expected int32");
  }
  const Shape& d = m.shape;
  const std::string expected = " (B = " + std::to_string(p.B) + ", S = " + std::to_string(p.S) +
                               ", T = " + std::to_string(p.T) + ")";
  p.mask_input = i;
  if (d.size() == 1 && d[0] == p.B) {
    p.mask = OrtMaskKind::kKeyLengths;
  } else if (d.size() == 1 && d[0] == 3 * p.B + 2) {
    p.mask = OrtMaskKind::kKeyLengths;
  } else if (d.size() == 1 && attention && d[0] == 2 * p.B) {
    p.mask = OrtMaskKind::kEndStart;
  } else if (d.size() == 2 && d[0] == p.B && d[1] == p.T) {
    p.mask = OrtMaskKind::kKeyPadding;
  } else if (d.size() == 2 && attention && (d[0] == p.B || d[0] == 1) && d[1] == 1) {
    p.mask = OrtMaskKind::kNone;  // a dummy mask: the same value for every key
    p.mask_input = -1;
  } else if (d.size() == 3 && d[0] == p.B && d[1] == p.S && d[2] == p.T) {
    p.mask = OrtMaskKind::kAttention;
  } else if (d.size() == 4 && attention) {
    throw UnsupportedError(what + ": a 4-D (Megatron) mask " + Dims(d) +
                           " is not implemented (ONNX Runtime's CPU kernel refuses it too)");
  } else {
    throw InvalidArgumentError(what + " has shape " + Dims(d) + ", expected [B]" +
                               std::string(attention ? ", [2B]" : "") + ", [3B + 2], [B, T] or [B, S, T]" + expected);
  }
}

void PlanAttentionBias(PrepareContext& ctx, int i, OrtAttentionPlan& p) {
  const InputSpec* ab = TypedInput(ctx, i, p.dtype);
  if (!ab) return;
  const Shape& d = ab->shape;
  if (d.size() != 4 || (d[0] != p.B && d[0] != 1) || (d[1] != p.N && d[1] != 1) || d[2] != p.S || d[3] != p.T) {
    throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(i) + " has shape " + Dims(d) +
                               ", expected [B or 1, N or 1, S, T] = [" + std::to_string(p.B) + " or 1, " +
                               std::to_string(p.N) + " or 1, " + std::to_string(p.S) + ", " + std::to_string(p.T) +
                               "]");
  }
  p.has_attention_bias = true;
  p.ab_sn = d[1] == 1 ? 0 : p.S * p.T;
  p.ab_sb = d[0] == 1 ? 0 : d[1] * p.S * p.T;
}

void Finish(PrepareContext& ctx, const OrtAttentionAttrs& a, OrtAttentionPlan& p) {
  p.scale = a.scale == 0.0f ? 1.0f / std::sqrt(static_cast<float>(p.H)) : a.scale;
  p.causal = a.unidirectional && p.S > 1;
  ctx.SetOutput(0, p.dtype, {p.B, p.S, p.N * p.Hv});
}

}  // namespace

OrtAttentionPlan PrepareOrtAttention(PrepareContext& ctx, const OrtAttentionAttrs& a) {
  const std::string what = ctx.Describe();
  const InputSpec& x = ctx.tensor_input(0);
  OrtAttentionPlan p;
  p.dtype = x.dtype;
  p.N = a.num_heads;
  if (x.shape.size() != 3) throw InvalidArgumentError(what + ": input " + Dims(x.shape) + " must have rank 3");
  p.B = x.shape[0], p.S = x.shape[1], p.L = p.S, p.input_hidden = x.shape[2];
  const InputSpec& w = *TypedInput(ctx, 1, p.dtype);
  if (w.shape.size() != 2 || w.shape[0] != p.input_hidden) {
    throw InvalidArgumentError(what + ": weights " + Dims(w.shape) +
                               " must be [input_hidden_size = " + std::to_string(p.input_hidden) + ", Dq + Dk + Dv]");
  }
  const int64_t width = w.shape[1];
  int64_t dq = width / 3, dk = dq, dv = dq;
  if (!a.qkv_hidden_sizes.empty()) {
    dq = a.qkv_hidden_sizes[0], dk = a.qkv_hidden_sizes[1], dv = a.qkv_hidden_sizes[2];
    if (dq + dk + dv != width) {
      throw InvalidArgumentError(what + ": weights " + Dims(w.shape) + ": qkv_hidden_sizes sum to " +
                                 std::to_string(dq + dk + dv) + ", not weights' dim 1");
    }
  } else if (width % 3 != 0 || dq % p.N != 0) {
    throw InvalidArgumentError(what + ": weights " + Dims(w.shape) + ": dim 1 must be 3 x a multiple of num_heads = " +
                               std::to_string(p.N) + " without qkv_hidden_sizes");
  }
  p.H = dq / p.N, p.Hv = dv / p.N;
  if (const InputSpec* bias = TypedInput(ctx, 2, p.dtype)) {
    if (bias->shape.size() != 1 || bias->shape[0] != width) {
      throw InvalidArgumentError(what + ": bias " + Dims(bias->shape) + " must be [" + std::to_string(width) +
                                 "] (weights' dim 1)");
    }
    p.has_bias = true;
  }
  if (const InputSpec* past = TypedInput(ctx, 4, p.dtype)) {
    const Shape& d = past->shape;
    if (dk != dv) throw InvalidArgumentError(what + ": a past needs K and V of one hidden size");
    if (d.size() != 5 || d[0] != 2 || d[1] != p.B || d[2] != p.N || d[4] != p.H) {
      throw InvalidArgumentError(what + ": past " + Dims(d) + " must be [2, B, N, P, H] = [2, " + std::to_string(p.B) +
                                 ", " + std::to_string(p.N) + ", P, " + std::to_string(p.H) + "]");
    }
    p.has_past = true;
    p.P = d[3];
  }
  if (ctx.has_input(6)) {
    throw UnsupportedError(what + ": input past_sequence_length (past_present_share_buffer) is not implemented");
  }
  p.T = p.P + p.L;
  PlanMask(ctx, 3, true, p);
  PlanAttentionBias(ctx, 5, p);
  Finish(ctx, a, p);
  if (ctx.output_requested(1)) {
    if (dk != dv) throw InvalidArgumentError(what + ": output present needs K and V of one hidden size");
    ctx.SetOutput(1, p.dtype, {2, p.B, p.N, p.T, p.H});
  }
  return p;
}

OrtAttentionPlan PrepareOrtMultiHeadAttention(PrepareContext& ctx, const OrtAttentionAttrs& a) {
  const std::string what = ctx.Describe();
  const InputSpec& q = ctx.tensor_input(0);
  OrtAttentionPlan p;
  p.dtype = q.dtype;
  p.N = a.num_heads;
  if (q.shape.size() == 5) {
    throw UnsupportedError(what + ": packed QKV query " + Dims(q.shape) +
                           " is not implemented (ONNX Runtime's CPU kernel refuses it too)");
  }
  if (q.shape.size() != 3) throw InvalidArgumentError(what + ": query " + Dims(q.shape) + " must have rank 3");
  p.B = q.shape[0], p.S = q.shape[1];
  const int64_t D = q.shape[2];
  if (D % p.N != 0) {
    throw InvalidArgumentError(what + ": query's hidden size " + std::to_string(D) +
                               " is not a multiple of num_heads = " + std::to_string(p.N));
  }
  p.H = D / p.N;
  const InputSpec* k = TypedInput(ctx, 1, p.dtype);
  const InputSpec* v = TypedInput(ctx, 2, p.dtype);
  if (!k) throw InvalidArgumentError(what + ": key is absent (packed QKV [B, S, 3D] is not MultiHeadAttention's)");
  if (!v) {
    if (k->shape.size() == 5) {
      throw UnsupportedError(what + ": packed KV key " + Dims(k->shape) +
                             " is not implemented (ONNX Runtime's CPU kernel refuses it too)");
    }
    throw InvalidArgumentError(what + ": value is absent and key " + Dims(k->shape) + " is not packed KV");
  }
  const Shape& kd = k->shape;
  const Shape& vd = v->shape;
  if (kd.size() == 3 && vd.size() == 3) {
    if (kd[0] != p.B || kd[2] != D || vd[0] != p.B || vd[1] != kd[1] || vd[2] % p.N != 0) {
      throw InvalidArgumentError(what + ": key " + Dims(kd) + " and value " + Dims(vd) +
                                 " must be [B, L, D] and [B, L, Dv] (B = " + std::to_string(p.B) +
                                 ", D = " + std::to_string(D) + ", Dv a multiple of num_heads)");
    }
    p.L = kd[1], p.Hv = vd[2] / p.N;
  } else if (kd.size() == 4 && vd == kd) {
    if (kd[0] != p.B || kd[1] != p.N || kd[3] != p.H) {
      throw InvalidArgumentError(what + ": key and value " + Dims(kd) + " must be [B, N, L, H] = [" +
                                 std::to_string(p.B) + ", " + std::to_string(p.N) + ", L, " + std::to_string(p.H) +
                                 "]");
    }
    p.kv_bnsh = true;
    p.L = kd[2], p.Hv = p.H;
  } else {
    throw InvalidArgumentError(what + ": key " + Dims(kd) + " and value " + Dims(vd) +
                               " must both be 3-D [B, L, D], [B, L, Dv] or both [B, N, L, H]");
  }
  if (const InputSpec* bias = TypedInput(ctx, 3, p.dtype)) {
    const int64_t want = 2 * D + p.N * p.Hv;
    if (bias->shape.size() != 1 || bias->shape[0] != want) {
      throw InvalidArgumentError(what + ": bias " + Dims(bias->shape) + " must be [D + D + Dv] = [" +
                                 std::to_string(want) + "]");
    }
    p.has_bias = true;
  }
  const InputSpec* pk = TypedInput(ctx, 6, p.dtype);
  const InputSpec* pv = TypedInput(ctx, 7, p.dtype);
  if ((pk == nullptr) != (pv == nullptr)) {
    throw InvalidArgumentError(what + ": past_key and past_value must be both present or both absent");
  }
  if (pk) {
    if (p.kv_bnsh) {
      throw UnsupportedError(what + ": a past with [B, N, L, H] key and value is not implemented");
    }
    const Shape& a4 = pk->shape;
    const Shape& b4 = pv->shape;
    if (a4.size() != 4 || a4[0] != p.B || a4[1] != p.N || a4[3] != p.H || b4.size() != 4 || b4[0] != p.B ||
        b4[1] != p.N || b4[2] != a4[2] || b4[3] != p.Hv) {
      throw InvalidArgumentError(what + ": past_key " + Dims(a4) + " and past_value " + Dims(b4) +
                                 " must be [B, N, P, H] and [B, N, P, Hv] = [" + std::to_string(p.B) + ", " +
                                 std::to_string(p.N) + ", P, " + std::to_string(p.H) + " / " + std::to_string(p.Hv) +
                                 "]");
    }
    p.has_past = true;
    p.P = a4[2];
  }
  for (int i : {8, 9}) {
    if (ctx.has_input(i)) throw UnsupportedError(what + ": " + ctx.InputString(i) + " is not implemented");
  }
  p.T = p.P + p.L;
  PlanMask(ctx, 4, false, p);
  PlanAttentionBias(ctx, 5, p);
  Finish(ctx, a, p);
  if (ctx.output_requested(1)) ctx.SetOutput(1, p.dtype, {p.B, p.N, p.T, p.H});
  if (ctx.output_requested(2)) ctx.SetOutput(2, p.dtype, {p.B, p.N, p.T, p.Hv});
  if (ctx.output_requested(3)) {
    const DataType t = ir::DeclaredElementType(ctx.node().output(3));
    p.qk_dtype = t == DataType::kUndefined ? p.dtype : t;
    if (p.qk_dtype != DataType::kFloat && p.qk_dtype != DataType::kFloat16 && p.qk_dtype != DataType::kBFloat16) {
      throw InvalidArgumentError(what + ": output qk has type " + std::string(DataTypeName(p.qk_dtype)) +
                                 ", expected a float type");
    }
    ctx.SetOutput(3, p.qk_dtype, {p.B, p.N, p.S, p.T});
  }
  return p;
}

std::vector<float> OrtAttentionMaskRows(const OrtAttentionPlan& p, const Tensor* mask, float filter, bool with_causal,
                                        const std::string& what) {
  const bool causal = with_causal && p.causal;
  if ((!mask || p.mask == OrtMaskKind::kNone) && !causal) return {};
  const int64_t R = causal || p.mask == OrtMaskKind::kAttention ? p.S : 1, T = p.T;
  std::vector<float> rows(static_cast<size_t>(p.B * R * T), 0.0f);
  const int32_t* m = mask && p.mask != OrtMaskKind::kNone ? mask->data<int32_t>() : nullptr;
  for (int64_t b = 0; b < p.B && m; ++b) {
    float* r = rows.data() + b * R * T;
    switch (p.mask) {
      case OrtMaskKind::kKeyLengths:
      case OrtMaskKind::kEndStart: {
        const int64_t end = m[b];
        if (end < 0) {
          throw InvalidArgumentError(what + ": mask value " + std::to_string(end) + " at index " + std::to_string(b) +
                                     " is negative; key lengths (end positions) must be >= 0");
        }
        for (int64_t j = std::min(end, T); j < T; ++j) r[j] = filter;
        if (p.mask == OrtMaskKind::kEndStart) {
          const int64_t start = std::min<int64_t>(m[p.B + b], T);
          for (int64_t j = 0; j < start; ++j) r[j] = filter;
        }
        break;
      }
      case OrtMaskKind::kKeyPadding:
        for (int64_t j = 0; j < T; ++j) r[j] = m[b * T + j] > 0 ? 0.0f : filter;
        break;
      case OrtMaskKind::kAttention:
        for (int64_t j = 0; j < p.S * T; ++j) r[j] = m[b * p.S * T + j] > 0 ? 0.0f : filter;
        break;
      case OrtMaskKind::kNone: break;
    }
    if (R > 1 && p.mask != OrtMaskKind::kAttention) {  // one row for every query row
      for (int64_t i = 1; i < R; ++i) std::copy(r, r + T, r + i * T);
    }
  }
  if (causal) {
    for (int64_t b = 0; b < p.B; ++b) {
      for (int64_t i = 0; i + 1 < p.S; ++i) {  // ONNX Runtime's loop leaves the last query row unmasked
        float* r = rows.data() + (b * R + i) * T;
        for (int64_t j = std::max<int64_t>(p.P + i + 1, 0); j < T; ++j) r[j] = std::numeric_limits<float>::lowest();
      }
    }
  }
  return rows;
}

std::string OrtAttentionShapePredicate(const ir::Node& node) {
  const bool attention = node.op_type() == "Attention";
  auto rank = [&](size_t i) -> int64_t {
    if (i >= node.num_inputs() || !node.input(i)) return -1;
    const std::optional<Shape> s = StaticShape(node, i);
    return s ? static_cast<int64_t>(s->size()) : ir::RankOrMinusOne(node.input(i));
  };
  if (attention && rank(3) == 4) return "Attention: a 4-D (Megatron) mask_index is not implemented";
  if (!attention && rank(0) == 5) return "MultiHeadAttention: packed QKV (a 5-D query) is not implemented";
  if (!attention && rank(1) == 5) return "MultiHeadAttention: packed KV (a 5-D key) is not implemented";
  return "";
}

namespace {

template <typename T>
std::vector<float> ToFloats(const Tensor& t) {
  const T* p = t.data<T>();
  std::vector<float> out(static_cast<size_t>(t.size()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
  return out;
}

// x rounded to T as ONNX Runtime stores an intermediate (float stays as it is).
template <typename T>
float Round(float x) {
  if constexpr (kIsHalf<T>) {
    return static_cast<float>(T(x));
  } else {
    return x;
  }
}

template <typename T>
void Store(const float* src, Tensor& dst) {
  T* d = dst.data<T>();
  for (int64_t i = 0; i < dst.size(); ++i) d[i] = T(src[i]);
}

// [B, N, T, dim] of the past's rows [B, N, P, dim] (float; `past` may be null when P = 0) then `cur`'s [B, N, L, dim].
std::vector<float> JoinPast(const OrtAttentionPlan& p, const float* past, const std::vector<float>& cur, int64_t dim) {
  std::vector<float> out(static_cast<size_t>(p.B * p.N * p.T * dim));
  for (int64_t bn = 0; bn < p.B * p.N; ++bn) {
    float* o = out.data() + bn * p.T * dim;
    if (p.P > 0) std::copy(past + bn * p.P * dim, past + (bn + 1) * p.P * dim, o);
    std::copy(cur.begin() + bn * p.L * dim, cur.begin() + (bn + 1) * p.L * dim, o + p.P * dim);
  }
  return out;
}

// Per (b, n): scores = scale Q Kᵀ + (attention_bias + mask), copied to qk when given, softmax, then P V into y
// [B, S, N Hv]. q [B, N, S, H], k [B, N, T, H], v [B, N, T, Hv]; ab [B or 1, N or 1, S, T] (strides in the plan);
// mask rows from OrtAttentionMaskRows (with the causal rows).
void AttentionCore(const OrtAttentionPlan& p, const float* q, const float* k, const float* v, const float* ab,
                   const std::vector<float>& mask, float* y, float* qk, int threads) {
  const int64_t S = p.S, T = p.T, H = p.H, Hv = p.Hv, Dv = p.N * p.Hv;
  const int64_t R = mask.empty() ? 0 : static_cast<int64_t>(mask.size()) / (p.B * T);
  ParallelFor(threads, p.B * p.N, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(S * T));
    float* s = scores.data();
    for (int64_t bn = begin; bn < end; ++bn) {
      const int64_t b = bn / p.N, n = bn % p.N;
      float* yb = y + b * S * Dv + n * Hv;
      if (T == 0) {
        for (int64_t i = 0; i < S; ++i) std::fill(yb + i * Dv, yb + i * Dv + Hv, 0.0f);
        continue;
      }
      GemmF32(false, true, S, T, H, p.scale, q + bn * S * H, H, k + bn * T * H, H, 0.0f, s, T, 1);
      for (int64_t i = 0; i < S; ++i) {
        float* row = s + i * T;
        const float* a = ab ? ab + b * p.ab_sb + n * p.ab_sn + i * T : nullptr;
        const float* m = R ? mask.data() + (b * R + (R == 1 ? 0 : i)) * T : nullptr;
        if (a || m) {
          for (int64_t j = 0; j < T; ++j) row[j] += (a ? a[j] : 0.0f) + (m ? m[j] : 0.0f);
        }
        if (qk) std::copy(row, row + T, qk + (bn * S + i) * T);
        float mx = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < T; ++j) mx = std::max(mx, row[j]);
        float sum = 0.0f;
        for (int64_t j = 0; j < T; ++j) sum += (row[j] = std::exp(row[j] - mx));
        for (int64_t j = 0; j < T; ++j) row[j] /= sum;
      }
      GemmF32(false, false, S, Hv, T, 1.0f, s, T, v + bn * T * Hv, Hv, 0.0f, yb, Dv, 1);
    }
  });
}

class OrtAttention : public OpKernel {
 public:
  explicit OrtAttention(const ir::Node& node) : attrs_(node, false) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareOrtAttention(ctx, attrs_)); }

  void Compute(KernelContext& ctx) const override {
    Dispatch(TypeList<float, Float16, BFloat16>{}, ctx.required_input(0).dtype(), ctx,
             [&](auto tag) { Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  void Run(KernelContext& ctx) const {
    const OrtAttentionPlan& p = ctx.state<OrtAttentionPlan>();
    const int64_t B = p.B, S = p.S, N = p.N, H = p.H, Hv = p.Hv, Din = p.input_hidden;
    const int64_t width = 2 * N * H + N * Hv;
    const std::vector<float> mask = OrtAttentionMaskRows(p, ctx.input(3), attrs_.mask_filter_value, true,
                                                         ctx.Describe());
    // proj [B S, width] = bias + input · weights.
    const std::vector<float> x = ToFloats<T>(ctx.required_input(0));
    const std::vector<float> w = ToFloats<T>(ctx.required_input(1));
    std::vector<float> proj(static_cast<size_t>(B * S * width), 0.0f);
    if (p.has_bias) {
      const std::vector<float> bias = ToFloats<T>(*ctx.input(2));
      for (int64_t r = 0; r < B * S; ++r) std::copy(bias.begin(), bias.end(), proj.begin() + r * width);
    }
    if (B * S > 0 && width > 0) {
      GemmF32(false, false, B * S, width, Din, 1.0f, x.data(), Din, w.data(), width, 1.0f, proj.data(), width,
              ctx.threads());
    }
    // Q [B, N, S, H], K [B, N, S, H], V [B, N, S, Hv].
    std::vector<float> q(static_cast<size_t>(B * N * S * H)), k(q.size()), v(static_cast<size_t>(B * N * S * Hv));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t s = 0; s < S; ++s) {
        const float* row = proj.data() + (b * S + s) * width;
        for (int64_t n = 0; n < N; ++n) {
          const int64_t o = ((b * N + n) * S + s);
          for (int64_t d = 0; d < H; ++d) q[o * H + d] = Round<T>(row[n * H + d]);
          for (int64_t d = 0; d < H; ++d) k[o * H + d] = Round<T>(row[N * H + n * H + d]);
          for (int64_t d = 0; d < Hv; ++d) v[o * Hv + d] = Round<T>(row[2 * N * H + n * Hv + d]);
        }
      }
    }
    std::vector<float> past;
    if (p.has_past) past = ToFloats<T>(*ctx.input(4));
    const std::vector<float> kt = JoinPast(p, past.empty() ? nullptr : past.data(), k, H);
    const std::vector<float> vt = JoinPast(p, past.empty() ? nullptr : past.data() + B * N * p.P * H, v, Hv);
    if (ctx.output_requested(1)) {
      std::vector<float> present(kt);
      present.insert(present.end(), vt.begin(), vt.end());
      Store<T>(present.data(), ctx.OutputUninitialized(1));
    }
    std::vector<float> ab;
    if (p.has_attention_bias) ab = ToFloats<T>(*ctx.input(5));
    std::vector<float> y(static_cast<size_t>(B * S * N * Hv));
    AttentionCore(p, q.data(), kt.data(), vt.data(), ab.empty() ? nullptr : ab.data(), mask, y.data(), nullptr,
                  ctx.threads());
    Store<T>(y.data(), ctx.OutputUninitialized(0));
  }

  OrtAttentionAttrs attrs_;
};

class OrtMultiHeadAttention : public OpKernel {
 public:
  explicit OrtMultiHeadAttention(const ir::Node& node) : attrs_(node, true) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareOrtMultiHeadAttention(ctx, attrs_)); }

  void Compute(KernelContext& ctx) const override {
    Dispatch(TypeList<float, Float16, BFloat16>{}, ctx.required_input(0).dtype(), ctx,
             [&](auto tag) { Run<decltype(tag)>(ctx); });
  }

 private:
  template <typename T>
  void Run(KernelContext& ctx) const {
    const OrtAttentionPlan& p = ctx.state<OrtAttentionPlan>();
    const int64_t B = p.B, S = p.S, L = p.L, N = p.N, H = p.H, Hv = p.Hv, D = N * H;
    const std::vector<float> mask = OrtAttentionMaskRows(p, ctx.input(4), attrs_.mask_filter_value, true,
                                                         ctx.Describe());
    std::vector<float> bias(static_cast<size_t>(2 * D + N * Hv), 0.0f);
    if (p.has_bias) bias = ToFloats<T>(*ctx.input(3));
    // [B, rows, N * dim] + bias[offset ..] -> [B, N, rows, dim], rounded to T.
    auto heads = [&](const Tensor& t, int64_t rows, int64_t dim, int64_t offset) {
      const std::vector<float> src = ToFloats<T>(t);
      std::vector<float> out(src.size());
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t s = 0; s < rows; ++s) {
          for (int64_t n = 0; n < N; ++n) {
            for (int64_t d = 0; d < dim; ++d) {
              out[((b * N + n) * rows + s) * dim + d] = Round<T>(src[(b * rows + s) * N * dim + n * dim + d] +
                                                                 bias[offset + n * dim + d]);
            }
          }
        }
      }
      return out;
    };
    const std::vector<float> q = heads(ctx.required_input(0), S, H, 0);
    const std::vector<float> k = p.kv_bnsh ? ToFloats<T>(ctx.required_input(1)) : heads(ctx.required_input(1), L, H, D);
    const std::vector<float> v = p.kv_bnsh ? ToFloats<T>(ctx.required_input(2))
                                           : heads(ctx.required_input(2), L, Hv, 2 * D);
    std::vector<float> pk, pv;
    if (p.has_past) pk = ToFloats<T>(*ctx.input(6)), pv = ToFloats<T>(*ctx.input(7));
    const std::vector<float> kt = JoinPast(p, pk.empty() ? nullptr : pk.data(), k, H);
    const std::vector<float> vt = JoinPast(p, pv.empty() ? nullptr : pv.data(), v, Hv);
    if (ctx.output_requested(1)) Store<T>(kt.data(), ctx.OutputUninitialized(1));
    if (ctx.output_requested(2)) Store<T>(vt.data(), ctx.OutputUninitialized(2));
    std::vector<float> ab;
    if (p.has_attention_bias) ab = ToFloats<T>(*ctx.input(5));
    std::vector<float> qk;
    if (ctx.output_requested(3)) qk.resize(static_cast<size_t>(B * N * S * p.T));
    std::vector<float> y(static_cast<size_t>(B * S * N * Hv));
    AttentionCore(p, q.data(), kt.data(), vt.data(), ab.empty() ? nullptr : ab.data(), mask, y.data(),
                  qk.empty() ? nullptr : qk.data(), ctx.threads());
    Store<T>(y.data(), ctx.OutputUninitialized(0));
    if (ctx.output_requested(3)) {
      Tensor& out = ctx.OutputUninitialized(3);
      Dispatch(TypeList<float, Float16, BFloat16>{}, out.dtype(), ctx,
               [&](auto tag) { Store<decltype(tag)>(qk.data(), out); });
    }
  }

  OrtAttentionAttrs attrs_;
};

std::string AttentionPredicate(const ir::Node& n) {
  if (n.GetInt("do_rotary", 0) != 0) return "Attention: do_rotary = 1 is not implemented";
  if (n.GetInt("past_present_share_buffer", 0) != 0)
    return "Attention: past_present_share_buffer = 1 is not implemented";
  return "";
}

std::string MhaPredicate(const ir::Node& n) {
  for (size_t i : {8, 9}) {
    if (i < n.num_inputs() && n.input(i)) {
      return std::string("MultiHeadAttention: input ") + (i == 8 ? "past_sequence_length" : "cache_indirection") +
             " is not implemented";
    }
  }
  return "";
}

}  // namespace

void RegisterOrtAttentionKernels(KernelRegistry& r) {
  const std::vector<DataType> floats = {DataType::kFloat, DataType::kFloat16, DataType::kBFloat16};
  r.Add({.op = "Attention",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", floats}, {"M", {DataType::kInt32}}},
         .create = MakeKernel<OrtAttention>,
         .predicate = AttentionPredicate,
         .shape_predicate = OrtAttentionShapePredicate,
         .constraints = "do_rotary, past_present_share_buffer and a 4-D mask_index not implemented"});
  r.Add({.op = "MultiHeadAttention",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", floats}, {"QK", floats}, {"M", {DataType::kInt32}}},
         .create = MakeKernel<OrtMultiHeadAttention>,
         .predicate = MhaPredicate,
         .shape_predicate = OrtAttentionShapePredicate,
         .constraints = "packed QKV / KV, past_sequence_length and cache_indirection not implemented"});
}

}  // namespace ferry::ref
