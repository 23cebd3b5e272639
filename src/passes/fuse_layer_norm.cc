// FuseLayerNorm (level 2): the decomposed LayerNormalization and RMSNormalization that exporters write for opsets
// without the op (PyTorch's nn.LayerNorm at opset < 17, Hugging Face's hand-written norms) => one node.
// Identities: with m = mean(x) and v = mean((x - m)^2) over the trailing k dims,
//   (x - m) / sqrt(v + eps) * gamma + beta = LayerNormalization(x, gamma, beta) {axis = -k, epsilon = eps}
//   x / sqrt(mean(x^2) + eps) * gamma = RMSNormalization(x, gamma) {axis = -k, epsilon = eps}
// by the ops' definitions; the fused kernels compute the same two reductions, in float like the decomposed graph
// (stash_type 1; only float32 patterns are matched), so results differ by summation order only.
// Matched forms (the rules below; each intermediate read only inside the match, the difference d = x - m by the
// square and the division; constants via ir::ConstantFloatScalar):
//   m = ReduceMean(x); d = Sub(x, m); q = Pow(d, 2) or Mul(d, d)      [RMS: q = Pow(x, 2) or Mul(x, x), d = x]
//   v = ReduceMean(q); s = Sqrt(Add(v, eps)); n = Div(d, s) or Mul(d, Reciprocal(s)) or Mul(d, Div(1, s))
//   [Cast(n, to = float) of a float n: an exporter's no-op]; [Mul(·, gamma)]; [Add(·, beta)] (LayerNorm only)
// The longest form is tried first (ApplyRules starts from the last node); a gamma or beta that does not fit (see
// below) stays a node of its own after the fused one; a frozen node anywhere in the longest form leaves it all.
// Both ReduceMeans average over the same trailing axes (attribute before opset 18, constant input from 18;
// keepdims = 1), the normalized dims are static, and gamma and beta are float constants of the normalized shape
// (or with leading 1s, up to x's rank: passed reshaped as new initializers); a missing gamma becomes ones.
// Which op: the standard one where the model's default-domain opset has it (LayerNormalization >= 17,
// RMSNormalization >= 23) — also in portable mode (no backends) — else Ferry's ai.ferry op of the same semantics
// (only with backends). With backends, the fused node must run on the highest-priority backend that ran any of
// the replaced nodes (so a pattern whose ReduceMean ran on ref while its Sub ran on cpu moves to cpu, never back).
#include <algorithm>
#include <memory>
#include <optional>

#include "passes/pass_list.h"
#include "passes/pattern.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

int64_t DefaultOpset(const ir::Model& model) {
  const auto it = model.opsets.find("");
  return it == model.opsets.end() ? 0 : it->second;
}

// The number k of trailing dims a ReduceMean averages over (axes -k..-1, or rank-k..rank-1 for a known rank, each
// once, keepdims = 1), else 0.
int64_t TrailingAxes(const ir::Graph& g, const ir::Node& rm, std::optional<int64_t> rank) {
  if (const ir::Attribute* keep = rm.attr("keepdims"); keep && (keep->type != ir::AttrType::kInt || keep->i != 1)) {
    return 0;
  }
  std::vector<int64_t> axes;
  if (rm.opset() < 18) {
    const ir::Attribute* a = rm.attr("axes");
    if (!a || a->type != ir::AttrType::kInts) return 0;
    axes = a->ints;
  } else {
    const Tensor* t = ConstantTensor(g, rm.input(1));
    if (!t || t->dtype() != DataType::kInt64 || t->rank() > 1) return 0;
    axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
  }
  const auto k = static_cast<int64_t>(axes.size());
  if (k == 0 || (rank && k > *rank)) return 0;
  std::vector<bool> seen(static_cast<size_t>(k), false);
  for (int64_t a : axes) {
    if (a >= 0) {
      if (!rank) return 0;
      a -= *rank;
    }
    if (a < -k || a >= 0 || seen[static_cast<size_t>(a + k)]) return 0;
    seen[static_cast<size_t>(a + k)] = true;
  }
  return k;
}

// A float constant usable as gamma or beta: the normalized shape, or that with leading 1s up to x's rank.
const Tensor* FitParam(const ir::Graph& g, const ir::Value* v, const Shape& norm, size_t rank) {
  const Tensor* t = ConstantTensor(g, v);
  if (!t || t->dtype() != DataType::kFloat || t->shape().size() < norm.size() || t->shape().size() > rank) {
    return nullptr;
  }
  const size_t lead = t->shape().size() - norm.size();
  for (size_t i = 0; i < t->shape().size(); ++i) {
    if (t->shape()[i] != (i < lead ? 1 : norm[i - lead])) return nullptr;
  }
  return t;
}

// The static normalized shape (x's last k dims), else nullopt; `rank` gets x's rank.
std::optional<Shape> NormShape(const ir::Value* x, int64_t k, size_t* rank) {
  const auto dims = KnownDims(x);
  if (!dims || static_cast<int64_t>(dims->size()) < k) return std::nullopt;
  Shape s;
  for (size_t i = dims->size() - static_cast<size_t>(k); i < dims->size(); ++i) {
    if (!(*dims)[i].is_static()) return std::nullopt;
    s.push_back((*dims)[i].value);
  }
  *rank = dims->size();
  return s;
}

// The highest-priority backend (earliest in ctx.backends) any of `nodes` runs on; nullptr when one of them has
// none (frozen, or no backend supports it).
const Backend* HighestBackend(const PassContext& ctx, const std::vector<ir::Node*>& nodes) {
  size_t best = ctx.backends.size();
  for (const ir::Node* n : nodes) {
    const Backend* b = ctx.BackendFor(*n);
    if (!b) return nullptr;
    best = std::min(best, static_cast<size_t>(std::find(ctx.backends.begin(), ctx.backends.end(), b) -
                                              ctx.backends.begin()));
  }
  return best < ctx.backends.size() ? ctx.backends[best] : nullptr;
}

// Replaces a match of the LayerNorm (or, `rms`, RMSNorm) rule: checks what the pattern cannot (the reductions'
// axes, static normalized dims, float x, eps, gamma and beta shapes, where the new node runs), then rewrites.
bool Rewrite(const Match& m, ir::Model& model, const PassContext& ctx, bool rms) {
  ir::Graph& g = *model.graph;
  const int64_t opset = DefaultOpset(model);
  const std::string op = rms ? "RMSNormalization" : "LayerNormalization";
  const bool standard = opset >= (rms ? 23 : 17);
  if (!standard && ctx.backends.empty()) return false;  // ai.ferry ops only where a backend will run them
  ir::Value* x = m.value("x");
  const ir::Node* first = rms ? m.node("square") : m.node("mean");  // names the new node
  const auto dims = KnownDims(x);
  const int64_t k = TrailingAxes(g, rms ? *m.node("var") : *first,
                                 dims ? std::optional<int64_t>(dims->size()) : std::nullopt);
  size_t rank = 0;
  const auto norm = k && IsFloatTensor(x) ? NormShape(x, k, &rank) : std::nullopt;
  const auto eps = ir::ConstantFloatScalar(g, m.value("eps"));
  if (!norm || !eps || (!rms && TrailingAxes(g, *m.node("var"), static_cast<int64_t>(rank)) != k)) return false;
  ir::Value* gamma = m.value("gamma");
  ir::Value* beta = m.value("beta");
  const Tensor* gamma_t = gamma ? FitParam(g, gamma, *norm, rank) : nullptr;
  const Tensor* beta_t = beta ? FitParam(g, beta, *norm, rank) : nullptr;
  if ((gamma && !gamma_t) || (beta && !beta_t)) return false;
  // gamma and beta as the fused node reads them: the constant's own value when it has the normalized shape, else a
  // new initializer of that shape (typed now, given its tensor only if the rewrite happens); no gamma: ones.
  std::vector<std::pair<ir::Value*, Tensor>> fresh;
  auto param = [&](ir::Value* v, const Tensor* t, const char* suffix) {
    if (t && t->shape() == *norm) return v;
    Tensor value = t ? t->Reshaped(*norm) : Tensor(DataType::kFloat, *norm);
    if (!t) std::fill(value.data<float>(), value.data<float>() + value.size(), 1.0f);
    fresh.emplace_back(ir::Builder(g).AddValue(x->name() + suffix, ir::StaticTensorType(DataType::kFloat, *norm)),
                       std::move(value));
    return fresh.back().first;
  };
  std::vector<ir::Value*> inputs{x, param(gamma, gamma_t, rms ? "_rms_scale" : "_ln_scale")};
  if (beta) inputs.push_back(param(beta, beta_t, "_ln_bias"));
  const std::vector<ir::Attribute> attrs{IntAttr("axis", -k), FloatAttr("epsilon", static_cast<float>(*eps))};
  const std::string domain = standard ? "" : std::string(schemas::kFerryDomain);
  const int64_t node_opset = standard ? opset : 1;
  if (!ctx.backends.empty() &&
      !WouldRunOn(g, ctx, HighestBackend(ctx, m.nodes()), domain, op, node_opset, inputs, attrs)) {
    for (auto& [v, t] : fresh) g.RemoveValue(v);
    return false;
  }
  ir::Value* y = m.root()->output(0);
  const std::string name = first->name() + (rms ? "_rms_norm" : "_layer_norm");
  RemoveMatched(g, m);
  for (auto& [v, t] : fresh) g.AddInitializer(v->name(), std::make_shared<const Tensor>(std::move(t)));
  if (standard) {
    ir::Builder(g, opset).AddNode(name, op, inputs, {y}, attrs);
  } else {
    AddFerryNode(model, g, name, op, inputs, {y}, attrs);
  }
  return true;
}

// num / sqrt(mean(sq) + eps), as Div(num, s), Mul(num, Reciprocal(s)) or Mul(num, Div(1, s)); then the optional
// affine tail: a no-op Cast to float, Mul by gamma, Add of beta (`bias`).
Pattern Normalized(const Pattern& num, const Pattern& sq, bool bias) {
  const Pattern var = Op("ReduceMean", {sq, Optional(Const())}).As("var");
  const Pattern s = Op("Sqrt", {Commutative("Add", {var, Const("eps")})});
  const Pattern n = OneOf({Op("Div", {num, s}),
                           Commutative("Mul", {num, OneOf({Op("Reciprocal", {s}), Op("Div", {Scalar(1), s})})})});
  const Pattern cast = Op("Cast", {n}).Where([](const ir::Node& c) {
    const ir::Attribute* to = c.attr("to");
    return to && to->type == ir::AttrType::kInt && to->i == static_cast<int64_t>(DataType::kFloat) &&
           IsFloatTensor(c.input(0));
  });
  const Pattern cast_n = OneOf({cast, n});
  const Pattern scaled = OneOf({Commutative("Mul", {cast_n, Const("gamma")}), cast_n});
  return bias ? OneOf({Commutative("Add", {scaled, Const("beta")}), scaled}) : scaled;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    const Pattern x = Any("x");
    const Pattern d = Op("Sub", {x, Op("ReduceMean", {x, Optional(Const())}).As("mean")}).As("d");
    const Pattern square_x = OneOf({Op("Pow", {x, Scalar(2)}), Op("Mul", {x, x})}).As("square");
    return std::vector<Rule>{
        {"layer_norm", Normalized(d, OneOf({Op("Pow", {d, Scalar(2)}), Op("Mul", {d, d})}), true),
         // LayerNormalization's definition over the trailing axes; the kernel sums in another order.
         "(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta = LayerNormalization(x, gamma, beta)",
         [](const Match& m, ir::Model& model, const PassContext& ctx) { return Rewrite(m, model, ctx, false); }},
        {"rms_norm", Normalized(x, square_x, false),
         // RMSNormalization's definition over the trailing axes; the kernel sums in another order.
         "x / sqrt(mean(x^2) + eps) * gamma = RMSNormalization(x, gamma)",
         [](const Match& m, ir::Model& model, const PassContext& ctx) { return Rewrite(m, model, ctx, true); }},
    };
  }();
  return rules;
}

class FuseLayerNorm : public Pass {
 public:
  std::string_view name() const override { return "fuse_layer_norm"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "The decomposed LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta) "
           "and RMSNorm => LayerNormalization / RMSNormalization (ai.ferry below opsets 17 / 23). Identity: the "
           "ops' definitions over the trailing axes; differs by summation order only.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (DefaultOpset(model) < 7) return false;  // before numpy broadcasting in Sub, Div, Mul, Add
    return ApplyRules(model, ctx, Rules());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseLayerNorm() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace ferry::passes
