// HardSwish (opset 14) into Mul, Add, Clip, Mul. Identity: HardSwish(x) = x * max(0, min(1, x / 6 + 0.5)), the
// op's definition (alpha = 1/6, beta = 0.5), with the clamp as Clip.
#include "legalize/decompose_util.h"

namespace ferry::legalize {

ir::Value* BuildHardSwish(Builder& b, ir::Value* x) {
  const DataType t = ElementType(x);
  ir::Value* lin = b.Add(b.Mul(x, b.Scalar(1.0 / 6.0, t)), b.Scalar(0.5, t));
  return b.Mul(x, b.Clip(lin, 0.0, 1.0));
}

namespace {

std::string Refuse(const ir::Node& n, int64_t) {
  if (!IsFloatType(ElementType(n.input(0)))) {
    return "HardSwish: the input's element type is unknown or not floating-point";
  }
  return "";
}

void Build(Builder& b) { b.SetOutput(0, BuildHardSwish(b, b.input(0))); }

}  // namespace

void AddHardSwishDecompositions(std::vector<Decomposition>& list) {
  list.push_back({"", "HardSwish", 14, INT64_MAX, "HardSwish -> Mul, Add, Clip, Mul", Refuse, Build, true});
}

}  // namespace ferry::legalize
