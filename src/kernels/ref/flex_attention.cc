// ai.onnx.preview::FlexAttention (version 1): attention with user subgraphs over the whole score tensor.
// Q [B, Hq, L, E], K [B, Hkv, S, E], V [B, Hkv, S, Ev] (query head h reads kv head h / (Hq / Hkv)).
// scores = Q K^T * scale (default 1/sqrt(E)) in float (double for double inputs) -> score_mod(scores) ->
// mask_mod(scores) -> softmax over S -> prob_mod(probs) -> probs V, cast back to Q's type. Each *_mod attribute is
// an optional graph taking and returning one [B, Hq, L, S] tensor.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class FlexAttention : public OpKernel {
 public:
  explicit FlexAttention(const ir::Node& node)
      : has_scale_(node.has_attr("scale")),
        scale_(node.GetFloat("scale", 1.0f)),
        score_mod_(node.GetGraph("score_mod")),
        mask_mod_(node.GetGraph("mask_mod")),
        prob_mod_(node.GetGraph("prob_mod")) {}

  // Checks Q, K and V and declares Y [B, Hq, L, Ev].
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& q = ctx.tensor_input(0);
    const InputSpec& k = ctx.tensor_input(1);
    const InputSpec& v = ctx.tensor_input(2);
    if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4) {
      throw InvalidArgumentError(ctx.Describe() + ": Q, K and V must be 4-D (" + ctx.InputString(0) + ", " +
                                 ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
    }
    const int64_t B = q.shape[0], Hq = q.shape[1], L = q.shape[2], E = q.shape[3];
    const int64_t Hk = k.shape[1], S = k.shape[2], Ev = v.shape[3];
    if (k.shape[0] != B || v.shape[0] != B || v.shape[1] != Hk || v.shape[2] != S || k.shape[3] != E || Hk <= 0 ||
        Hq % Hk != 0 || k.dtype != q.dtype || v.dtype != q.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": inconsistent Q/K/V " + ShapeToString(q.shape) + ", " +
                                 ShapeToString(k.shape) + ", " + ShapeToString(v.shape) + " (" + ctx.InputString(0) +
                                 ", " + ctx.InputString(1) + ", " + ctx.InputString(2) + ")");
    }
    ctx.SetOutput(0, q.dtype, {B, Hq, L, Ev});
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.required_input(0);
    const Tensor& k = ctx.required_input(1);
    const Tensor& v = ctx.required_input(2);
    const int64_t B = q.dim(0), Hq = q.dim(1), L = q.dim(2), E = q.dim(3), Hk = k.dim(1), S = k.dim(2), Ev = v.dim(3);
    const bool wide = q.dtype() == DataType::kDouble;
    auto run = [&](auto acc_tag) {
      using A = decltype(acc_tag);
      const DataType acc_type = wide ? DataType::kDouble : DataType::kFloat;
      const std::vector<A> qf = ReadFloats<A>(q, ctx), kf = ReadFloats<A>(k, ctx), vf = ReadFloats<A>(v, ctx);
      const int64_t group = Hq / Hk;
      const A scale = has_scale_ ? static_cast<A>(scale_) : A(1) / std::sqrt(static_cast<A>(E));
      Tensor scores(acc_type, {B, Hq, L, S});
      A* sp = scores.data<A>();
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < Hq; ++h) {
          const A* qb = qf.data() + (b * Hq + h) * L * E;
          const A* kb = kf.data() + (b * Hk + h / group) * S * E;
          for (int64_t i = 0; i < L; ++i) {
            for (int64_t j = 0; j < S; ++j) {
              A dot = 0;
              for (int64_t e = 0; e < E; ++e) dot += qb[i * E + e] * kb[j * E + e];
              sp[((b * Hq + h) * L + i) * S + j] = dot * scale;
            }
          }
        }
      }
      auto apply = [&](const ir::Graph* g, Tensor t, const char* name) {
        if (!g) return t;
        std::vector<Value> res = ctx.RunSubgraph(*g, {Value(t)});
        if (res.size() != 1 || !res[0].is_tensor() || res[0].tensor().shape() != t.shape()) {
          throw InvalidArgumentError(ctx.Describe() + ": " + name + " must return one tensor of shape " +
                                     ShapeToString(t.shape()));
        }
        Tensor out = res[0].tensor();
        if (out.dtype() != acc_type) {
          throw InvalidArgumentError(ctx.Describe() + ": " + name + " returned " +
                                     std::string(DataTypeName(out.dtype())) + ", expected " +
                                     std::string(DataTypeName(acc_type)));
        }
        return out;
      };
      scores = apply(mask_mod_, apply(score_mod_, scores, "score_mod"), "mask_mod");
      // Softmax over S into a fresh tensor (the subgraph result may share buffers with other values).
      Tensor probs(acc_type, {B, Hq, L, S});
      const A* in = scores.data<A>();
      A* pp = probs.data<A>();
      for (int64_t r = 0; r < B * Hq * L; ++r) {
        const A* x = in + r * S;
        A* p = pp + r * S;
        A mx = -std::numeric_limits<A>::infinity();
        for (int64_t j = 0; j < S; ++j) mx = std::max(mx, x[j]);
        A sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (p[j] = std::exp(x[j] - mx));
        for (int64_t j = 0; j < S; ++j) p[j] /= sum;
      }
      probs = apply(prob_mod_, probs, "prob_mod");
      const A* pr = probs.data<A>();
      Tensor& y = ctx.Output(0);
      Dispatch(FloatTypes{}, q.dtype(), ctx, [&](auto tag) {
        using T = decltype(tag);
        T* out = y.data<T>();
        std::vector<A> acc(static_cast<size_t>(Ev));
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t h = 0; h < Hq; ++h) {
            const A* vb = vf.data() + (b * Hk + h / group) * S * Ev;
            for (int64_t i = 0; i < L; ++i) {
              const A* p = pr + ((b * Hq + h) * L + i) * S;
              std::fill(acc.begin(), acc.end(), A(0));
              for (int64_t j = 0; j < S; ++j) {
                for (int64_t e = 0; e < Ev; ++e) acc[static_cast<size_t>(e)] += p[j] * vb[j * Ev + e];
              }
              T* yr = out + ((b * Hq + h) * L + i) * Ev;
              for (int64_t e = 0; e < Ev; ++e) yr[e] = T(static_cast<Acc<T>>(acc[static_cast<size_t>(e)]));
            }
          }
        }
      });
    };
    if (wide) {
      run(double{});
    } else {
      run(float{});
    }
  }

 private:
  bool has_scale_;
  float scale_;
  const ir::Graph* score_mod_;
  const ir::Graph* mask_mod_;
  const ir::Graph* prob_mod_;
};

}  // namespace

void RegisterFlexAttentionKernels(KernelRegistry& r) {
  r.Add({.op = "FlexAttention",
         .domain = "ai.onnx.preview",
         .since = 1,
         .types = {{"T1", dtypes::Floats()}},
         .create = MakeKernel<FlexAttention>});
}

}  // namespace ferry::ref
