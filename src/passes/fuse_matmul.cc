// FuseMatMul (level 2): MatMul(A, B) -> Add(·, C) [-> activation]  =>  ai.ferry::FusedMatMul(A, B, C) with that
// `activation`; and MatMul(A, B) -> activation  =>  FusedMatMul(A, B).
// Identity: act(MatMul(A, B) + C) with C a constant [N] (N = B's last dim) added to every row of the product — a
// linear layer's bias — evaluated by the fused kernel on each product element as it is written (oneDNN's bias and
// eltwise post-ops); exact up to float re-association of the product itself. A constant C of shape
// [1, ..., 1, N] (of no higher rank than the product, so the sum keeps the product's shape), or one read through
// an Identity (exporters share weights that way), is passed as a new [N] initializer. Activations: those of
// MatchActivation (fusion_util.h), including ai.ferry::Gelu, which fuse_gelu (run before this pass) makes of the
// erf formula. Only for float, an Add of opset 7 on (numpy broadcasting), when each intermediate has no other
// reader, and when the fused node runs where the MatMul would. Also Gemm(A, B, C) {transA 0, alpha 1, beta 1}
// followed by an activation, with B and C constants (FuseGemm below: B transposed once when transB = 1).
#include <memory>

#include "passes/cleanup_util.h"
#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

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
      !DeclaresFloat(add.output(0))) {
    return false;
  }
  ir::Value* c = add.input(0) == y ? add.input(1) : add.input(0);
  const auto b_dims = KnownDims(matmul.input(1));
  const auto y_dims = KnownDims(y);
  if (!c || c == y || !b_dims || b_dims->size() < 2 || !b_dims->back().is_static() || !y_dims) return false;
  const int64_t n = b_dims->back().value;
  const Tensor* t = ConstantTensor(g, c);
  const bool direct = t != nullptr;
  if (const ir::Node* p = c->producer(); !t && IsOp(p, "Identity") && p->owner() == &g) {
    t = ConstantTensor(g, p->input(0));
  }
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
    return "MatMul(A, B) [+ constant bias C of shape [N]] [-> activation], and Gemm(A, B, C) -> activation, => "
           "ai.ferry::FusedMatMul(A, B, C) with that `activation`. Identity: act(A B + C) evaluated on each product "
           "element as it is written (oneDNN bias and eltwise post-ops); exact up to float re-association.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> matmuls, gemms;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "MatMul") && n->num_inputs() == 2 && DeclaresFloat(n->input(0)) && DeclaresFloat(n->input(1)) &&
          DeclaresFloat(n->output(0))) {
        matmuls.push_back(n.get());
      }
      if (IsOp(n.get(), "Gemm") && n->num_inputs() >= 2 && DeclaresFloat(n->input(0)) && DeclaresFloat(n->output(0))) {
        gemms.push_back(n.get());
      }
    }
    bool changed = false;
    for (ir::Node* mm : matmuls) changed = Fuse(model, g, ctx, mm) || changed;
    for (ir::Node* gemm : gemms) changed = FuseGemm(model, g, ctx, gemm) || changed;
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
        fresh = ir::Builder(g).AddValue(base, ir::StaticTensorType(DataType::kFloat, {bias.n}));
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

  // Gemm(A, B, C) {transA = 0, alpha = 1, beta = 1} -> activation  =>  FusedMatMul(A, B', C') with that
  // activation. Identity: Gemm computes A op(B) + C, so act(Gemm(A, B, C)) = act(A B' + C') with B' = op(B) (B
  // itself, or its transpose [K, N] as a new initializer when transB = 1) and C' = C as [N]; exact up to float
  // re-association. Only with B constant, C absent or a constant [N] / [1, N], and an activation to absorb (a
  // Gemm alone already runs packed with its bias on cpu).
  static bool FuseGemm(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* gemm) {
    const ir::Attribute* trans_a = gemm->attr("transA");
    const ir::Attribute* trans_b = gemm->attr("transB");
    const ir::Attribute* alpha = gemm->attr("alpha");
    const ir::Attribute* beta = gemm->attr("beta");
    if ((trans_a && (trans_a->type != ir::AttrType::kInt || trans_a->i != 0)) ||
        (trans_b && trans_b->type != ir::AttrType::kInt) || (alpha && (alpha->type != ir::AttrType::kFloat ||
                                                                       alpha->f != 1.0f)) ||
        (beta && (beta->type != ir::AttrType::kFloat || beta->f != 1.0f)) || gemm->num_outputs() != 1) {
      return false;
    }
    const bool transposed = trans_b && trans_b->i != 0;
    const Tensor* b = ConstantTensor(g, gemm->input(1));
    if (!b || b->dtype() != DataType::kFloat || b->rank() != 2) return false;
    const int64_t k = transposed ? b->dim(1) : b->dim(0), n = transposed ? b->dim(0) : b->dim(1);
    const Tensor* c = gemm->num_inputs() > 2 && gemm->input(2) ? ConstantTensor(g, gemm->input(2)) : nullptr;
    if (gemm->num_inputs() > 2 && gemm->input(2) &&
        (!c || c->dtype() != DataType::kFloat || c->rank() < 1 || c->rank() > 2 || c->shape().back() != n ||
         (c->rank() == 2 && c->dim(0) != 1))) {
      return false;
    }
    ActivationMatch act;
    if (!MatchActivation(g, gemm->output(0), &act)) return false;
    ir::Value* b_value = gemm->input(1);
    ir::Value* old_b = gemm->input(1);
    ir::Value* old_c = gemm->num_inputs() > 2 ? gemm->input(2) : nullptr;
    ir::Value* fresh_b = nullptr;
    if (transposed) {
      fresh_b = ir::Builder(g).AddValue(b_value->name() + "_t", ir::StaticTensorType(DataType::kFloat, {k, n}));
      b_value = fresh_b;
    }
    std::vector<ir::Value*> inputs{gemm->input(0), b_value};
    ir::Value* fresh_c = nullptr;
    if (c) {
      fresh_c = c->rank() == 1 ? nullptr
                               : ir::Builder(g).AddValue(gemm->input(2)->name() + "_bias",
                                                         ir::StaticTensorType(DataType::kFloat, {n}));
      inputs.push_back(fresh_c ? fresh_c : gemm->input(2));
    }
    const bool done = ReplaceWithFused(model, g, ctx, "FusedMatMul", gemm, act.nodes, inputs, act.output,
                                       act.Attributes(), /*keep_anchor_attributes=*/false) != nullptr;
    if (done && fresh_b) {
      Tensor t(DataType::kFloat, {k, n});
      const float* src = b->data<float>();
      float* dst = t.data<float>();
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < n; ++j) dst[i * n + j] = src[j * k + i];
      }
      g.AddInitializer(fresh_b->name(), std::make_shared<const Tensor>(std::move(t)));
    }
    if (done && fresh_c) g.AddInitializer(fresh_c->name(), std::make_shared<const Tensor>(c->Reshaped({n})));
    if (done) RemoveUnreadInitializers(g, {old_b, old_c});
    for (ir::Value* v : {fresh_b, fresh_c}) {
      if (v && !done) g.RemoveValue(v);
    }
    return done;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseMatMul() { return std::make_unique<FuseMatMul>(); }

}  // namespace ferry::passes
