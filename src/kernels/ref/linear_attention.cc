// LinearAttention (opset 27): recurrent linear attention with a [d_k, d_v] state per (batch, kv head).
// query [B, T, Hq*d_k], key [B, T, Hkv*d_k], value [B, T, Hkv*d_v]; optional past_state [B, Hkv, d_k, d_v],
// decay [B, T, Hkv*d_k or Hkv] (log-space gate), beta [B, T, Hkv or 1], erase_gate [B, T, Hkv*d_k].
// update_rule: "linear" S += k v^T; "gated" S = exp(g) * S + k v^T; "delta" / "gated_delta" (default) replace v by
// beta * (v - S^T k') (k' = erase_gate * k when given) before the update. After each step, query head h (kv
// head h / (Hq / Hkv)) reads o = scale * q^T S (scale defaults to 1/sqrt(d_k)). Runs in float; outputs have the
// query's type, present_state the past_state's (or the query's).
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

void WriteFloats(Tensor& t, const std::vector<float>& v, const KernelContext& ctx) {
  Dispatch(FloatTypes{}, t.dtype(), ctx, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = T(static_cast<Acc<T>>(v[i]));
  });
}

class LinearAttention : public OpKernel {
 public:
  explicit LinearAttention(const ir::Node& node)
      : q_heads_(node.GetInt("q_num_heads", 0)),
        kv_heads_(node.GetInt("kv_num_heads", 0)),
        scale_(node.GetFloat("scale", 0.0f)) {
    const std::string rule = node.GetString("update_rule", "gated_delta");
    if (rule == "linear") {
    } else if (rule == "gated") {
      gated_ = true;
    } else if (rule == "delta") {
      delta_ = true;
    } else if (rule == "gated_delta") {
      gated_ = delta_ = true;
    } else {
      throw InvalidModelError(node.Describe() + ": update_rule must be linear, gated, delta or gated_delta, got '" +
                              rule + "'");
    }
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0) {
      throw InvalidModelError(node.Describe() + ": q_num_heads (" + std::to_string(q_heads_) +
                              ") must be a positive multiple of kv_num_heads (" + std::to_string(kv_heads_) + ")");
    }
  }

  // The sizes of one signature: B batches of T steps, head dims d_k / d_v, query heads per kv head, and the last
  // dims of decay and beta (0 when absent).
  struct Plan {
    int64_t B = 0, T = 0, dk = 0, dv = 0, group = 1, decay_last = 0, beta_last = 0;
  };

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& q = ctx.tensor_input(0);
    const InputSpec& k = ctx.tensor_input(1);
    const InputSpec& v = ctx.tensor_input(2);
    const InputSpec* past = ctx.has_input(3) ? &ctx.tensor_input(3) : nullptr;
    const InputSpec* decay = ctx.has_input(4) ? &ctx.tensor_input(4) : nullptr;
    const InputSpec* beta = ctx.has_input(5) ? &ctx.tensor_input(5) : nullptr;
    const InputSpec* erase = ctx.has_input(6) ? &ctx.tensor_input(6) : nullptr;
    if (gated_ != (decay != nullptr)) {
      throw InvalidArgumentError(ctx.Describe() + ": the update rule " + std::string(gated_ ? "requires" : "forbids") +
                                 " the decay input");
    }
    if (delta_ != (beta != nullptr)) {
      throw InvalidArgumentError(ctx.Describe() + ": the update rule " + std::string(delta_ ? "requires" : "forbids") +
                                 " the beta input");
    }
    if (erase && !delta_) throw InvalidArgumentError(ctx.Describe() + ": erase_gate needs a delta update rule");
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(i).shape.size() != 3) {
        throw InvalidArgumentError(ctx.Describe() + ": query/key/value must be rank 3 (B, T, H*D), got " +
                                   ctx.InputString(i));
      }
    }
    const Shape& qs = q.shape;
    const Shape& ks = k.shape;
    const Shape& vs = v.shape;
    Plan p;
    p.B = qs[0];
    p.T = qs[1];
    const int64_t B = p.B, T = p.T, Hq = q_heads_, Hk = kv_heads_;
    if (qs[2] % Hq != 0 || vs[2] % Hk != 0) {
      throw InvalidArgumentError(ctx.Describe() + ": query/value last dims must divide by the head counts (" +
                                 ctx.InputString(0) + ", " + ctx.InputString(2) + ")");
    }
    p.dk = qs[2] / Hq;
    p.dv = vs[2] / Hk;
    p.group = Hq / Hk;
    const int64_t dk = p.dk, dv = p.dv;
    if (ks[0] != B || ks[1] != T || ks[2] != Hk * dk || vs[0] != B || vs[1] != T) {
      throw InvalidArgumentError(ctx.Describe() + ": key must be [B, T, kv_heads*d_k] and value [B, T, kv_heads*d_v]" +
                                 ", got " + ShapeToString(ks) + " and " + ShapeToString(vs));
    }
    if (decay) {
      const Shape& ds = decay->shape;
      p.decay_last = ds.size() == 3 ? ds[2] : -1;
      if (ds.size() != 3 || ds[0] != B || ds[1] != T || (p.decay_last != Hk && p.decay_last != Hk * dk)) {
        throw InvalidArgumentError(ctx.Describe() + ": decay must be [B, T, kv_heads] or [B, T, kv_heads*d_k], got " +
                                   ShapeToString(ds));
      }
    }
    if (beta) {
      const Shape& bs = beta->shape;
      p.beta_last = bs.size() == 3 ? bs[2] : -1;
      if (bs.size() != 3 || bs[0] != B || bs[1] != T || (p.beta_last != Hk && p.beta_last != 1)) {
        throw InvalidArgumentError(ctx.Describe() + ": beta must be [B, T, kv_heads] or [B, T, 1], got " +
                                   ShapeToString(bs));
      }
    }
    if (erase && erase->shape != ks) {
      throw InvalidArgumentError(ctx.Describe() + ": erase_gate must have key's shape " + ShapeToString(ks) +
                                 ", got " + ctx.InputString(6));
    }
    const Shape state_shape{B, Hk, dk, dv};
    if (past && past->shape != state_shape) {
      throw InvalidArgumentError(ctx.Describe() + ": past_state must be " + ShapeToString(state_shape) + ", got " +
                                 ShapeToString(past->shape));
    }
    for (const InputSpec* t : {&q, &k, &v, decay, beta, erase, past}) {
      if (t) Dispatch(FloatTypes{}, t->dtype, ctx.Describe(), [](auto) {});  // read as float
    }
    ctx.EmplaceState(p);
    ctx.SetOutput(0, q.dtype, {B, T, Hq * dv});
    if (ctx.output_count() > 1) ctx.SetOutput(1, past ? past->dtype : q.dtype, state_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const Tensor* past = ctx.input(3);
    const Tensor* decay = ctx.input(4);
    const Tensor* beta = ctx.input(5);
    const Tensor* erase = ctx.input(6);
    const Plan& plan = ctx.state<Plan>();
    const int64_t B = plan.B, T = plan.T, Hq = q_heads_, Hk = kv_heads_, dk = plan.dk, dv = plan.dv;
    const int64_t group = plan.group, decay_last = plan.decay_last, beta_last = plan.beta_last;
    const std::vector<float> qf = ReadFloats<float>(q, ctx), kf = ReadFloats<float>(k, ctx);
    const std::vector<float> vf = ReadFloats<float>(v, ctx);
    const std::vector<float> gf = decay ? ReadFloats<float>(*decay, ctx) : std::vector<float>();
    const std::vector<float> bf = beta ? ReadFloats<float>(*beta, ctx) : std::vector<float>();
    const std::vector<float> ef = erase ? ReadFloats<float>(*erase, ctx) : std::vector<float>();
    std::vector<float> state =
        past ? ReadFloats<float>(*past, ctx) : std::vector<float>(static_cast<size_t>(B * Hk * dk * dv), 0.f);
    std::vector<float> out(static_cast<size_t>(B * T * Hq * dv), 0.f);
    const float scale = scale_ != 0.f ? scale_ : 1.f / std::sqrt(static_cast<float>(dk));
    ParallelFor(ctx.threads(), B * Hk, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> vt(static_cast<size_t>(dv)), kt(static_cast<size_t>(dk));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / Hk, h = bh % Hk;
        float* S = state.data() + bh * dk * dv;
        for (int64_t t = 0; t < T; ++t) {
          const int64_t row = b * T + t;
          const float* kr = kf.data() + row * Hk * dk + h * dk;
          const float* vr = vf.data() + row * Hk * dv + h * dv;
          if (gated_) {
            for (int64_t d = 0; d < dk; ++d) {
              const float g = decay_last == Hk ? gf[static_cast<size_t>(row * Hk + h)]
                                               : gf[static_cast<size_t>(row * Hk * dk + h * dk + d)];
              const float f = std::exp(g);
              for (int64_t m = 0; m < dv; ++m) S[d * dv + m] *= f;
            }
          }
          for (int64_t m = 0; m < dv; ++m) vt[static_cast<size_t>(m)] = vr[m];
          if (delta_) {
            for (int64_t d = 0; d < dk; ++d) {
              kt[static_cast<size_t>(d)] = erase ? ef[static_cast<size_t>(row * Hk * dk + h * dk + d)] * kr[d] : kr[d];
            }
            const float bt = bf[static_cast<size_t>(row * beta_last + (beta_last == 1 ? 0 : h))];
            for (int64_t m = 0; m < dv; ++m) {
              float retrieved = 0.f;
              for (int64_t d = 0; d < dk; ++d) retrieved += S[d * dv + m] * kt[static_cast<size_t>(d)];
              vt[static_cast<size_t>(m)] = bt * (vr[m] - retrieved);
            }
          }
          for (int64_t d = 0; d < dk; ++d) {
            for (int64_t m = 0; m < dv; ++m) S[d * dv + m] += kr[d] * vt[static_cast<size_t>(m)];
          }
          for (int64_t r = 0; r < group; ++r) {
            const int64_t hq = h * group + r;
            const float* qr = qf.data() + row * Hq * dk + hq * dk;
            float* o = out.data() + row * Hq * dv + hq * dv;
            for (int64_t m = 0; m < dv; ++m) {
              float acc = 0.f;
              for (int64_t d = 0; d < dk; ++d) acc += qr[d] * S[d * dv + m];
              o[m] = scale * acc;
            }
          }
        }
      }
    });
    WriteFloats(ctx.Output(0), out, ctx);
    if (ctx.output_requested(1)) WriteFloats(ctx.Output(1), state, ctx);
  }

 private:
  int64_t q_heads_, kv_heads_;
  float scale_;
  bool gated_ = false, delta_ = false;
};

}  // namespace

void RegisterLinearAttentionKernels(KernelRegistry& r) {
  r.Add({.op = "LinearAttention",
         .since = 27,
         .types = {{"T", dtypes::Floats()}, {"S", dtypes::Floats()}},
         .create = MakeKernel<LinearAttention>});
}

}  // namespace ferry::ref
