#include "kernels/cpu/fused_activation.h"

#include <cmath>
#include <vector>

namespace ferry::cpu {

std::string FusedActivation::Parse(const ir::Node& node, FusedActivation* out) {
  const std::string name = node.GetString("activation", "");
  const std::vector<float> p = node.GetFloats("activation_params");
  semantics::FusedActivation parsed;
  switch (semantics::ParseFusedActivation(name, p, &parsed)) {
    case semantics::FusedActivationProblem::kNone: break;
    case semantics::FusedActivationProblem::kUnknownName:
      return node.op_type() + ": activation '" + name + "' is not implemented on cpu";
    case semantics::FusedActivationProblem::kParamCount:
      return node.op_type() + ": activation " + name + " takes " +
             std::to_string(semantics::FindFusedActivation(name)->params) +
             " value(s) in activation_params (or none: the defaults), got " + std::to_string(p.size());
  }
  FusedActivation a;
  static_cast<semantics::FusedActivation&>(a) = parsed;
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
    case Kind::kMish: ops.append_eltwise(1.0f, alg::eltwise_mish, 0.0f, 0.0f); break;
  }
}

}  // namespace ferry::cpu
