// FuseSkipLayerNorm (level 2): the transformer residual, Add(a, b) -> LayerNormalization(·, gamma, beta) =>
// ai.ferry::SkipLayerNormalization(X, Skip, gamma, beta) -> (Y [, Sum]).
// Identity: LayerNormalization(a + b) = SkipLayerNormalization(a, b) by its definition (schemas_ferry.cc): the
// kernel adds each row and normalizes it while it is in cache, in float like the two nodes; results differ by
// the summation order of the statistics only. When the sum has other readers (the residual stream continues from
// it, pre-LN transformers) or is a graph output, the fused node writes it as its second output, Sum, under the
// same value. X is the operand of the sum's shape; Skip the other, of the same shape or of X's trailing dims
// (after leading 1s: broadcast over the leading dims).
// Only for float32, an Add of opset 7 on (numpy broadcasting), a LayerNormalization (ONNX's, or ai.ferry's that
// fuse_layer_norm makes below opset 17) with only its Y output, stash_type 1, static normalized dims and gamma and
// beta of exactly that many elements (their shape broadcasting to the normalized one); and only when both nodes
// run on one backend and the fused node would run there too (Ferry's own op: never in portable mode).
#include <memory>
#include <utility>

#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

bool SameDim(const ir::Dim& a, const ir::Dim& b) {
  return (a.is_static() && b.is_static() && a.value == b.value) ||
         (!a.is_static() && !b.is_static() && !a.symbol.empty() && a.symbol == b.symbol);
}

// `skip` broadcasts to `x` over x's leading dims only: skip's dims after its leading 1s are x's trailing dims.
bool BroadcastsOverLeadingDims(const ir::Value* skip, const ir::Value* x) {
  const auto s = KnownDims(skip), d = KnownDims(x);
  if (!s || !d || s->size() > d->size()) return false;
  size_t lead = 0;
  while (lead < s->size() && (*s)[lead].is_static() && (*s)[lead].value == 1) ++lead;
  for (size_t i = lead; i < s->size(); ++i) {
    if (!SameDim((*s)[i], (*d)[d->size() - s->size() + i])) return false;
  }
  return true;
}

// gamma or beta: exactly as many elements as the normalized shape `norm` (static), in its order — a shape that
// broadcasts to `norm` without repeating anything.
bool FitsNormalizedShape(const ir::Value* v, const Shape& norm) {
  const auto dims = KnownDims(v);
  if (!dims || dims->size() > norm.size()) return false;
  const size_t off = norm.size() - dims->size();
  for (size_t i = 0; i < off; ++i) {
    if (norm[i] != 1) return false;
  }
  for (size_t i = 0; i < dims->size(); ++i) {
    if (!(*dims)[i].is_static() || (*dims)[i].value != norm[off + i]) return false;
  }
  return true;
}

// A LayerNormalization SkipLayerNormalization can replace, with its axis (normalized) and epsilon.
bool MatchLayerNorm(const ir::Node& ln, int64_t* axis, float* epsilon, Shape* norm) {
  const bool standard = ln.domain().empty() && ln.opset() >= 17;
  if (ln.op_type() != "LayerNormalization" || !(standard || ln.domain() == schemas::kFerryDomain)) return false;
  if (ln.num_inputs() < 2 || !IsFloatTensor(ln.input(0)) || !IsFloatTensor(ln.input(1)) ||
      !IsFloatTensor(ln.output(0)) || (ln.input(2) && !IsFloatTensor(ln.input(2)))) {
    return false;
  }
  for (size_t i = 1; i < ln.num_outputs(); ++i) {
    if (ln.output(i)) return false;  // Mean / InvStdDev
  }
  const ir::Attribute* a = ln.attr("axis");
  const ir::Attribute* e = ln.attr("epsilon");
  const ir::Attribute* stash = ln.attr("stash_type");
  if ((a && a->type != ir::AttrType::kInt) || (e && e->type != ir::AttrType::kFloat) ||
      (stash && (stash->type != ir::AttrType::kInt || stash->i != 1))) {
    return false;
  }
  const auto dims = KnownDims(ln.input(0));
  if (!dims || dims->empty()) return false;
  const auto rank = static_cast<int64_t>(dims->size());
  *axis = a ? a->i : -1;
  if (*axis < -rank || *axis >= rank) return false;
  if (*axis < 0) *axis += rank;
  *epsilon = e ? e->f : 1e-5f;
  norm->clear();
  for (int64_t d = *axis; d < rank; ++d) {
    if (!(*dims)[static_cast<size_t>(d)].is_static()) return false;
    norm->push_back((*dims)[static_cast<size_t>(d)].value);
  }
  return FitsNormalizedShape(ln.input(1), *norm) && (!ln.input(2) || FitsNormalizedShape(ln.input(2), *norm));
}

class FuseSkipLayerNorm : public Pass {
 public:
  std::string_view name() const override { return "fuse_skip_layer_norm"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Add(a, b) -> LayerNormalization => ai.ferry::SkipLayerNormalization(a, b, gamma, beta), which also "
           "writes the sum when other nodes read it. Identity: its definition, LayerNorm(a + b); differs by "
           "summation order only.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (ctx.backends.empty()) return false;  // Ferry's own op: only where a backend will run it
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> norms;
    for (const auto& n : g.nodes()) {
      if (n->op_type() == "LayerNormalization") norms.push_back(n.get());
    }
    bool changed = false;
    for (ir::Node* ln : norms) changed = Fuse(model, g, ctx, ln) || changed;
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  // Replaces `ln` and the Add before it; false when they do not match or would not run on one backend.
  static bool Fuse(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* ln) {
    int64_t axis = 0;
    float epsilon = 0;
    Shape norm;
    if (!MatchLayerNorm(*ln, &axis, &epsilon, &norm)) return false;
    ir::Value* sum = ln->input(0);
    ir::Node* add = sum->producer();
    if (!add || add->owner() != &g || !add->domain().empty() || add->op_type() != "Add" || add->opset() < 7 ||
        add->num_inputs() != 2 || !IsFloatTensor(add->input(0)) || !IsFloatTensor(add->input(1)) ||
        ln->input(1) == sum || ln->input(2) == sum) {
      return false;
    }
    ir::Value* x = add->input(0);
    ir::Value* skip = add->input(1);
    if (!SameShape(x, sum)) std::swap(x, skip);
    if (!SameShape(x, sum) || !BroadcastsOverLeadingDims(skip, x)) return false;
    const Backend* home = ctx.BackendFor(*ln);
    if (!home || ctx.BackendFor(*add) != home) return false;  // also refuses frozen nodes
    std::vector<ir::Value*> inputs{x, skip, ln->input(1)};
    if (ln->input(2)) inputs.push_back(ln->input(2));
    ir::Attribute eps;
    eps.name = "epsilon";
    eps.type = ir::AttrType::kFloat;
    eps.f = epsilon;
    std::vector<ir::Attribute> attrs{IntAttr("axis", axis), eps};
    if (!WouldRunOn(g, ctx, home, std::string(schemas::kFerryDomain), "SkipLayerNormalization", 1, inputs, attrs)) {
      return false;
    }
    const bool keep_sum = SoleConsumer(g, sum) != ln;  // other readers, a graph output, a subgraph capture
    ir::Value* y = ln->output(0);
    const std::string name = ln->name();
    g.RemoveNode(ln);
    g.RemoveNode(add);
    if (!keep_sum) g.RemoveValue(sum);
    std::vector<ir::Value*> outputs{y};
    if (keep_sum) outputs.push_back(sum);
    AddFerryNode(model, g, name, "SkipLayerNormalization", std::move(inputs), std::move(outputs), std::move(attrs));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseSkipLayerNorm() { return std::make_unique<FuseSkipLayerNorm>(); }

}  // namespace ferry::passes
