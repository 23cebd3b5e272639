// FuseLayerNorm (level 2): the decomposed LayerNormalization and RMSNormalization that exporters write for opsets
// without the op (PyTorch's nn.LayerNorm at opset < 17, Hugging Face's hand-written norms) => one node.
// Identities: with m = mean(x) and v = mean((x - m)^2) over the trailing k dims,
//   (x - m) / sqrt(v + eps) * gamma + beta = LayerNormalization(x, gamma, beta) {axis = -k, epsilon = eps}
//   x / sqrt(mean(x^2) + eps) * gamma = RMSNormalization(x, gamma) {axis = -k, epsilon = eps}
// by the ops' definitions; the fused kernels compute the same two reductions, in float like the decomposed graph
// (stash_type 1; only float32 patterns are matched), so results differ by summation order only.
// Matched forms (each intermediate read only by the next node; the difference d = x - m only by the square and
// the division; constants via ConstantScalar):
//   m = ReduceMean(x); d = Sub(x, m); q = Pow(d, 2) or Mul(d, d)      [RMS: q = Pow(x, 2) or Mul(x, x), d = x]
//   v = ReduceMean(q); s = Sqrt(Add(v, eps)); n = Div(d, s) or Mul(d, Reciprocal(s)) or Mul(d, Div(1, s))
//   [Cast(n, to = float) of a float n: an exporter's no-op]; [Mul(·, gamma)]; [Add(·, beta)] (LayerNorm only)
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
#include <unordered_set>

#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

bool IsOp(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

bool IsFloat(const ir::Value* v) { return v && v->type().is_tensor() && v->type().elem_type == DataType::kFloat; }

bool Equals(std::optional<float> c, float want) { return c && *c == want; }

// The operand of binary `n` that is not `v` (nullptr when `v` is not an operand or both are `v`).
ir::Value* Other(const ir::Node& n, const ir::Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  if (n.input(0) == v && n.input(1) != v) return n.input(1);
  if (n.input(1) == v && n.input(0) != v) return n.input(0);
  return nullptr;
}

// The distinct nodes reading `v`, or nothing when `v` is a graph output or read from a subgraph.
std::vector<ir::Node*> Readers(const ir::Graph& g, const ir::Value* v) {
  std::vector<ir::Node*> out;
  if (IsGraphOutput(g, v)) return {};
  for (ir::Node* c : v->consumers()) {
    if (c->owner() != &g) return {};
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

// x^2 as Pow(x, 2) or Mul(x, x): its x, else nullptr.
ir::Value* SquaredValue(const ir::Graph& g, const ir::Node* n) {
  if (IsOp(n, "Pow") && n->num_inputs() == 2 && Equals(ConstantScalar(g, n->input(1)), 2.0f)) return n->input(0);
  if (IsOp(n, "Mul") && n->num_inputs() == 2 && n->input(0) == n->input(1)) return n->input(0);
  return nullptr;
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
    const Tensor* t = ConstantOf(g, rm.input(1));
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

struct Match {
  bool rms = false;
  ir::Value* x = nullptr;
  int64_t k = 0;
  float epsilon = 0;
  std::vector<ir::Node*> nodes;  // every node replaced; the last one writes the result
  // gamma and beta: the constant tensor, and its value when it already has the normalized shape (else the fused
  // node reads a new initializer).
  const Tensor* scale = nullptr;
  ir::Value* scale_value = nullptr;
  const Tensor* bias = nullptr;
  ir::Value* bias_value = nullptr;
  Shape norm_shape;
};

// From the variance ReduceMean: s = Sqrt(Add(v, eps)), then the node(s) dividing `num` by s. Appends the nodes
// after `var` to m.nodes and returns the quotient, else nullptr.
ir::Value* MatchDivision(const ir::Graph& g, ir::Node* var, ir::Value* num, Match* m) {
  ir::Node* add = SoleConsumer(g, var->output(0));
  if (!IsOp(add, "Add")) return nullptr;
  const auto eps = ConstantScalar(g, Other(*add, var->output(0)));
  ir::Node* sqrt = SoleConsumer(g, add->output(0));
  if (!eps || !IsOp(sqrt, "Sqrt")) return nullptr;
  ir::Value* s = sqrt->output(0);
  ir::Node* next = SoleConsumer(g, s);
  m->epsilon = *eps;
  m->nodes.insert(m->nodes.end(), {add, sqrt});
  if (IsOp(next, "Div") && next->num_inputs() == 2 && next->input(0) == num && next->input(1) == s) {
    m->nodes.push_back(next);
    return next->output(0);
  }
  const bool reciprocal = IsOp(next, "Reciprocal") ||
                          (IsOp(next, "Div") && next->num_inputs() == 2 && next->input(1) == s &&
                           Equals(ConstantScalar(g, next->input(0)), 1.0f));
  if (!reciprocal) return nullptr;
  ir::Node* mul = SoleConsumer(g, next->output(0));
  if (!IsOp(mul, "Mul") || Other(*mul, next->output(0)) != num) return nullptr;
  m->nodes.insert(m->nodes.end(), {next, mul});
  return mul->output(0);
}

// A float constant usable as gamma or beta: the normalized shape, or that with leading 1s up to x's rank.
const Tensor* FitParam(const ir::Graph& g, const ir::Value* v, const Shape& norm, size_t rank) {
  const Tensor* t = ConstantOf(g, v);
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

// After the quotient n: a no-op Cast to float, Mul by gamma, Add of beta (LayerNorm only), each optional.
void MatchAffine(const ir::Graph& g, ir::Value* n, size_t rank, Match* m) {
  ir::Value* cur = n;
  ir::Node* next = SoleConsumer(g, cur);
  const ir::Attribute* to = IsOp(next, "Cast") ? next->attr("to") : nullptr;
  if (to && to->type == ir::AttrType::kInt && to->i == static_cast<int64_t>(DataType::kFloat) && IsFloat(cur)) {
    m->nodes.push_back(next);
    cur = next->output(0);
    next = SoleConsumer(g, cur);
  }
  if (IsOp(next, "Mul")) {
    ir::Value* gamma = Other(*next, cur);
    if (const Tensor* t = gamma ? FitParam(g, gamma, m->norm_shape, rank) : nullptr) {
      m->scale = t;
      m->scale_value = t->shape() == m->norm_shape ? gamma : nullptr;
      m->nodes.push_back(next);
      cur = next->output(0);
      next = SoleConsumer(g, cur);
    }
  }
  if (!m->rms && IsOp(next, "Add")) {
    ir::Value* beta = Other(*next, cur);
    if (const Tensor* t = beta ? FitParam(g, beta, m->norm_shape, rank) : nullptr) {
      m->bias = t;
      m->bias_value = t->shape() == m->norm_shape ? beta : nullptr;
      m->nodes.push_back(next);
    }
  }
}

// LayerNorm from the mean's ReduceMean `mean`.
bool MatchLayerNorm(const ir::Graph& g, ir::Node* mean, Match* m) {
  ir::Value* x = mean->input(0);
  size_t rank = 0;
  ir::Node* sub = SoleConsumer(g, mean->output(0));
  if (!IsFloat(x) || !IsOp(sub, "Sub") || sub->num_inputs() != 2 || sub->input(0) != x ||
      sub->input(1) != mean->output(0)) {
    return false;
  }
  const auto dims = KnownDims(x);
  m->k = TrailingAxes(g, *mean, dims ? std::optional<int64_t>(dims->size()) : std::nullopt);
  const auto norm = m->k ? NormShape(x, m->k, &rank) : std::nullopt;
  if (!norm) return false;
  m->norm_shape = *norm;
  ir::Value* d = sub->output(0);
  const std::vector<ir::Node*> readers = Readers(g, d);
  if (readers.size() != 2) return false;
  ir::Node* sq = SquaredValue(g, readers[0]) == d ? readers[0] : readers[1];
  ir::Node* divider = sq == readers[0] ? readers[1] : readers[0];
  ir::Node* var = SoleConsumer(g, sq->output(0));
  if (SquaredValue(g, sq) != d || !IsOp(var, "ReduceMean") || var->input(0) != sq->output(0) ||
      TrailingAxes(g, *var, static_cast<int64_t>(rank)) != m->k) {
    return false;
  }
  m->x = x;
  m->nodes = {mean, sub, sq, var};
  ir::Value* n = MatchDivision(g, var, d, m);
  // The division's first node must be d's other reader.
  if (!n || std::find(m->nodes.begin(), m->nodes.end(), divider) == m->nodes.end()) return false;
  MatchAffine(g, n, rank, m);
  return true;
}

// RMSNorm from the ReduceMean `var` of a square.
bool MatchRmsNorm(const ir::Graph& g, ir::Node* var, Match* m) {
  ir::Node* sq = var->input(0) ? var->input(0)->producer() : nullptr;
  ir::Value* x = sq ? SquaredValue(g, sq) : nullptr;
  size_t rank = 0;
  if (!IsFloat(x) || SoleConsumer(g, sq->output(0)) != var) return false;
  const auto dims = KnownDims(x);
  m->k = TrailingAxes(g, *var, dims ? std::optional<int64_t>(dims->size()) : std::nullopt);
  const auto norm = m->k ? NormShape(x, m->k, &rank) : std::nullopt;
  if (!norm) return false;
  m->rms = true;
  m->norm_shape = *norm;
  m->x = x;
  m->nodes = {sq, var};
  ir::Value* n = MatchDivision(g, var, x, m);
  if (!n) return false;
  MatchAffine(g, n, rank, m);
  return true;
}

ir::Attribute FloatAttr(std::string name, float v) {
  ir::Attribute a;
  a.name = std::move(name);
  a.type = ir::AttrType::kFloat;
  a.f = v;
  return a;
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
    ir::Graph& g = *model.graph;
    const auto it = model.opsets.find("");
    const int64_t opset = it == model.opsets.end() ? 0 : it->second;
    if (opset < 7) return false;  // before numpy broadcasting in Sub, Div, Mul, Add
    std::vector<ir::Node*> reductions;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "ReduceMean")) reductions.push_back(n.get());
    }
    std::unordered_set<const ir::Node*> gone;
    bool changed = false;
    for (ir::Node* rm : reductions) {
      if (gone.count(rm)) continue;  // replaced (and freed) by an earlier match; matches only walk live nodes
      Match m;
      if (!MatchLayerNorm(g, rm, &m)) {
        m = Match();
        if (!MatchRmsNorm(g, rm, &m)) continue;
      }
      if (Rewrite(model, g, ctx, opset, m)) {
        gone.insert(m.nodes.begin(), m.nodes.end());
        changed = true;
      }
    }
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  static bool Rewrite(ir::Model& model, ir::Graph& g, const PassContext& ctx, int64_t opset, const Match& m) {
    const std::string op = m.rms ? "RMSNormalization" : "LayerNormalization";
    const bool standard = opset >= (m.rms ? 23 : 17);
    if (!standard && ctx.backends.empty()) return false;  // ai.ferry ops only where a backend will run them
    for (const ir::Node* n : m.nodes) {
      if (ctx.Frozen(*n)) return false;
    }
    // gamma and beta as the fused node reads them: the constant's own value, or a new [normalized shape]
    // initializer (typed now, given its tensor only if the rewrite happens).
    std::vector<std::pair<ir::Value*, Tensor>> fresh;
    auto param = [&](const Tensor* t, ir::Value* v, const char* suffix) -> ir::Value* {
      if (v) return v;
      ir::Value* nv = g.AddValue(UniqueValueName(g, m.x->name() + suffix),
                                 FloatTensorType(m.norm_shape));
      if (t) {
        fresh.emplace_back(nv, t->Reshaped(m.norm_shape));
      } else {  // no gamma: ones
        Tensor ones(DataType::kFloat, m.norm_shape);
        std::fill(ones.data<float>(), ones.data<float>() + ones.size(), 1.0f);
        fresh.emplace_back(nv, std::move(ones));
      }
      return nv;
    };
    std::vector<ir::Value*> inputs{m.x, param(m.scale, m.scale_value, m.rms ? "_rms_scale" : "_ln_scale")};
    if (m.bias) inputs.push_back(param(m.bias, m.bias_value, "_ln_bias"));
    const std::vector<ir::Attribute> attrs{IntAttr("axis", -m.k), FloatAttr("epsilon", m.epsilon)};
    const std::string domain = standard ? "" : std::string(schemas::kFerryDomain);
    const int64_t node_opset = standard ? opset : 1;
    if (!ctx.backends.empty() &&
        !WouldRunOn(g, ctx, HighestBackend(ctx, m.nodes), domain, op, node_opset, inputs, attrs)) {
      for (auto& [v, t] : fresh) g.RemoveValue(v);
      return false;
    }
    ir::Value* y = m.nodes.back()->output(0);
    const std::string name = m.nodes.front()->name() + (m.rms ? "_rms_norm" : "_layer_norm");
    std::vector<ir::Value*> intermediates;
    for (ir::Node* n : m.nodes) {
      if (n != m.nodes.back()) intermediates.push_back(n->output(0));
      g.RemoveNode(n);
    }
    for (ir::Value* v : intermediates) g.RemoveValue(v);
    for (auto& [v, t] : fresh) g.AddInitializer(v->name(), std::make_shared<const Tensor>(std::move(t)));
    if (standard) {
      g.AddNode(UniqueNodeName(g, name), op, "", inputs, {y}, attrs)->set_opset(opset);
    } else {
      AddFerryNode(model, g, name, op, inputs, {y}, attrs);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseLayerNorm() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace ferry::passes
