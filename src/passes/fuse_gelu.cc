// FuseGelu (level 2): the two GELU formulas, as exporters write them, => Gelu(x):
//   erf form   x * 0.5 * (1 + erf(x / sqrt(2)))                          => Gelu(x) (approximate "none")
//   tanh form  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   => Gelu(x, approximate "tanh")
// Identity: the definitions of Gelu-20's two modes; exact up to float rounding of the intermediate products (the
// kernel evaluates the same formula without storing them).
// Matched forms: the two rules' patterns below (pattern.h: each intermediate read only inside the match; here
// constants within 1e-6 relative, and the operands of Add and Mul in either order).
// What it makes: where the model imports ai.onnx opset >= 20, the standard Gelu (also in the portable mode, with
// no target backends); below opset 20, ai.ferry::Gelu (same semantics, any opset), only with target backends. With
// backends either one is made only when it runs on the backend that ran the Erf / Tanh (WouldRunOn).
#include <cmath>
#include <optional>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/pattern.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoefficient = 0.044715;
constexpr double kTol = 1e-6;  // relative, for the formulas' constants

int64_t DefaultOpset(const ir::Model& model) {
  const auto it = model.opsets.find("");
  return it == model.opsets.end() ? 0 : it->second;
}

// The tail both forms share: x * (f + 1) * 0.5, in the three groupings exporters write.
Pattern Tail(const Pattern& x, const Pattern& f) {
  const Pattern a = Commutative("Add", {f, Scalar(1, kTol)});
  const Pattern half = Scalar(0.5, kTol);
  return OneOf({Commutative("Mul", {Commutative("Mul", {x, a}), half}),
                Commutative("Mul", {Commutative("Mul", {x, half}), a}),
                Commutative("Mul", {x, Commutative("Mul", {a, half})})});
}

// Replaces the match (x: the input, f: the Erf or Tanh) by one Gelu: the standard one at opset >= 20 where it
// runs on the backend that ran f (always without backends), else ai.ferry::Gelu where that runs there.
bool Rewrite(const Match& m, ir::Model& model, const PassContext& ctx, const char* approximate) {
  ir::Graph& g = *model.graph;
  ir::Value* x = m.value("x");
  ir::Value* y = m.root()->output(0);
  const ir::Node* f = m.node("f");
  if (x->type().elem_type != y->type().elem_type) return false;
  const int64_t opset = DefaultOpset(model);
  const std::vector<ir::Attribute> attrs{StringAttr("approximate", approximate)};
  const std::string ferry(schemas::kFerryDomain);
  std::optional<std::string> domain;  // of the new node: "" (standard Gelu-20) or ai.ferry
  if (ctx.backends.empty()) {
    domain = "";  // opset >= 20 (checked by Apply)
  } else {
    const Backend* home = ctx.BackendFor(*f);
    if (opset >= 20 && WouldRunOn(g, ctx, home, "", "Gelu", opset, {x}, attrs)) {
      domain = "";
    } else if (WouldRunOn(g, ctx, home, ferry, "Gelu", 1, {x}, attrs)) {
      domain = ferry;
    }
  }
  if (!domain) return false;
  const std::string name = f->name() + "_gelu";
  std::vector<ir::Value*> constants;
  for (const ir::Node* n : m.nodes()) {
    for (ir::Value* v : n->inputs()) {
      if (v && v->is_initializer()) constants.push_back(v);
    }
  }
  RemoveMatched(g, m);
  if (domain->empty()) {
    ir::Builder(g, opset).AddNode(name, "Gelu", {x}, {y}, attrs);
  } else {
    AddFerryNode(model, g, name, "Gelu", {x}, {y}, attrs);
  }
  RemoveUnreadInitializers(g, constants);  // the formula's constants (Constant nodes: eliminate_dead_nodes)
  return true;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    const Pattern x = Any("x");
    // x / sqrt(2), or x * (1 / sqrt(2))
    const Pattern scaled = OneOf({Op("Div", {x, Scalar(std::sqrt(2.0), kTol)}),
                                  Commutative("Mul", {x, Scalar(std::sqrt(0.5), kTol)})});
    // x^3 as Pow(x, 3) (a float or integer exponent), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x)
    const Pattern cube = OneOf({Op("Pow", {x, Scalar(3)}), Commutative("Mul", {x, Op("Mul", {x, x})})});
    const Pattern inner = Commutative(
        "Mul", {Commutative("Add", {x, Commutative("Mul", {cube, Scalar(kCubeCoefficient, kTol)})}),
                Scalar(kSqrt2OverPi, kTol)});
    return std::vector<Rule>{
        {"gelu_erf", Tail(x, Op("Erf", {scaled}).As("f")),
         // Gelu-20's definition, approximate "none".
         "x * 0.5 * (1 + erf(x / sqrt(2))) = Gelu(x)",
         [](const Match& m, ir::Model& model, const PassContext& ctx) { return Rewrite(m, model, ctx, "none"); }},
        {"gelu_tanh", Tail(x, Op("Tanh", {inner}).As("f")),
         // Gelu-20's definition, approximate "tanh".
         "x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) = Gelu(x) {approximate = tanh}",
         [](const Match& m, ir::Model& model, const PassContext& ctx) { return Rewrite(m, model, ctx, "tanh"); }},
    };
  }();
  return rules;
}

class FuseGelu : public Pass {
 public:
  std::string_view name() const override { return "fuse_gelu"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "The formulas x * 0.5 * (1 + erf(x / sqrt(2))) and x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * "
           "x^3))) in the forms exporters write => Gelu(x) (approximate \"none\" / \"tanh\"; ai.ferry::Gelu below "
           "opset 20). Identity: the definitions of GELU; exact up to rounding of the intermediate products.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    // ai.ferry ops only where a backend will run them
    if (DefaultOpset(model) < 20 && ctx.backends.empty()) return false;
    return ApplyRules(model, ctx, Rules());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseGelu() { return std::make_unique<FuseGelu>(); }

}  // namespace ferry::passes
