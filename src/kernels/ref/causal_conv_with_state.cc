// CausalConvWithState (opset 27): depthwise causal 1-D convolution with a carried state, for streaming decoders.
// input [B, C, L], weight [C, 1, K], optional bias [C], optional past_state [B, C, K-1] (zeros when omitted).
// padded = concat(past_state, input) along L; output[b, c, t] = bias[c] + sum_k weight[c, 0, k] * padded[b, c, t + k],
// optionally followed by SiLU ("silu" / "swish", computed in float); present_state = the last K-1 positions of
// padded.
#include <cmath>
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

  void Compute(KernelContext& ctx) const override {
    const std::string what = ctx.Describe();
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* past = ctx.input(3);
    if (x.rank() != 3) throw InvalidArgumentError(what + ": input must be [B, C, L], got " + ShapeToString(x.shape()));
    const int64_t B = x.dim(0), C = x.dim(1), L = x.dim(2);
    if (w.rank() != 3 || w.dim(0) != C || w.dim(1) != 1 || w.dim(2) < 1) {
      throw InvalidArgumentError(what + ": weight must be [C, 1, K] with C = " + std::to_string(C) + ", got " +
                                 ShapeToString(w.shape()));
    }
    const int64_t K = w.dim(2), P = K - 1;
    if (bias && bias->size() != C) {
      throw InvalidArgumentError(what + ": bias must have C = " + std::to_string(C) + " elements");
    }
    if (past && (past->rank() != 3 || past->dim(0) != B || past->dim(1) != C || past->dim(2) != P)) {
      throw InvalidArgumentError(what + ": past_state must be [B, C, K-1] = [" + std::to_string(B) + "," +
                                 std::to_string(C) + "," + std::to_string(P) + "], got " + ShapeToString(past->shape()));
    }
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    Tensor* state = ctx.output_requested(1) ? &ctx.Output(1, x.dtype(), {B, C, P}) : nullptr;
    Dispatch(FloatTypes{}, x.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      const std::vector<A> wf = ReadFloats<A>(w, what);
      const std::vector<A> bf = bias ? ReadFloats<A>(*bias, what) : std::vector<A>(static_cast<size_t>(C), A(0));
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
