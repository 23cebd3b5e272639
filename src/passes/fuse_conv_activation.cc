// FuseConvActivation (level 2): Conv or FusedConv followed by an activation => FusedConv with `activation`.
// Identity: act(Conv(X, W, B) [+ Z]) evaluated elementwise on the conv's result as it is written (oneDNN eltwise
// post-op); exact up to float re-association of the conv itself. Activations: Relu, LeakyRelu, Clip (constant
// bounds), Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu (approximate "none" or "tanh"), Mish (the op, or
// Mul(Y, Tanh(Softplus(Y))) as YOLOv4-style models are exported), and SiLU written as Mul(Y, Sigmoid(Y))
// (ActivationPattern, fusion_util.h). Only when the conv output has no other reader and the fused node runs where
// the conv would.
#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/pattern.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    const Pattern conv = OneOf({Op("Conv"), Op("FusedConv").Domain(std::string(schemas::kFerryDomain))})
                             .Where([](const ir::Node& n) { return IsFusableConv(n, true); })
                             .As("conv");
    return std::vector<Rule>{{
        "conv_activation",
        ActivationPattern(conv),
        // act applied by the conv kernel to each result as it is written equals act applied afterwards.
        "act(Conv(X, W, B) [+ Z]) = FusedConv(X, W, B [, Z]) {activation = act}",
        [](const Match& m, ir::Model& model, const PassContext& ctx) {
          const auto act = ActivationOf(*model.graph, m);
          ir::Node* c = m.node("conv");
          if (!act) return false;
          std::vector<ir::Value*> inputs(c->inputs().begin(), c->inputs().end());
          return ReplaceWithFused(model, *model.graph, ctx, "FusedConv", c, act->nodes, std::move(inputs),
                                  act->output, act->Attributes()) != nullptr;
        },
    }};
  }();
  return rules;
}

class FuseConvActivation : public Pass {
 public:
  std::string_view name() const override { return "fuse_conv_activation"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Conv or FusedConv followed by Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh, HardSigmoid, "
           "HardSwish, Gelu, Mish (or x * tanh(softplus(x))) or SiLU => FusedConv with that `activation`. "
           "Identity: act(conv) applied elementwise to each conv result as it is written; exact up to float "
           "re-association of the conv.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override { return ApplyRules(model, ctx, Rules()); }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseConvActivation() { return std::make_unique<FuseConvActivation>(); }

}  // namespace ferry::passes
