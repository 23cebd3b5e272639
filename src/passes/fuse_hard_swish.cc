// FuseHardSwish (level 2): HardSigmoid(x, alpha = 1/6, beta = 0.5) * x => HardSwish(x), either operand order.
// Identity: HardSwish-14's definition, x * max(0, min(1, x / 6 + 0.5)); exact up to the rounding of alpha x + beta
// against x / 6 + 0.5 (about one ulp of the clamped factor).
// Matched form: Mul(HardSigmoid(x), x) or Mul(x, HardSigmoid(x)) where the HardSigmoid output is read by the Mul
// alone (pattern.h: intermediates are read only inside the match) and its alpha is 1/6 and beta (default 0.5) is
// 0.5, both within 1e-6 relative (the float nearest 1/6 is within 1e-8).
// What it makes: the standard HardSwish, only where the model imports ai.onnx opset >= 14; with target backends
// only when HardSwish runs on the backend that ran the HardSigmoid (WouldRunOn). It runs before
// fuse_conv_activation, so a Conv followed by this formula can become one FusedConv.
#include <cmath>
#include <string>
#include <vector>

#include "passes/pass_list.h"
#include "passes/pattern.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

constexpr double kTol = 1e-6;  // relative, for alpha and beta

int64_t DefaultOpset(const ir::Model& model) {
  const auto it = model.opsets.find("");
  return it == model.opsets.end() ? 0 : it->second;
}

bool Near(double got, double want) { return std::fabs(got - want) <= kTol * std::fabs(want); }

// HardSigmoid with HardSwish's constants.
bool HasHardSwishConstants(const ir::Node& n) {
  return Near(n.GetFloat("alpha", 0.2f), 1.0 / 6) && Near(n.GetFloat("beta", 0.5f), 0.5);
}

bool Rewrite(const Match& m, ir::Model& model, const PassContext& ctx) {
  ir::Graph& g = *model.graph;
  ir::Value* x = m.value("x");
  ir::Value* y = m.root()->output(0);
  const ir::Node* hs = m.node("hs");
  const int64_t opset = DefaultOpset(model);
  if (!ctx.backends.empty() && !WouldRunOn(g, ctx, ctx.BackendFor(*hs), "", "HardSwish", opset, {x}, {})) {
    return false;
  }
  const std::string name = hs->name() + "_hard_swish";
  RemoveMatched(g, m);
  ir::Builder(g, opset).AddNode(name, "HardSwish", {x}, {y}, {});
  return true;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    const Pattern x = Any("x");
    const Pattern hard_sigmoid = Op("HardSigmoid", {x}).Where(HasHardSwishConstants).As("hs");
    return std::vector<Rule>{
        {"hard_swish", Commutative("Mul", {hard_sigmoid, x}),
         // HardSwish-14's definition.
         "HardSigmoid(x, alpha = 1/6, beta = 0.5) * x = HardSwish(x)",
         [](const Match& m, ir::Model& model, const PassContext& ctx) { return Rewrite(m, model, ctx); }},
    };
  }();
  return rules;
}

class FuseHardSwish : public Pass {
 public:
  std::string_view name() const override { return "fuse_hard_swish"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "HardSigmoid(x, alpha = 1/6, beta = 0.5) * x (either order, the HardSigmoid read by the Mul alone) => "
           "HardSwish(x), at opset >= 14. Identity: HardSwish's definition; exact up to rounding of alpha x + beta.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (DefaultOpset(model) < 14) return false;
    return ApplyRules(model, ctx, Rules());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseHardSwish() { return std::make_unique<FuseHardSwish>(); }

}  // namespace ferry::passes
