#include "kernels/cpu/fused_activation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ref/gelu.h"

namespace ferry::cpu {

std::string FusedActivation::Parse(const ir::Node& node, FusedActivation* out) {
  const std::string name = node.GetString("activation", "");
  const std::vector<float> p = node.GetFloats("activation_params");
  struct Entry {
    const char* name;
    Kind kind;
    size_t params;
    float alpha, beta;  // the defaults when activation_params is empty
  };
  constexpr float kInf = std::numeric_limits<float>::infinity();
  static constexpr Entry kEntries[] = {{"", Kind::kNone, 0, 0, 0},
                                       {"Relu", Kind::kRelu, 0, 0, 0},
                                       {"LeakyRelu", Kind::kLeakyRelu, 1, 0.01f, 0},
                                       {"Clip", Kind::kClip, 2, -kInf, kInf},
                                       {"Sigmoid", Kind::kSigmoid, 0, 0, 0},
                                       {"Tanh", Kind::kTanh, 0, 0, 0},
                                       {"HardSigmoid", Kind::kHardSigmoid, 2, 0.2f, 0.5f},
                                       {"HardSwish", Kind::kHardSwish, 0, 0, 0},
                                       {"Silu", Kind::kSilu, 0, 0, 0},
                                       {"Gelu", Kind::kGelu, 0, 0, 0},
                                       {"GeluTanh", Kind::kGeluTanh, 0, 0, 0}};
  const Entry* e =
      std::find_if(std::begin(kEntries), std::end(kEntries), [&](const Entry& x) { return name == x.name; });
  if (e == std::end(kEntries)) {
    return node.op_type() + ": activation '" + name + "' is not implemented on cpu";
  }
  if (!p.empty() && p.size() != e->params) {
    return node.op_type() + ": activation " + name + " takes " + std::to_string(e->params) +
           " value(s) in activation_params (or none: the defaults), got " + std::to_string(p.size());
  }
  FusedActivation a;
  a.kind = e->kind;
  a.alpha = p.size() > 0 ? p[0] : e->alpha;
  a.beta = p.size() > 1 ? p[1] : e->beta;
  if (a.kind == Kind::kClip && (std::isnan(a.alpha) || std::isnan(a.beta) || a.alpha > a.beta)) {
    return node.op_type() + ": activation Clip with min > max or a NaN bound is not implemented on cpu (oneDNN's " +
           "clip refuses it)";
  }
  *out = a;
  return "";
}

void FusedActivation::AppendTo(dnnl::post_ops& ops) const {
  using alg = dnnl::algorithm;
  switch (kind) {
    case Kind::kNone: break;
    case Kind::kRelu: ops.append_eltwise(1.0f, alg::eltwise_relu, 0.0f, 0.0f); break;
    case Kind::kLeakyRelu: ops.append_eltwise(1.0f, alg::eltwise_relu, alpha, 0.0f); break;
    case Kind::kClip: ops.append_eltwise(1.0f, alg::eltwise_clip_v2, alpha, beta); break;
    case Kind::kSigmoid: ops.append_eltwise(1.0f, alg::eltwise_logistic, 0.0f, 0.0f); break;
    case Kind::kTanh: ops.append_eltwise(1.0f, alg::eltwise_tanh, 0.0f, 0.0f); break;
    case Kind::kHardSigmoid:
      ops.append_eltwise(1.0f, alg::eltwise_linear, alpha, beta);
      ops.append_eltwise(1.0f, alg::eltwise_clip_v2, 0.0f, 1.0f);
      break;
    case Kind::kHardSwish: ops.append_eltwise(1.0f, alg::eltwise_hardswish, 0.0f, 0.0f); break;
    case Kind::kSilu: ops.append_eltwise(1.0f, alg::eltwise_swish, 1.0f, 0.0f); break;
    case Kind::kGelu: ops.append_eltwise(1.0f, alg::eltwise_gelu_erf, 0.0f, 0.0f); break;
    case Kind::kGeluTanh: ops.append_eltwise(1.0f, alg::eltwise_gelu_tanh, 0.0f, 0.0f); break;
  }
}

float FusedActivation::Apply(float x) const {
  if (std::isnan(x)) return x;
  switch (kind) {
    case Kind::kNone: return x;
    case Kind::kRelu: return x > 0 ? x : 0.0f;
    case Kind::kLeakyRelu: return x < 0 ? x * alpha : x;
    case Kind::kClip: return std::min(std::max(x, alpha), beta);
    case Kind::kSigmoid: return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
    case Kind::kTanh: return std::tanh(x);
    case Kind::kHardSigmoid: {
      const float y = alpha * x + beta;
      return std::isnan(y) ? y : std::min(1.0f, std::max(0.0f, y));
    }
    case Kind::kHardSwish: {
      const float y = x / 6.0f + 0.5f;
      return x * std::min(1.0f, std::max(0.0f, y));
    }
    case Kind::kSilu: return x * (x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)));
    case Kind::kGelu: return ref::GeluErf(x);
    case Kind::kGeluTanh: return ref::GeluTanh(x);
  }
  return x;
}

}  // namespace ferry::cpu
