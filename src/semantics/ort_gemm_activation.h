// The activation of com.microsoft::FusedGemm (schemas_com_microsoft_fused.cc): ONNX Runtime's element-wise
// functors (onnxruntime/core/providers/cpu/activation/activations.h, contrib_ops/cpu/activations.h), chosen by the
// `activation` name and parameterized by `activation_alpha`, `activation_beta` and `activation_gamma` (the functor's
// alpha / beta / gamma, the prefix stripped as contrib_ops/cpu/fused_gemm.cc does). Y = act(alpha A B + beta C).
//
//   activation          params (default when absent)        y =
//   "" (absent)         -                                   x
//   Relu                -                                   max(x, 0); NaN stays NaN
//   LeakyRelu           alpha (0.01)                        x >= 0 ? x : alpha x
//   Elu                 alpha (1)                           x >= 0 ? x : alpha (exp(x) - 1)
//   Selu                alpha (1.67326...), gamma (1.0507...) gamma (max(x, 0) + min(alpha (exp(x) - 1), 0))
//   HardSigmoid         alpha (0.2), beta (0.5)             max(0, min(1, alpha x + beta)); NaN stays NaN
//   Sigmoid             -                                   1 / (1 + exp(-x)), without overflow
//   Tanh                -                                   tanh(x)
//   Softplus            -                                   log(1 + exp(x)), without overflow
//   Softsign            -                                   x / (1 + |x|)
//   ThresholdedRelu     alpha (1)                           x > alpha ? x : 0
//   ScaledTanh          alpha, beta (required)              alpha tanh(beta x)
//   ParametricSoftplus  alpha, beta (required)              alpha log(1 + exp(beta x)), without overflow
//
// The defaults are those of the ONNX ops of the same name (ONNX Runtime itself refuses a node without them: its
// functors read the attributes unconditionally); ScaledTanh and ParametricSoftplus (ONNX's experimental ops) have
// none and are refused without both. Any other name is refused, as ONNX Runtime does ("unknown kernel type").
// Users: the ref and cpu FusedGemm kernels and FusedGemm's legalization.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace ferry::semantics {

enum class OrtGemmActivationKind {
  kNone,
  kRelu,
  kLeakyRelu,
  kElu,
  kSelu,
  kHardSigmoid,
  kSigmoid,
  kTanh,
  kSoftplus,
  kSoftsign,
  kThresholdedRelu,
  kScaledTanh,
  kParametricSoftplus
};

struct OrtGemmActivation {
  OrtGemmActivationKind kind = OrtGemmActivationKind::kNone;
  float alpha = 0, beta = 0, gamma = 0;
  std::string name;  // the `activation` value ("" for none)
};

// Reads the node's `activation` and `activation_alpha/beta/gamma` into `out`; "" or why not ("FusedGemm:
// activation 'X' is not one of ONNX Runtime's ..." / "... needs activation_alpha and activation_beta").
std::string ParseOrtGemmActivation(const ir::Node& node, OrtGemmActivation* out);
// ParseOrtGemmActivation, throwing InvalidModelError "node: reason" where it refuses.
OrtGemmActivation OrtGemmActivationFromNode(const ir::Node& node);

namespace detail {
inline float OrtSoftplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
}  // namespace detail

// The activation of one value (float, the formulas above).
inline float ApplyOrtGemmActivation(const OrtGemmActivation& act, float x) {
  using K = OrtGemmActivationKind;
  const float a = act.alpha, b = act.beta;
  switch (act.kind) {
    case K::kNone: return x;
    case K::kRelu: return x > 0 || x != x ? x : 0.0f;
    case K::kLeakyRelu: return x >= 0 ? x : a * x;
    case K::kElu: return x >= 0 ? x : a * (std::exp(x) - 1.0f);
    case K::kSelu: return act.gamma * (std::max(x, 0.0f) + std::min(a * (std::exp(x) - 1.0f), 0.0f));
    case K::kHardSigmoid: {
      const float v = a * x + b;
      return v != v ? v : std::min(1.0f, std::max(0.0f, v));
    }
    case K::kSigmoid: return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
    case K::kTanh: return std::tanh(x);
    case K::kSoftplus: return detail::OrtSoftplus(x);
    case K::kSoftsign: return x / (1.0f + std::fabs(x));
    case K::kThresholdedRelu: return x > a ? x : 0.0f;
    case K::kScaledTanh: return a * std::tanh(b * x);
    case K::kParametricSoftplus: return a * detail::OrtSoftplus(b * x);
  }
  return x;
}

}  // namespace ferry::semantics
