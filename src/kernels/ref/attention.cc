// Attention (opsets 23, 24): scaled dot-product attention with the ONNX function body's semantics.
//   Q [B, Hq, Sq, D] or [B, Sq, Hq*D] (3-D needs q_num_heads / kv_num_heads), K [B, Hkv, Skv, D], V [B, Hkv, Skv, Dv]
//   (or 3-D), optional attn_mask (bool: true = attend; or additive float / integer) broadcast to [B, Hq, Sq, Stotal]
//   and padded with -inf / false when its last dim is shorter, past_key / past_value [B, Hkv, Spast, D] prepended to
//   K/V (present_key / present_value outputs), nonpad_kv_seqlen [B] (opset 24: keys at or past it are masked).
//   GQA: query head h reads kv head h / (Hq / Hkv).
// Per (batch, head, query row): s = (q . k) * scale (default 1/sqrt(D)); softcap c > 0: s = c * tanh(s / c);
// bias = mask + causal (-inf where j > i + offset; offset = Spast with a past, nonpad_kv_seqlen[b] - Sq with
// nonpad_kv_seqlen, else 0) + padding; p = softmax(s + bias), except a row whose bias is -inf everywhere gets
// p = 0; Y = p . V. qk_matmul_output: mode 0 = s before softcap, 1 = after softcap, 2 = after adding the bias,
// 3 = p. Statistics and softmax run in float (double for double inputs), whatever softmax_precision says.
// The spec describes bool and float masks only, though U allows the integer types; an integer mask is additive
// like a float one (its values converted to float), as the ONNX reference computes it (attn_bias + attn_mask).
// The attributes, Prepare's checks and geometry and the mask bias are shared with the cpu kernel (onnx_attention.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/onnx_attention.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

AttentionHeadView MakeView(const Shape& t, int64_t heads_attr, const std::string& what, const char* name) {
  AttentionHeadView v;
  if (t.size() == 4) {
    v.batch = t[0], v.heads = t[1], v.seq = t[2], v.dim = t[3];
    v.ss = v.dim, v.sh = v.seq * v.dim, v.sb = v.heads * v.sh;
  } else if (t.size() == 3) {
    if (heads_attr <= 0 || t[2] % heads_attr != 0) {
      throw InvalidArgumentError(what + ": 3-D input '" + name + "' of shape " + ShapeToString(t) +
                                 " needs a positive head count dividing its last dim (q_num_heads/kv_num_heads = " +
                                 std::to_string(heads_attr) + ")");
    }
    v.batch = t[0], v.seq = t[1], v.heads = heads_attr, v.dim = t[2] / heads_attr;
    v.sh = v.dim, v.ss = t[2], v.sb = v.seq * v.ss;
  } else {
    throw InvalidArgumentError(what + ": input '" + name + "' must be 3-D or 4-D, got " + ShapeToString(t));
  }
  return v;
}

}  // namespace

OnnxAttentionAttrs::OnnxAttentionAttrs(const ir::Node& node)
    : causal(node.GetInt("is_causal", 0) != 0),
      q_heads(node.GetInt("q_num_heads", 0)),
      kv_heads(node.GetInt("kv_num_heads", 0)),
      mode(node.GetInt("qk_matmul_output_mode", 0)),
      has_scale(node.has_attr("scale")),
      scale(node.GetFloat("scale", 1.0f)),
      softcap(node.GetFloat("softcap", 0.0f)) {
  if (mode < 0 || mode > 3) {
    throw InvalidModelError(node.Describe() + ": qk_matmul_output_mode must be 0..3, got " + std::to_string(mode));
  }
}

OnnxAttentionPlan PrepareOnnxAttention(PrepareContext& ctx, const OnnxAttentionAttrs& a) {
  const std::string what = ctx.Describe();
  const InputSpec& q = ctx.tensor_input(0);
  const InputSpec& k = ctx.tensor_input(1);
  const InputSpec& v = ctx.tensor_input(2);
  const InputSpec& mask = ctx.input(3);
  const InputSpec& past_k = ctx.input(4);
  const InputSpec& past_v = ctx.input(5);
  const InputSpec& nonpad = ctx.input(6);
  for (int i = 3; i <= 6; ++i) {
    if (ctx.has_input(i)) ctx.tensor_input(i);
  }
  if (q.shape.size() != k.shape.size() || q.shape.size() != v.shape.size()) {
    throw InvalidArgumentError(what + ": Q, K and V must have the same rank, got " + ShapeToString(q.shape) + ", " +
                               ShapeToString(k.shape) + ", " + ShapeToString(v.shape));
  }
  if (k.dtype != q.dtype || v.dtype != q.dtype) {
    throw UnsupportedError(what + ": Q, K and V of different element types are not supported (" +
                           ctx.InputString(0) + ", " + ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
  }
  OnnxAttentionPlan p;
  p.q = MakeView(q.shape, a.q_heads, what, "Q");
  p.k = MakeView(k.shape, a.kv_heads, what, "K");
  p.v = MakeView(v.shape, a.kv_heads, what, "V");
  const int64_t B = p.q.batch, Hq = p.q.heads, Sq = p.q.seq, D = p.q.dim, Hkv = p.k.heads, Dv = p.v.dim;
  if (p.k.batch != B || p.v.batch != B || p.v.heads != Hkv || p.v.seq != p.k.seq || p.k.dim != D) {
    throw InvalidArgumentError(what + ": inconsistent Q/K/V shapes " + ShapeToString(q.shape) + ", " +
                               ShapeToString(k.shape) + ", " + ShapeToString(v.shape));
  }
  if (Hkv <= 0 || Hq % Hkv != 0) {
    throw InvalidArgumentError(what + ": q heads (" + std::to_string(Hq) + ") must be a multiple of kv heads (" +
                               std::to_string(Hkv) + ")");
  }
  if (past_k.is_tensor() != past_v.is_tensor()) {
    throw InvalidArgumentError(what + ": past_key and past_value must be given together");
  }
  if (past_k.is_tensor()) {
    const Shape& pk = past_k.shape;
    const Shape& pv = past_v.shape;
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != B || pk[1] != Hkv || pk[3] != D || pv[0] != B ||
        pv[1] != Hkv || pv[2] != pk[2] || pv[3] != Dv || past_k.dtype != q.dtype || past_v.dtype != q.dtype) {
      throw InvalidArgumentError(what + ": past_key/past_value must be [B, kv_heads, past, head_size] of Q's type, " +
                                 "got " + ShapeToString(pk) + " and " + ShapeToString(pv));
    }
    p.spast = pk[2];
  }
  p.total = p.spast + p.k.seq;  // total key/value length
  const int64_t S = p.total;
  if (nonpad.is_tensor()) {
    if (nonpad.dtype != DataType::kInt64 && nonpad.dtype != DataType::kInt32) {
      throw InvalidArgumentError(what + " input 'nonpad_kv_seqlen': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(nonpad.dtype)));
    }
    if (ShapeElementCount(nonpad.shape) != B) {
      throw InvalidArgumentError(what + ": nonpad_kv_seqlen must have B = " + std::to_string(B) + " elements, got " +
                                 std::to_string(ShapeElementCount(nonpad.shape)));
    }
  }
  if (mask.is_tensor()) {
    const Shape& ms = mask.shape;
    if (ms.size() < 2 || ms.size() > 4) {
      throw InvalidArgumentError(what + ": attn_mask must have rank 2 to 4, got " + ShapeToString(ms));
    }
    const int64_t r = static_cast<int64_t>(ms.size());
    p.mlen = ms[static_cast<size_t>(r - 1)];
    if (p.mlen > S) {
      throw InvalidArgumentError(what + ": attn_mask's last dim " + std::to_string(p.mlen) +
                                 " exceeds the total key length " + std::to_string(S));
    }
    const int64_t want[4] = {B, Hq, Sq, p.mlen};
    const std::vector<int64_t> st = Strides(ms);
    int64_t* out_st[4] = {&p.mb, &p.mh, &p.mq, nullptr};
    for (int64_t i = 0; i < r; ++i) {
      const int64_t axis = 4 - r + i;
      const int64_t d = ms[static_cast<size_t>(i)];
      if (d != want[axis] && d != 1) {
        throw InvalidArgumentError(what + ": attn_mask of shape " + ShapeToString(ms) +
                                   " does not broadcast to [B, q_heads, q_seq, kv] = [" + std::to_string(B) + "," +
                                   std::to_string(Hq) + "," + std::to_string(Sq) + "," +
                                   std::to_string(p.mlen) + "]");
      }
      if (axis < 3) *out_st[axis] = d == 1 ? 0 : st[static_cast<size_t>(i)];
    }
  }
  const Shape y_shape = q.shape.size() == 3 ? Shape{B, Sq, Hq * Dv} : Shape{B, Hq, Sq, Dv};
  p.y = MakeView(y_shape, Hq, what, "Y");
  ctx.SetOutput(0, q.dtype, y_shape);
  if (ctx.output_requested(1)) ctx.SetOutput(1, q.dtype, {B, Hkv, S, D});
  if (ctx.output_requested(2)) ctx.SetOutput(2, q.dtype, {B, Hkv, S, Dv});
  if (ctx.output_requested(3)) ctx.SetOutput(3, q.dtype, {B, Hq, Sq, S});
  return p;
}

std::vector<float> AttentionMaskBias(const Tensor& mask, const KernelContext& ctx) {
  std::vector<float> mask_bias(static_cast<size_t>(mask.size()));
  if (mask.dtype() == DataType::kBool) {
    const bool* p = mask.data<bool>();
    for (int64_t i = 0; i < mask.size(); ++i) {
      mask_bias[static_cast<size_t>(i)] = p[i] ? 0.f : -std::numeric_limits<float>::infinity();
    }
  } else if (mask.dtype() == DataType::kFloat || mask.dtype() == DataType::kDouble ||
             mask.dtype() == DataType::kFloat16 || mask.dtype() == DataType::kBFloat16) {
    Dispatch(FloatTypes{}, mask.dtype(), ctx, [&](auto tag) {
      using M = decltype(tag);
      const M* p = mask.data<M>();
      for (int64_t i = 0; i < mask.size(); ++i) {
        mask_bias[static_cast<size_t>(i)] = static_cast<float>(static_cast<Acc<M>>(p[i]));
      }
    });
  } else {
    Dispatch(IntTypes{}, mask.dtype(), ctx, [&](auto tag) {
      using M = decltype(tag);
      const M* p = mask.data<M>();
      for (int64_t i = 0; i < mask.size(); ++i) mask_bias[static_cast<size_t>(i)] = static_cast<float>(p[i]);
    });
  }
  return mask_bias;
}

namespace {

class Attention : public OpKernel {
 public:
  explicit Attention(const ir::Node& node) : attrs_(node) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareOnnxAttention(ctx, attrs_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* past_k = ctx.input(4);
    const Tensor* past_v = ctx.input(5);
    const Tensor* nonpad = ctx.input(6);
    const OnnxAttentionPlan& plan = ctx.state<OnnxAttentionPlan>();
    const AttentionHeadView &qv = plan.q, &kv = plan.k, &vv = plan.v, &yv = plan.y;
    const int64_t B = qv.batch, Hq = qv.heads, Sq = qv.seq, D = qv.dim, Hkv = kv.heads, Dv = vv.dim;
    const int64_t Spast = plan.spast, S = plan.total;
    const int64_t mb = plan.mb, mh = plan.mh, mq = plan.mq, mlen = plan.mlen;
    const std::vector<int64_t> valid_len = nonpad ? ReadInt64s(*nonpad, {}) : std::vector<int64_t>();
    const std::vector<float> mask_bias = mask ? AttentionMaskBias(*mask, ctx) : std::vector<float>();

    Tensor& y = ctx.Output(0);
    Tensor* present_k = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    Tensor* present_v = ctx.output_requested(2) ? &ctx.Output(2) : nullptr;
    Tensor* qk_out = ctx.output_requested(3) ? &ctx.Output(3) : nullptr;

    Dispatch(FloatTypes{}, q.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      // Contiguous [B, Hkv, S, D] copies of past + new keys/values (also the present outputs).
      auto gather = [&](const Tensor& cur, const AttentionHeadView& cv, const Tensor* past, int64_t dim,
                        Tensor* present) {
        std::vector<A> all(static_cast<size_t>(B * Hkv * S * dim));
        const T* pc = cur.data<T>();
        const T* pp = past ? past->data<T>() : nullptr;
        T* pres = present ? present->data<T>() : nullptr;
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t h = 0; h < Hkv; ++h) {
            for (int64_t s = 0; s < S; ++s) {
              const T* src = s < Spast ? pp + ((b * Hkv + h) * Spast + s) * dim : pc + cv.At(b, h, s - Spast);
              const int64_t dst = ((b * Hkv + h) * S + s) * dim;
              for (int64_t d = 0; d < dim; ++d) {
                all[static_cast<size_t>(dst + d)] = static_cast<A>(static_cast<Acc<T>>(src[d]));
                if (pres) pres[dst + d] = src[d];
              }
            }
          }
        }
        return all;
      };
      const std::vector<A> kall = gather(k, kv, past_k, D, present_k);
      const std::vector<A> vall = gather(v, vv, past_v, Dv, present_v);
      const T* qp = q.data<T>();
      T* yp = y.data<T>();
      T* qkp = qk_out ? qk_out->data<T>() : nullptr;
      const A scale = attrs_.has_scale ? static_cast<A>(attrs_.scale) : A(1) / std::sqrt(static_cast<A>(D));
      const A cap = static_cast<A>(attrs_.softcap);
      const A neg_inf = -std::numeric_limits<A>::infinity();
      const int64_t group = Hq / Hkv;
      const int64_t mode = attrs_.mode;
      ParallelFor(ctx.threads(), B * Hq, 1, [&](int64_t begin, int64_t end) {
        std::vector<A> raw(static_cast<size_t>(S)), score(static_cast<size_t>(S)), bias(static_cast<size_t>(S));
        std::vector<A> qrow(static_cast<size_t>(D)), acc(static_cast<size_t>(Dv));
        for (int64_t bh = begin; bh < end; ++bh) {
          const int64_t b = bh / Hq, h = bh % Hq, hk = h / group;
          const A* kb = kall.data() + (b * Hkv + hk) * S * D;
          const A* vb = vall.data() + (b * Hkv + hk) * S * Dv;
          const int64_t offset = AttentionCausalOffset(plan, past_k != nullptr, valid_len, b);
          for (int64_t i = 0; i < Sq; ++i) {
            const T* qr = qp + qv.At(b, h, i);
            for (int64_t d = 0; d < D; ++d) qrow[static_cast<size_t>(d)] = static_cast<A>(static_cast<Acc<T>>(qr[d]));
            // Bias row: mask (padded with -inf), causal frontier, nonpad padding.
            A bias_max = neg_inf;
            for (int64_t j = 0; j < S; ++j) {
              A bj = 0;
              if (mask) {
                bj = j < mlen ? static_cast<A>(mask_bias[static_cast<size_t>(b * mb + h * mh + i * mq + j)]) : neg_inf;
              }
              if (attrs_.causal && j > i + offset) bj = neg_inf;
              if (nonpad && j >= valid_len[static_cast<size_t>(b)]) bj = neg_inf;
              bias[static_cast<size_t>(j)] = bj;
              bias_max = std::max(bias_max, bj);
            }
            A mx = neg_inf;
            for (int64_t j = 0; j < S; ++j) {
              const A* kr = kb + j * D;
              A dot = 0;
              for (int64_t d = 0; d < D; ++d) dot += qrow[static_cast<size_t>(d)] * kr[d];
              const A s0 = dot * scale;
              raw[static_cast<size_t>(j)] = s0;
              const A s1 = cap > 0 ? cap * std::tanh(s0 / cap) : s0;
              const A s2 = s1 + bias[static_cast<size_t>(j)];
              score[static_cast<size_t>(j)] = s2;
              mx = std::max(mx, s2);
              if (qkp && mode < 3) {
                qkp[((b * Hq + h) * Sq + i) * S + j] = T(static_cast<Acc<T>>(mode == 0 ? s0 : mode == 1 ? s1 : s2));
              }
            }
            const bool all_masked = bias_max == neg_inf;
            A sum = 0;
            for (int64_t j = 0; j < S; ++j) {
              const A e = all_masked ? A(0) : std::exp(score[static_cast<size_t>(j)] - mx);
              score[static_cast<size_t>(j)] = e;
              sum += e;
            }
            const A inv = all_masked || sum == 0 ? A(0) : A(1) / sum;
            std::fill(acc.begin(), acc.end(), A(0));
            for (int64_t j = 0; j < S; ++j) {
              const A p = score[static_cast<size_t>(j)] * inv;
              if (qkp && mode == 3) qkp[((b * Hq + h) * Sq + i) * S + j] = T(static_cast<Acc<T>>(p));
              const A* vr = vb + j * Dv;
              for (int64_t d = 0; d < Dv; ++d) acc[static_cast<size_t>(d)] += p * vr[d];
            }
            T* yr = yp + yv.At(b, h, i);
            for (int64_t d = 0; d < Dv; ++d) yr[d] = T(static_cast<Acc<T>>(acc[static_cast<size_t>(d)]));
          }
        }
      });
    });
  }

 private:
  OnnxAttentionAttrs attrs_;
};

}  // namespace

void RegisterAttentionKernels(KernelRegistry& r) {
  const std::vector<DataType> mask =
      dtypes::Concat(dtypes::Concat({DataType::kBool}, dtypes::Floats()), dtypes::Ints());
  // 23: inputs Q, K, V, attn_mask, past_key, past_value. 24 adds nonpad_kv_seqlen; the computation is shared.
  r.Add({.op = "Attention",
         .since = 23,
         .types = {{"T1", dtypes::Floats()}, {"T2", dtypes::Floats()}, {"U", mask}},
         .create = MakeKernel<Attention>});
}

}  // namespace ferry::ref
