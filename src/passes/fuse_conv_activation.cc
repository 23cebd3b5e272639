// FuseConvActivation (level 2): Conv or FusedConv followed by an activation => FusedConv with `activation`.
// Identity: act(Conv(X, W, B) [+ Z]) evaluated elementwise on the conv's result as it is written (oneDNN eltwise
// post-op); exact up to float re-association of the conv itself. Activations: Relu, LeakyRelu, Clip (constant
// bounds), Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu (approximate "none"), and SiLU written as
// Mul(Y, Sigmoid(Y)) (MatchActivation, fusion_util.h). Only when the conv output has no other reader and the fused
// node runs where the conv would.
#include <unordered_set>

#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

class FuseConvActivation : public Pass {
 public:
  std::string_view name() const override { return "fuse_conv_activation"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Conv or FusedConv followed by Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh, HardSigmoid, "
           "HardSwish, Gelu or SiLU => FusedConv with that `activation`. Identity: act(conv) applied elementwise"
           " to each conv result as it is written; exact up to float re-association of the conv.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    std::unordered_set<const ir::Node*> gone;
    std::vector<ir::Node*> convs;
    for (const auto& n : g.nodes()) {
      if (IsFusableConv(*n, true)) convs.push_back(n.get());
    }
    for (ir::Node* conv : convs) {
      if (gone.count(conv) || !conv->output(0)) continue;
      ActivationMatch m;
      if (!MatchActivation(g, conv->output(0), &m)) continue;
      std::vector<ir::Value*> inputs(conv->inputs().begin(), conv->inputs().end());
      const std::vector<ir::Node*> absorbed = m.nodes;
      if (ReplaceWithFused(model, g, ctx, "FusedConv", conv, absorbed, inputs, m.output, m.Attributes())) {
        gone.insert(conv);
        for (ir::Node* n : absorbed) gone.insert(n);
        changed = true;
      }
    }
    if (changed) g.TopologicalSort();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseConvActivation() { return std::make_unique<FuseConvActivation>(); }

}  // namespace ferry::passes
