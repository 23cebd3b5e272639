// FuseMatMul (level 2): MatMul(A, B) -> Add(·, C) [-> activation]  =>  ai.ferry::FusedMatMul(A, B, C) with that
// `activation`; and MatMul(A, B) -> activation  =>  FusedMatMul(A, B).
// Identity: act(MatMul(A, B) + C) with C a constant [N] (N = B's last dim) added to every row of the product — a
// linear layer's bias — evaluated by the fused kernel on each product element as it is written (oneDNN's bias and
// eltwise post-ops); exact up to float re-association of the product itself. A constant C of shape
// [1, ..., 1, N] (of no higher rank than the product, so the sum keeps the product's shape), or one read through
// an Identity (exporters share weights that way), is passed as a new [N] initializer. Activations: those of
// MatchActivation (fusion_util.h), including ai.ferry::Gelu, which fuse_gelu (run before this pass) makes of the
// erf formula. Only for float, an Add of opset 7 on (numpy broadcasting), when each intermediate has no other
// reader, and when the fused node runs where the MatMul would.
#include <memory>

#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

bool IsOp(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

bool IsFloat(const ir::Value* v) { return v && v->type().elem_type == DataType::kFloat; }

// The bias an Add after a MatMul adds: the constant tensor, and the value holding it when that is already [N].
struct Bias {
  const Tensor* tensor = nullptr;
  ir::Value* value = nullptr;  // null: the fused node reads a new [N] initializer
  int64_t n = 0;
};

bool MatchBias(const ir::Graph& g, const ir::Node& matmul, const ir::Node& add, Bias* bias) {
  ir::Value* y = matmul.output(0);
  // Add before opset 7 broadcasts along its `axis` attribute, not numpy-style: left alone.
  if (add.opset() < 7 || add.num_inputs() != 2 || (add.input(0) != y && add.input(1) != y) ||
      !IsFloat(add.output(0))) {
    return false;
  }
  ir::Value* c = add.input(0) == y ? add.input(1) : add.input(0);
  const auto b_dims = KnownDims(matmul.input(1));
  const auto y_dims = KnownDims(y);
  if (!c || c == y || !b_dims || b_dims->size() < 2 || !b_dims->back().is_static() || !y_dims) return false;
  const int64_t n = b_dims->back().value;
  const Tensor* t = ConstantOf(g, c);
  const bool direct = t != nullptr;
  if (const ir::Node* p = c->producer(); !t && IsOp(p, "Identity") && p->owner() == &g) t = ConstantOf(g, p->input(0));
  if (!t || t->dtype() != DataType::kFloat || t->rank() < 1 || static_cast<size_t>(t->rank()) > y_dims->size() ||
      t->shape().back() != n) {
    return false;
  }
  for (int64_t i = 0; i + 1 < t->rank(); ++i) {
    if (t->dim(i) != 1) return false;
  }
  *bias = {t, direct && t->rank() == 1 ? c : nullptr, n};
  return true;
}

class FuseMatMul : public Pass {
 public:
  std::string_view name() const override { return "fuse_matmul"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "MatMul(A, B) [+ constant bias C of shape [N]] [-> activation] => ai.ferry::FusedMatMul(A, B, C) with"
           " that `activation`. Identity: act(A B + C) evaluated on each product element as it is written "
           "(oneDNN bias and eltwise post-ops); exact up to float re-association.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> matmuls;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "MatMul") && n->num_inputs() == 2 && IsFloat(n->input(0)) && IsFloat(n->input(1)) &&
          IsFloat(n->output(0))) {
        matmuls.push_back(n.get());
      }
    }
    bool changed = false;
    for (ir::Node* mm : matmuls) changed = Fuse(model, g, ctx, mm) || changed;
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  // Fuses the Add and / or activation after `mm`; false when there is none or the fused node would not run there.
  static bool Fuse(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* mm) {
    std::vector<ir::Node*> absorbed;
    std::vector<ir::Value*> inputs{mm->input(0), mm->input(1)};
    ir::Value* out = mm->output(0);
    Bias bias;
    ir::Node* add = SoleConsumer(g, out);
    ir::Value* fresh = nullptr;  // the new [N] initializer's value, typed now, given its tensor on success
    if (IsOp(add, "Add") && MatchBias(g, *mm, *add, &bias)) {
      if (!bias.value) {
        const std::string base = add->input(add->input(0) == out ? 1 : 0)->name() + "_bias";
        fresh = g.AddValue(UniqueValueName(g, base), FloatTensorType({bias.n}));
      }
      inputs.push_back(bias.value ? bias.value : fresh);
      absorbed.push_back(add);
      out = add->output(0);
    }
    ActivationMatch act;
    const bool has_act = MatchActivation(g, out, &act);
    bool done = false;
    if (has_act) {
      std::vector<ir::Node*> all = absorbed;
      all.insert(all.end(), act.nodes.begin(), act.nodes.end());
      done = ReplaceWithFused(model, g, ctx, "FusedMatMul", mm, all, inputs, act.output, act.Attributes()) != nullptr;
    }
    if (!done && !absorbed.empty()) {  // the bias alone (the activation, if any, stays a node of its own)
      done = ReplaceWithFused(model, g, ctx, "FusedMatMul", mm, absorbed, inputs, out, {}) != nullptr;
    }
    if (fresh && done) g.AddInitializer(fresh->name(), std::make_shared<const Tensor>(bias.tensor->Reshaped({bias.n})));
    if (fresh && !done) g.RemoveValue(fresh);
    return done;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseMatMul() { return std::make_unique<FuseMatMul>(); }

}  // namespace ferry::passes
