// FuseConvAdd (level 2): Conv(X, W, B) -> Add(·, Z)  =>  ai.ferry::FusedConv(X, W, B, Z).
// Identity: Conv(X, W, B) + Z, computed by the fused kernel as one accumulation into a buffer holding Z (oneDNN's
// sum post-op); exact up to float re-association. Only when Z provably has the conv output's shape (no broadcast),
// the conv output has no other reader, and the fused node runs where the Conv would. A residual Add whose both
// inputs are convolutions absorbs into the later one, so the other is computed first.
#include <unordered_set>

#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

class FuseConvAdd : public Pass {
 public:
  std::string_view name() const override { return "fuse_conv_add"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Conv(X, W, B) -> Add(., Z) => ai.ferry::FusedConv(X, W, B, Z), when Z has the conv output's shape. "
           "Identity: Conv(X, W, B) + Z accumulated into a buffer holding Z (oneDNN sum post-op); exact up to "
           "float re-association.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    std::unordered_set<const ir::Node*> gone;
    std::vector<ir::Node*> adds;
    for (const auto& n : g.nodes()) {
      if (n->domain().empty() && n->op_type() == "Add" && n->num_inputs() == 2) adds.push_back(n.get());
    }
    for (ir::Node* add : adds) {
      if (gone.count(add)) continue;
      ir::Node* conv = PickConv(g, *add);
      if (!conv) continue;
      ir::Value* y = conv->output(0);
      ir::Value* z = add->input(0) == y ? add->input(1) : add->input(0);
      std::vector<ir::Value*> inputs{conv->input(0), conv->input(1), conv->input(2), z};
      if (ReplaceWithFused(model, g, ctx, "FusedConv", conv, {add}, inputs, add->output(0), {})) {
        gone.insert(add);
        gone.insert(conv);
        changed = true;
      }
    }
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  // The convolution whose output the Add absorbs, or nullptr.
  static ir::Node* PickConv(const ir::Graph& g, const ir::Node& add) {
    ir::Node* best = nullptr;
    size_t best_pos = 0;
    for (size_t i = 0; i < 2; ++i) {
      ir::Value* y = add.input(i);
      ir::Value* z = add.input(1 - i);
      if (!y || !z || y == z) continue;
      ir::Node* conv = y->producer();
      if (!conv || conv->owner() != &g || SoleConsumer(g, y) != &add || !IsFusableConv(*conv, false)) continue;
      if (!SameShape(y, z) || !SameShape(y, add.output(0))) continue;
      if (!DeclaresFloat(z)) continue;
      const size_t pos = Position(g, conv);
      if (!best || pos > best_pos) {
        best = conv;
        best_pos = pos;
      }
    }
    return best;
  }

  static size_t Position(const ir::Graph& g, const ir::Node* n) {
    for (size_t i = 0; i < g.nodes().size(); ++i) {
      if (g.nodes()[i].get() == n) return i;
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseConvAdd() { return std::make_unique<FuseConvAdd>(); }

}  // namespace ferry::passes
