// FuseGelu (level 2): the erf formula of GELU, as exporters write it, => ai.ferry::Gelu(x) (approximate "none").
// Identity: x * 0.5 * (1 + erf(x / sqrt(2))) = Gelu(x) by definition; exact up to float rounding of the
// intermediate products (the fused kernel evaluates the same formula without storing them).
// Matched forms (each intermediate read only by the next node, constants within 1e-6 relative):
//   s = Div(x, sqrt(2)) or Mul(x, 1/sqrt(2));  e = Erf(s);  a = Add(e, 1)
//   then Mul(Mul(x, a), 0.5)  or  Mul(Mul(x, 0.5), a)  (operands in either order)
#include <cmath>
#include <unordered_set>

#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

bool Near(std::optional<float> v, double want) {
  return v && std::fabs(static_cast<double>(*v) - want) <= 1e-6 * std::fabs(want);
}

bool IsOp(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

// The operand of binary `n` that is not `v` (nullptr when `v` is not an operand or both are `v`).
ir::Value* Other(const ir::Node& n, const ir::Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  if (n.input(0) == v && n.input(1) != v) return n.input(1);
  if (n.input(1) == v && n.input(0) != v) return n.input(0);
  return nullptr;
}

struct GeluMatch {
  ir::Value* x = nullptr;
  std::vector<ir::Node*> nodes;  // in order; the last one's output is the result
};

bool MatchGelu(const ir::Graph& g, ir::Node* erf, GeluMatch* m) {
  ir::Node* scale = erf->input(0) ? erf->input(0)->producer() : nullptr;
  if (!scale || SoleConsumer(g, scale->output(0)) != erf || scale->num_inputs() != 2) return false;
  ir::Value* x = nullptr;
  if (IsOp(scale, "Div") && Near(ConstantScalar(g, scale->input(1)), std::sqrt(2.0))) {
    x = scale->input(0);
  } else if (IsOp(scale, "Mul")) {
    for (int i = 0; i < 2 && !x; ++i) {
      if (Near(ConstantScalar(g, scale->input(1 - i)), std::sqrt(0.5))) x = scale->input(i);
    }
  }
  if (!x) return false;
  ir::Node* add = SoleConsumer(g, erf->output(0));
  if (!IsOp(add, "Add") || !Near(ConstantScalar(g, Other(*add, erf->output(0))), 1.0)) return false;
  ir::Node* mul1 = SoleConsumer(g, add->output(0));
  if (!IsOp(mul1, "Mul")) return false;
  ir::Value* p = Other(*mul1, add->output(0));
  if (p == x) {  // Mul(Mul(x, a), 0.5)
    ir::Node* mul2 = SoleConsumer(g, mul1->output(0));
    if (!IsOp(mul2, "Mul") || !Near(ConstantScalar(g, Other(*mul2, mul1->output(0))), 0.5)) return false;
    *m = {x, {scale, erf, add, mul1, mul2}};
    return true;
  }
  ir::Node* half = p ? p->producer() : nullptr;  // Mul(Mul(x, 0.5), a)
  if (!IsOp(half, "Mul") || SoleConsumer(g, p) != mul1 || Other(*half, x) == nullptr ||
      !Near(ConstantScalar(g, Other(*half, x)), 0.5)) {
    return false;
  }
  *m = {x, {scale, erf, add, half, mul1}};
  return true;
}

class FuseGelu : public Pass {
 public:
  std::string_view name() const override { return "fuse_gelu"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "The erf formula x * 0.5 * (1 + erf(x / sqrt(2))) in the forms exporters write => ai.ferry::Gelu(x). "
           "Identity: the definition of GELU; exact up to rounding of the intermediate products.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> erfs;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "Erf")) erfs.push_back(n.get());
    }
    std::unordered_set<const ir::Node*> gone;
    bool changed = false;
    for (ir::Node* erf : erfs) {
      GeluMatch m;
      if (gone.count(erf) || !MatchGelu(g, erf, &m)) continue;
      ir::Value* y = m.nodes.back()->output(0);
      if (m.x->type().elem_type != y->type().elem_type) continue;
      const Backend* home = ctx.BackendFor(*erf);
      bool frozen = false;
      for (const ir::Node* n : m.nodes) frozen = frozen || ctx.Frozen(*n) || gone.count(n);
      const std::vector<ir::Attribute> attrs{StringAttr("approximate", "none")};
      if (frozen || !WouldRunOn(g, ctx, home, std::string(schemas::kFerryDomain), "Gelu", 1, {m.x}, attrs)) continue;
      const std::string name = erf->name() + "_gelu";
      std::vector<ir::Value*> intermediates;
      for (ir::Node* n : m.nodes) {
        if (n != m.nodes.back()) intermediates.push_back(n->output(0));
        gone.insert(n);
        g.RemoveNode(n);
      }
      for (ir::Value* v : intermediates) g.RemoveValue(v);
      AddFerryNode(model, g, name, "Gelu", {m.x}, {y}, attrs);
      changed = true;
    }
    if (changed) g.TopologicalSort();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseGelu() { return std::make_unique<FuseGelu>(); }

}  // namespace ferry::passes
