// The activations of Ferry's fused ops as ONNX primitives, and the statistics type of the normalizations.
#include "legalize/decompose_util.h"

#include <limits>

namespace ferry::legalize {

DataType StashType(DataType t, int64_t stash_type) {
  const bool half = t == DataType::kFloat16 || t == DataType::kBFloat16;
  if (!half) return t;
  return stash_type == 1 ? DataType::kFloat : DataType::kUndefined;
}

namespace {

// activation -> how many activation_params it takes (fused_activation.h).
int ParamCount(const std::string& a) {
  if (a.empty() || a == "Relu" || a == "Sigmoid" || a == "Tanh" || a == "HardSwish" || a == "Silu" || a == "Gelu" ||
      a == "GeluTanh") {
    return 0;
  }
  if (a == "LeakyRelu") return 1;
  if (a == "Clip" || a == "HardSigmoid") return 2;
  return -1;
}

}  // namespace

std::string RefuseFusedActivation(const ir::Node& node, int64_t opset) {
  const std::string a = node.GetString("activation", "");
  const int count = ParamCount(a);
  if (count < 0) return node.op_type() + ": activation '" + a + "' is unknown";
  const size_t params = node.GetFloats("activation_params").size();
  if (params != 0 && params != static_cast<size_t>(count)) {
    return node.op_type() + ": activation " + a + " with " + std::to_string(params) + " parameters";
  }
  if (a == "Gelu" && opset < 9) return node.op_type() + ": Erf needs ai.onnx opset 9";
  return "";
}

ir::Value* BuildFusedActivation(Builder& b, ir::Value* x) {
  const ir::Node& n = b.node();
  const std::string a = n.GetString("activation", "");
  std::vector<float> p = n.GetFloats("activation_params");
  auto param = [&](size_t i, float def) { return i < p.size() ? p[i] : def; };
  if (a.empty()) return x;
  if (a == "Relu" || a == "Sigmoid" || a == "Tanh") return b.Op(a, {x});
  if (a == "LeakyRelu") return b.Op("LeakyRelu", {x}, {FloatAttr("alpha", param(0, 0.01f))});
  if (a == "HardSigmoid") {
    return b.Op("HardSigmoid", {x}, {FloatAttr("alpha", param(0, 0.2f)), FloatAttr("beta", param(1, 0.5f))});
  }
  if (a == "Clip") {
    const float inf = std::numeric_limits<float>::infinity();
    return b.Clip(x, param(0, -inf), param(1, inf));
  }
  // HardSwish and Gelu as those ops where the opset has them (legalization decomposes them in turn when no
  // backend runs them), else as primitives.
  if (a == "HardSwish") return b.opset() >= 14 ? b.Op("HardSwish", {x}) : BuildHardSwish(b, x);
  if (a == "Silu") return b.Mul(x, b.Op("Sigmoid", {x}));
  if (b.opset() >= 20) return b.Op("Gelu", {x}, {StringAttr("approximate", a == "GeluTanh" ? "tanh" : "none")});
  return BuildGelu(b, x, a == "GeluTanh");
}

}  // namespace ferry::legalize
