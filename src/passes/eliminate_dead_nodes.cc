// EliminateDeadNodes (level 1): removes nodes none of whose outputs is read or is a graph output — what fusions
// leave behind (the Constant nodes that fed a fused Clip's bounds) and what the model carried unused. Exact:
// ONNX inference ops have no side effects, so an unread result changes nothing.
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

class EliminateDeadNodes : public Pass {
 public:
  std::string_view name() const override { return "eliminate_dead_nodes"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "Removes nodes none of whose outputs is read or is a graph output. Identity: inference ops have no "
           "side effects; exact.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    // Reverse topological order: a node's readers are visited (and maybe removed) before it.
    for (size_t i = g.nodes().size(); i-- > 0;) {
      ir::Node* n = g.nodes()[i].get();
      if (ctx.Frozen(*n)) continue;
      bool dead = true;
      for (const ir::Value* v : n->outputs()) {
        if (v && (!v->consumers().empty() || IsGraphOutput(g, v))) dead = false;
      }
      if (!dead) continue;
      std::vector<ir::Value*> outs(n->outputs().begin(), n->outputs().end());
      g.RemoveNode(n);
      for (ir::Value* v : outs) {
        if (v) g.RemoveValue(v);
      }
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEliminateDeadNodes() { return std::make_unique<EliminateDeadNodes>(); }

}  // namespace ferry::passes
