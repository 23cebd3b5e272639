// Gelu (ai.onnx opset 20; ai.ferry::Gelu for models of any opset) into Mul, Erf, Add (approximate "none") or
// Mul, Add, Tanh (approximate "tanh"). Identities: Gelu(x) = 0.5 x (1 + erf(x / sqrt 2)) and, for "tanh",
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the op's definitions.
#include <cmath>

#include "legalize/decompose_util.h"

namespace ferry::legalize {

ir::Value* BuildGelu(Builder& b, ir::Value* x, bool tanh) {
  const DataType t = ElementType(x);
  ir::Value* half_x = b.Mul(x, b.Scalar(0.5, t));
  ir::Value* inner;
  if (tanh) {
    ir::Value* cube = b.Mul(b.Mul(x, x), x);
    ir::Value* poly = b.Add(x, b.Mul(cube, b.Scalar(0.044715, t)));
    inner = b.Op("Tanh", {b.Mul(poly, b.Scalar(0.7978845608028654, t))});  // sqrt(2 / pi)
  } else {
    inner = b.Op("Erf", {b.Mul(x, b.Scalar(0.7071067811865476, t))});   // 1 / sqrt 2
  }
  return b.Mul(half_x, b.Add(inner, b.Scalar(1.0, t)));
}

namespace {

std::string Refuse(const ir::Node& n, int64_t opset, bool tanh) {
  const std::string approximate = n.GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return "Gelu: approximate='" + approximate + "' is unknown";
  if (!IsFloatType(ElementType(n.input(0)))) return "Gelu: the input's element type is unknown or not floating-point";
  if (!tanh && opset < 9) return "Gelu: Erf needs ai.onnx opset 9, the model has " + std::to_string(opset);
  return "";
}

// Each rule refuses the other's case; ChooseDecomposition reports refusals only when no rule accepts.
std::string RefuseErf(const ir::Node& n, int64_t opset) {
  if (n.GetString("approximate", "none") == "tanh") return "Gelu: approximate='tanh' (the tanh rule's case)";
  return Refuse(n, opset, false);
}

std::string RefuseTanh(const ir::Node& n, int64_t opset) {
  if (n.GetString("approximate", "none") != "tanh") return "Gelu: approximate is not 'tanh' (the erf rule's case)";
  return Refuse(n, opset, true);
}

void BuildErf(Builder& b) { b.SetOutput(0, BuildGelu(b, b.input(0), false)); }
void BuildTanh(Builder& b) { b.SetOutput(0, BuildGelu(b, b.input(0), true)); }

}  // namespace

void AddGeluDecompositions(std::vector<Decomposition>& list) {
  for (const char* domain : {"", "ai.ferry"}) {
    const std::string name = std::string(*domain ? "ai.ferry::" : "") + "Gelu";
    const int64_t since = *domain ? 1 : 20;
    list.push_back(
        {domain, "Gelu", since, INT64_MAX, name + " -> Mul, Mul, Erf, Add, Mul", RefuseErf, BuildErf, true});
    list.push_back({domain, "Gelu", since, INT64_MAX, name + " (tanh) -> Mul, Mul, Mul, Mul, Add, Mul, Tanh, Add, Mul",
                    RefuseTanh, BuildTanh, true});
  }
}

}  // namespace ferry::legalize
