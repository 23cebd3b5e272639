// The activations of Ferry's fused ops as ONNX primitives, and the statistics type of the normalizations.
#include "legalize/decompose_util.h"

#include "semantics/fused_activation.h"

namespace ferry::legalize {

DataType StashType(DataType t, int64_t stash_type) {
  const bool half = t == DataType::kFloat16 || t == DataType::kBFloat16;
  if (!half) return t;
  return stash_type == 1 ? DataType::kFloat : DataType::kUndefined;
}

std::string RefuseFusedActivation(const ir::Node& node, int64_t opset) {
  const std::string a = node.GetString("activation", "");
  const std::vector<float> params = node.GetFloats("activation_params");
  semantics::FusedActivation parsed;
  switch (semantics::ParseFusedActivation(a, params, &parsed)) {  // the one activation table
    case semantics::FusedActivationProblem::kNone: break;
    case semantics::FusedActivationProblem::kUnknownName: return node.op_type() + ": activation '" + a + "' is unknown";
    case semantics::FusedActivationProblem::kParamCount:
      return node.op_type() + ": activation " + a + " with " + std::to_string(params.size()) + " parameters";
  }
  if (a == "Gelu" && opset < 9) return node.op_type() + ": Erf needs ai.onnx opset 9";
  return "";
}

ir::Value* BuildFusedActivation(Builder& b, ir::Value* x) {
  const ir::Node& n = b.node();
  // RefuseFusedActivation passed: the table's kind and parameters (or its defaults).
  semantics::FusedActivation act;
  semantics::ParseFusedActivation(n.GetString("activation", ""), n.GetFloats("activation_params"), &act);
  const semantics::FusedActivationInfo& info = semantics::FusedActivationOf(act.kind);
  using Kind = semantics::FusedActivationKind;
  switch (act.kind) {
    case Kind::kNone: return x;
    case Kind::kRelu:
    case Kind::kSigmoid:
    case Kind::kTanh: return b.Op(std::string(info.name), {x});
    // LeakyRelu and HardSigmoid: the ONNX ops, whose attributes are named as the table's parameters.
    case Kind::kLeakyRelu: return b.Op("LeakyRelu", {x}, {FloatAttr(std::string(info.param_names[0]), act.alpha)});
    case Kind::kHardSigmoid:
      return b.Op("HardSigmoid", {x}, {FloatAttr(std::string(info.param_names[0]), act.alpha),
                                       FloatAttr(std::string(info.param_names[1]), act.beta)});
    case Kind::kClip: return b.Clip(x, act.alpha, act.beta);
    // HardSwish and Gelu as those ops where the opset has them (legalization decomposes them in turn when no
    // backend runs them), else as primitives.
    case Kind::kHardSwish: return b.opset() >= 14 ? b.Op("HardSwish", {x}) : BuildHardSwish(b, x);
    case Kind::kSilu: return b.Mul(x, b.Op("Sigmoid", {x}));
    case Kind::kGelu:
    case Kind::kGeluTanh: {
      const bool tanh = act.kind == Kind::kGeluTanh;
      if (b.opset() >= 20) return b.Op("Gelu", {x}, {StringAttr("approximate", tanh ? "tanh" : "none")});
      return BuildGelu(b, x, tanh);
    }
    // Mish as the op from opset 18, else as primitives (BuildMish: Clip, Exp, Add, Mul, Add, Div, Mul).
    case Kind::kMish: return b.opset() >= 18 ? b.Op("Mish", {x}) : BuildMish(b, x);
  }
  return x;
}

}  // namespace ferry::legalize
