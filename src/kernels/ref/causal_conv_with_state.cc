// CausalConvWithState (opset 27): depthwise causal 1-D convolution with a carried state, for streaming decoders.
// input [B, C, L], weight [C, 1, K], optional bias [C], optional past_state [B, C, K-1] (zeros when omitted).
// padded = concat(past_state, input) along L; output[b, c, t] = bias[c] + sum_k weight[c, 0, k] * padded[b, c, t + k],
// optionally followed by SiLU ("silu" / "swish", computed in float); present_state = the last K-1 positions of
// padded.
#include <cmath>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class CausalConvWithState : public OpKernel {
 public:
  explicit CausalConvWithState(const ir::Node& node) {
    const std::string act = node.GetString("activation", "none");
    if (act == "silu" || act == "swish") {
      silu_ = true;
    } else if (act != "none") {
      throw InvalidModelError(node.Describe() + ": activation must be 'none', 'silu' or 'swish', got '" + act + "'");
    }
  }

  // Every check of the input, weight, bias and past state; the outputs' shapes.
  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec& bias = ctx.input(2);
    const InputSpec& past = ctx.input(3);
    if (ctx.has_input(2)) ctx.tensor_input(2);
    if (ctx.has_input(3)) ctx.tensor_input(3);
    if (x.shape.size() != 3) {
      throw InvalidArgumentError(what + ": input must be [B, C, L], got " + ShapeToString(x.shape));
    }
    Dims d{x.shape[0], x.shape[1], x.shape[2], 0};
    const Shape& ws = w.shape;
    if (ws.size() != 3 || ws[0] != d.C || ws[1] != 1 || ws[2] < 1) {
      throw InvalidArgumentError(what + ": weight must be [C, 1, K] with C = " + std::to_string(d.C) + ", got " +
                                 ShapeToString(ws));
    }
    d.K = ws[2];
    const int64_t P = d.K - 1;
    if (bias.is_tensor() && ShapeElementCount(bias.shape) != d.C) {
      throw InvalidArgumentError(what + ": bias must have C = " + std::to_string(d.C) + " elements, got " +
                                 ctx.InputString(2));
    }
    const Shape& ps = past.shape;
    if (past.is_tensor() && (ps.size() != 3 || ps[0] != d.B || ps[1] != d.C || ps[2] != P)) {
      throw InvalidArgumentError(what + ": past_state must be [B, C, K-1] = [" + std::to_string(d.B) + "," +
                                 std::to_string(d.C) + "," + std::to_string(P) + "], got " + ShapeToString(ps));
    }
    for (int i = 0; i <= 2; ++i) {
      const DataType t = ctx.input(i).dtype;
      if (ctx.input(i).is_tensor() && t != DataType::kFloat && t != DataType::kDouble && t != DataType::kFloat16 &&
          t != DataType::kBFloat16) {
        throw UnsupportedError(what + ": data type " + std::string(DataTypeName(t)) + " is not supported");
      }
    }
    ctx.SetOutput(0, x.dtype, x.shape);
    if (ctx.output_requested(1)) ctx.SetOutput(1, x.dtype, {d.B, d.C, P});
    ctx.EmplaceState(d);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    const Dims& d = ctx.state<Dims>();
    const int64_t B = d.B, C = d.C, L = d.L, K = d.K, P = K - 1;
    Tensor& y = ctx.Output(0);
    Tensor* state = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const std::vector<A> wf = ReadFloats<A>(w, ctx);
      const std::vector<A> bf = bias ? ReadFloats<A>(*bias, ctx) : std::vector<A>(static_cast<size_t>(C), A(0));
      const T* in = x.data<T>();
      const T* pp = past ? past->data<T>() : nullptr;
      T* out = y.data<T>();
      std::vector<T> padded(static_cast<size_t>(P + L));
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t bc = b * C + c;
          for (int64_t t = 0; t < P; ++t) padded[static_cast<size_t>(t)] = pp ? pp[bc * P + t] : T(Acc<T>(0));
          for (int64_t t = 0; t < L; ++t) padded[static_cast<size_t>(P + t)] = in[bc * L + t];
          const A* wc = wf.data() + c * K;
          for (int64_t t = 0; t < L; ++t) {
            A acc = bf[static_cast<size_t>(c)];
            for (int64_t k = 0; k < K; ++k) acc += wc[k] * static_cast<A>(static_cast<Acc<T>>(padded[static_cast<size_t>(t + k)]));
            // The convolution result is rounded to T before the activation, as in the ONNX reference.
            const A conv = static_cast<A>(static_cast<Acc<T>>(T(static_cast<Acc<T>>(acc))));
            const A r = silu_ ? conv / (A(1) + std::exp(-conv)) : conv;
            out[bc * L + t] = T(static_cast<Acc<T>>(r));
          }
          if (state) {
            T* st = state->data<T>() + bc * P;
            for (int64_t t = 0; t < P; ++t) st[t] = padded[static_cast<size_t>(L + t)];
          }
        }
      }
    });
  }

 private:
  struct Dims {
    int64_t B, C, L, K;
  };

  bool silu_ = false;
};

}  // namespace

void RegisterCausalConvWithStateKernels(KernelRegistry& r) {
  r.Add({.op = "CausalConvWithState",
         .since = 27,
         .types = {{"T", dtypes::Floats()}},
         .create = MakeKernel<CausalConvWithState>});
}

}  // namespace ferry::ref
