// FuseGelu (level 2): the two GELU formulas, as exporters write them, => Gelu(x):
//   erf form   x * 0.5 * (1 + erf(x / sqrt(2)))                          => Gelu(x) (approximate "none")
//   tanh form  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   => Gelu(x, approximate "tanh")
// Identity: the definitions of Gelu-20's two modes; exact up to float rounding of the intermediate products (the
// kernel evaluates the same formula without storing them).
// Matched forms (each intermediate read only by the next node, constants within 1e-6 relative, operands of Add
// and Mul in either order):
//   erf:   s = Div(x, sqrt(2)) or Mul(x, 1/sqrt(2));  f = Erf(s)
//   tanh:  c = Pow(x, 3) or Mul(x, Mul(x, x));  s = Mul(sqrt(2/pi), Add(x, Mul(0.044715, c)));  f = Tanh(s)
//   then a = Add(f, 1) and Mul(Mul(x, a), 0.5) or Mul(Mul(x, 0.5), a) or Mul(x, Mul(a, 0.5)).
// What it makes: where the model imports ai.onnx opset >= 20, the standard Gelu (also in the portable mode, with
// no target backends); below opset 20, ai.ferry::Gelu (same semantics, any opset), only with target backends. With
// backends either one is made only when it runs on the backend that ran the Erf / Tanh (WouldRunOn).
#include <cmath>
#include <optional>
#include <unordered_set>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kCubeCoefficient = 0.044715;

bool Near(std::optional<float> v, double want) {
  return v && std::fabs(static_cast<double>(*v) - want) <= 1e-6 * std::fabs(want);
}

bool IsOp(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

// A binary node of op `op` (2 inputs, 1 output).
bool IsBinary(const ir::Node* n, const char* op) { return IsOp(n, op) && n->num_inputs() == 2; }

// The operand of binary `n` that is not `v` (nullptr when `v` is not an operand or both are `v`).
ir::Value* Other(const ir::Node& n, const ir::Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  if (n.input(0) == v && n.input(1) != v) return n.input(1);
  if (n.input(1) == v && n.input(0) != v) return n.input(0);
  return nullptr;
}

// The producer of `v` when `reader` is v's only reader (so the producer may be replaced).
ir::Node* SoleProducer(const ir::Graph& g, const ir::Value* v, const ir::Node* reader) {
  ir::Node* p = v ? v->producer() : nullptr;
  return p && p->owner() == &g && SoleConsumer(g, v) == reader ? p : nullptr;
}

// An integer or float constant scalar (Pow's exponent may be either).
std::optional<double> NumberOf(const ir::Graph& g, const ir::Value* v) {
  const Tensor* t = ConstantOf(g, v);
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return t->data<double>()[0];
    case DataType::kInt32: return t->data<int32_t>()[0];
    case DataType::kInt64: return static_cast<double>(t->data<int64_t>()[0]);
    default: return std::nullopt;
  }
}

struct GeluMatch {
  ir::Value* x = nullptr;
  std::vector<ir::Node*> nodes;  // in order; the last one's output is the result
  std::string approximate;       // "none" or "tanh"
};

// The tail both forms share: a = Add(f, 1), then the product of x, a and 0.5. Appends its nodes.
bool MatchTail(const ir::Graph& g, ir::Value* x, ir::Node* f, GeluMatch* m) {
  ir::Node* add = SoleConsumer(g, f->output(0));
  if (!IsBinary(add, "Add") || !Near(ConstantScalar(g, Other(*add, f->output(0))), 1.0)) return false;
  ir::Value* a = add->output(0);
  ir::Node* mul1 = SoleConsumer(g, a);
  if (!IsBinary(mul1, "Mul")) return false;
  ir::Value* p = Other(*mul1, a);
  if (!p) return false;
  m->nodes.push_back(add);
  if (p == x || Near(ConstantScalar(g, p), 0.5)) {  // Mul(Mul(x, a), 0.5) or Mul(x, Mul(a, 0.5))
    ir::Node* mul2 = SoleConsumer(g, mul1->output(0));
    if (!IsBinary(mul2, "Mul")) return false;
    ir::Value* q = Other(*mul2, mul1->output(0));
    if (p == x ? !Near(ConstantScalar(g, q), 0.5) : q != x) return false;
    m->nodes.insert(m->nodes.end(), {mul1, mul2});
    return true;
  }
  ir::Node* half = SoleProducer(g, p, mul1);  // Mul(Mul(x, 0.5), a)
  if (!IsBinary(half, "Mul") || !Near(ConstantScalar(g, Other(*half, x)), 0.5)) return false;
  m->nodes.insert(m->nodes.end(), {half, mul1});
  return true;
}

bool MatchErf(const ir::Graph& g, ir::Node* erf, GeluMatch* m) {
  ir::Node* scale = SoleProducer(g, erf->input(0), erf);
  if (!scale || scale->num_inputs() != 2) return false;
  ir::Value* x = nullptr;
  if (IsOp(scale, "Div") && Near(ConstantScalar(g, scale->input(1)), std::sqrt(2.0))) {
    x = scale->input(0);
  } else if (IsOp(scale, "Mul")) {
    for (int i = 0; i < 2 && !x; ++i) {
      if (Near(ConstantScalar(g, scale->input(1 - i)), std::sqrt(0.5))) x = scale->input(i);
    }
  }
  if (!x) return false;
  *m = {x, {scale, erf}, "none"};
  return MatchTail(g, x, erf, m);
}

// x^3 read by `reader` alone: Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x). Appends its nodes.
bool MatchCube(const ir::Graph& g, ir::Value* x, ir::Value* c, const ir::Node* reader, std::vector<ir::Node*>* nodes) {
  ir::Node* p = SoleProducer(g, c, reader);
  if (IsBinary(p, "Pow")) {
    const auto e = NumberOf(g, p->input(1));
    if (p->input(0) != x || !e || *e != 3.0) return false;
    nodes->push_back(p);
    return true;
  }
  if (!IsBinary(p, "Mul")) return false;
  ir::Node* sq = SoleProducer(g, Other(*p, x), p);
  if (!IsBinary(sq, "Mul") || sq->input(0) != x || sq->input(1) != x) return false;
  nodes->insert(nodes->end(), {sq, p});
  return true;
}

bool MatchTanh(const ir::Graph& g, ir::Node* tanh, GeluMatch* m) {
  ir::Node* scale = SoleProducer(g, tanh->input(0), tanh);
  if (!IsBinary(scale, "Mul")) return false;
  for (int i = 0; i < 2; ++i) {
    if (!Near(ConstantScalar(g, scale->input(1 - i)), kSqrt2OverPi)) continue;
    ir::Node* sum = SoleProducer(g, scale->input(i), scale);
    if (!IsBinary(sum, "Add")) return false;
    for (int j = 0; j < 2; ++j) {
      ir::Value* x = sum->input(j);
      ir::Node* term = SoleProducer(g, sum->input(1 - j), sum);  // 0.044715 * x^3
      if (!x || !IsBinary(term, "Mul")) continue;
      for (int k = 0; k < 2; ++k) {
        if (!Near(ConstantScalar(g, term->input(1 - k)), kCubeCoefficient)) continue;
        std::vector<ir::Node*> nodes;
        if (!MatchCube(g, x, term->input(k), term, &nodes)) continue;
        nodes.insert(nodes.end(), {term, sum, scale, tanh});
        *m = {x, std::move(nodes), "tanh"};
        if (MatchTail(g, x, tanh, m)) return true;
      }
    }
  }
  return false;
}

class FuseGelu : public Pass {
 public:
  std::string_view name() const override { return "fuse_gelu"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "The formulas x * 0.5 * (1 + erf(x / sqrt(2))) and x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * "
           "x^3))) in the forms exporters write => Gelu(x) (approximate \"none\" / \"tanh\"; ai.ferry::Gelu below "
           "opset 20). Identity: the definitions of GELU; exact up to rounding of the intermediate products.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    const auto it = model.opsets.find("");
    const int64_t opset = it == model.opsets.end() ? 0 : it->second;
    if (opset < 20 && ctx.backends.empty()) return false;  // ai.ferry ops only where a backend will run them
    std::vector<ir::Node*> anchors;
    for (const auto& n : g.nodes()) {
      if ((IsOp(n.get(), "Erf") || IsOp(n.get(), "Tanh")) && n->num_inputs() == 1) anchors.push_back(n.get());
    }
    std::unordered_set<const ir::Node*> gone;
    bool changed = false;
    for (ir::Node* anchor : anchors) {
      if (gone.count(anchor)) continue;  // replaced by an earlier match; matches only walk live nodes
      GeluMatch m;
      if (!(anchor->op_type() == "Erf" ? MatchErf(g, anchor, &m) : MatchTanh(g, anchor, &m))) continue;
      if (Rewrite(model, g, ctx, opset, anchor, m)) {
        gone.insert(m.nodes.begin(), m.nodes.end());
        changed = true;
      }
    }
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  static bool Rewrite(ir::Model& model, ir::Graph& g, const PassContext& ctx, int64_t opset, ir::Node* anchor,
                      const GeluMatch& m) {
    ir::Value* y = m.nodes.back()->output(0);
    if (m.x->type().elem_type != y->type().elem_type) return false;
    for (const ir::Node* n : m.nodes) {
      if (ctx.Frozen(*n)) return false;
    }
    const std::vector<ir::Attribute> attrs{StringAttr("approximate", m.approximate)};
    const std::string ferry(schemas::kFerryDomain);
    // The domain of the new node: "" (standard Gelu-20) or ai.ferry.
    std::optional<std::string> domain;
    if (ctx.backends.empty()) {
      domain = "";  // opset >= 20 (checked by Apply)
    } else {
      const Backend* home = ctx.BackendFor(*anchor);
      if (opset >= 20 && WouldRunOn(g, ctx, home, "", "Gelu", opset, {m.x}, attrs)) {
        domain = "";
      } else if (WouldRunOn(g, ctx, home, ferry, "Gelu", 1, {m.x}, attrs)) {
        domain = ferry;
      }
    }
    if (!domain) return false;
    const std::string name = anchor->name() + "_gelu";
    std::vector<ir::Value*> intermediates, constants;
    for (ir::Node* n : m.nodes) {
      if (n != m.nodes.back()) intermediates.push_back(n->output(0));
      for (ir::Value* v : n->inputs()) {
        if (v && v->is_initializer()) constants.push_back(v);
      }
      g.RemoveNode(n);
    }
    for (ir::Value* v : intermediates) g.RemoveValue(v);
    if (domain->empty()) {
      ir::Node* gelu = g.AddNode(UniqueNodeName(g, name), "Gelu", "", {m.x}, {y}, attrs);
      gelu->set_opset(opset);
    } else {
      AddFerryNode(model, g, name, "Gelu", {m.x}, {y}, attrs);
    }
    RemoveUnreadInitializers(g, constants);  // the formula's constants (Constant nodes: eliminate_dead_nodes)
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseGelu() { return std::make_unique<FuseGelu>(); }

}  // namespace ferry::passes
