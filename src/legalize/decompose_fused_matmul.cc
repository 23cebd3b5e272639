// Ferry's fused ops back into ONNX: ai.ferry::FusedMatMul into MatMul, Add and its activation; ai.ferry::FusedConv
// into Conv, Add and its activation; ai.ferry::ScaleShift into Mul, Add and its activation. Identity: their
// definitions (schemas_ferry.cc): FusedMatMul(A, B, C) = act(MatMul(A, B) + C), C [N] added to every row;
// FusedConv(X, W, B, Z) = act(Conv(X, W, B) + Z), Conv keeping every attribute but the activation's;
// ScaleShift(X, scale, shift) = act(X * scale + shift). Activations: Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, and
// HardSwish / Gelu where the model's opset has them, as those ops (legalized in turn if need be); Silu as
// x * Sigmoid(x); HardSwish and Gelu before their opsets as primitives.
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string RefuseMatMul(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return "FusedMatMul: A's element type is unknown or not float";
  return RefuseFusedActivation(n, opset);
}

void BuildMatMul(Builder& b) {
  ir::Value* y = b.Op("MatMul", {b.input(0), b.input(1)});
  if (b.input(2)) y = b.Add(y, b.input(2));
  b.SetOutput(0, BuildFusedActivation(b, y));
}

std::string RefuseConv(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return "FusedConv: X's element type is unknown or not float";
  return RefuseFusedActivation(n, opset);
}

void BuildConv(Builder& b) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : b.node().attributes()) {
    if (a.name != "activation" && a.name != "activation_params") attrs.push_back(a);
  }
  std::vector<ir::Value*> in = {b.input(0), b.input(1)};
  if (b.input(2)) in.push_back(b.input(2));
  ir::Value* y = b.Op("Conv", std::move(in), std::move(attrs));
  if (b.input(3)) y = b.Add(y, b.input(3));
  b.SetOutput(0, BuildFusedActivation(b, y));
}

std::string RefuseScaleShift(const ir::Node& n, int64_t opset) {
  if (ElementType(n.input(0)) != DataType::kFloat) return "ScaleShift: X's element type is unknown or not float";
  return RefuseFusedActivation(n, opset);
}

void BuildScaleShift(Builder& b) {
  ir::Value* y = b.Add(b.Mul(b.input(0), b.input(1)), b.input(2));
  b.SetOutput(0, BuildFusedActivation(b, y));
}

}  // namespace

void AddFusedMatMulDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"ai.ferry", "FusedMatMul", 1, INT64_MAX, "ai.ferry::FusedMatMul -> MatMul, Add, activation",
                  RefuseMatMul, BuildMatMul});
  list.push_back({"ai.ferry", "FusedConv", 1, INT64_MAX, "ai.ferry::FusedConv -> Conv, Add, activation", RefuseConv,
                  BuildConv});
  list.push_back({"ai.ferry", "ScaleShift", 1, INT64_MAX, "ai.ferry::ScaleShift -> Mul, Add, activation",
                  RefuseScaleShift, BuildScaleShift});
}

}  // namespace ferry::legalize
