// Mish (opset 18) into Clip, Exp, Add, Mul, Add, Div, Mul. Identity: Mish(x) = x tanh(softplus(x)) and, with
// e = exp(x), tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1) = n / (n + 2), n = e (e + 2). Clamping x at 20
// before exp only avoids inf / inf: n / (n + 2) is 1 in float (and in double) from there on.
#include <limits>

#include "legalize/decompose_util.h"

namespace ferry::legalize {

ir::Value* BuildMish(Builder& b, ir::Value* x) {
  const DataType t = ElementType(x);
  ir::Value* e = b.Op("Exp", {b.Clip(x, -std::numeric_limits<double>::infinity(), 20.0)});
  ir::Value* n = b.Mul(e, b.Add(e, b.Scalar(2.0, t)));
  return b.Mul(x, b.Div(n, b.Add(n, b.Scalar(2.0, t))));
}

namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  if (!IsFloatType(ElementType(n.input(0)))) return "Mish: the input's element type is unknown or not floating-point";
  return "";
}

void Build(Builder& b) { b.SetOutput(0, BuildMish(b, b.input(0))); }

}  // namespace

void AddMishDecompositions(std::vector<Decomposition>& list) {
  list.push_back(
      {"", "Mish", 18, INT64_MAX, "Mish -> Clip, Exp, Add, Mul, Add, Div, Mul", Refuse, Build, true});
}

}  // namespace ferry::legalize
