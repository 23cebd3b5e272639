// Softplus (opset 1) into Relu, Abs, Neg, Exp, Add, Log, Add. Identity: log(1 + exp(x)) = max(x, 0) +
// log(1 + exp(-|x|)), which never overflows (the exponent is at most 0).
#include "legalize/decompose_util.h"

namespace ferry::legalize {
namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  if (!IsFloatType(ElementType(n.input(0)))) {
    return "Softplus: the input's element type is unknown or not floating-point";
  }
  return "";
}

void Build(Builder& b) {
  ir::Value* x = b.input(0);
  ir::Value* e = b.Op("Exp", {b.Op("Neg", {b.Op("Abs", {x})})});
  ir::Value* tail = b.Op("Log", {b.Add(e, b.Scalar(1.0, ElementType(x)))});
  b.SetOutput(0, b.Add(b.Op("Relu", {x}), tail));
}

}  // namespace

void AddSoftplusDecompositions(std::vector<Decomposition>& list) {
  list.push_back(
      {"", "Softplus", 1, INT64_MAX, "Softplus -> Relu, Abs, Neg, Exp, Add, Log, Add", Refuse, Build, true});
}

}  // namespace ferry::legalize
