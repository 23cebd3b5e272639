// FuseConvActivation (level 2): Conv or FusedConv followed by an activation => FusedConv with `activation`.
// Identity: act(Conv(X, W, B) [+ Z]) evaluated elementwise on the conv's result as it is written (oneDNN eltwise
// post-op); exact up to float re-association of the conv itself. Activations: Relu, LeakyRelu, Clip (constant
// bounds), Sigmoid, Tanh, HardSigmoid, HardSwish, and SiLU written as Mul(Y, Sigmoid(Y)). Only when the conv
// output has no other reader and the fused node runs where the conv would.
#include <limits>
#include <unordered_set>

#include "passes/conv_fusion_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

struct Match {
  std::vector<ir::Node*> absorbed;
  ir::Value* output = nullptr;
  std::string activation;
  std::vector<float> params;
};

// Clip's bounds: attributes before opset 11, constant inputs from 11 on (absent = unbounded).
bool ClipBounds(const ir::Graph& g, const ir::Node& clip, std::vector<float>* params) {
  // Absent bounds are the type's lowest and highest finite values, as in Clip (so Clip maps +-inf to them).
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (clip.opset() < 11) {
    lo = clip.GetFloat("min", lo);
    hi = clip.GetFloat("max", hi);
  } else {
    for (size_t i = 1; i < 3; ++i) {
      const ir::Value* v = clip.input(i);
      if (!v) continue;
      const auto c = ConstantScalar(g, v);
      if (!c) return false;
      (i == 1 ? lo : hi) = *c;
    }
  }
  *params = {lo, hi};
  return true;
}

bool MatchActivation(const ir::Graph& g, ir::Value* y, Match* m) {
  if (y->consumers().size() == 2 && !IsGraphOutput(g, y)) {  // SiLU: Mul(Y, Sigmoid(Y))
    ir::Node* a = y->consumers()[0];
    ir::Node* b = y->consumers()[1];
    if (a->op_type() == "Mul") std::swap(a, b);
    if (a->domain().empty() && a->op_type() == "Sigmoid" && b->domain().empty() && b->op_type() == "Mul" &&
        a->owner() == &g && b->owner() == &g && SoleConsumer(g, a->output(0)) == b && b->num_inputs() == 2 &&
        ((b->input(0) == y && b->input(1) == a->output(0)) || (b->input(1) == y && b->input(0) == a->output(0)))) {
      *m = {{a, b}, b->output(0), "Silu", {}};
      return true;
    }
    return false;
  }
  ir::Node* act = SoleConsumer(g, y);
  if (!act || !act->domain().empty() || act->input(0) != y) return false;
  const std::string& op = act->op_type();
  Match r{{act}, act->output(0), op, {}};
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish") {
  } else if (op == "LeakyRelu") {
    r.params = {act->GetFloat("alpha", 0.01f)};
  } else if (op == "HardSigmoid") {
    r.params = {act->GetFloat("alpha", 0.2f), act->GetFloat("beta", 0.5f)};
  } else if (op == "Clip") {
    if (!ClipBounds(g, *act, &r.params)) return false;
  } else {
    return false;
  }
  *m = std::move(r);
  return true;
}

class FuseConvActivation : public Pass {
 public:
  std::string_view name() const override { return "fuse_conv_activation"; }
  int level() const override { return 2; }

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
      Match m;
      if (!MatchActivation(g, conv->output(0), &m)) continue;
      std::vector<ir::Value*> inputs(conv->inputs().begin(), conv->inputs().end());
      const std::vector<ir::Node*> absorbed = m.absorbed;
      if (ReplaceWithFusedConv(model, g, ctx, conv, absorbed, inputs, m.output,
                               {StringAttr("activation", m.activation), FloatsAttr("activation_params", m.params)})) {
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
