#include "passes/pattern.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "ferry/error.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {

struct PatternNode {
  enum class Kind { kAny, kConst, kScalar, kOp, kOneOf, kOptional };
  Kind kind = Kind::kAny;
  std::string name;                            // binds the matched value; "" = no name
  std::function<bool(const ir::Node&)> where;  // on the matched value's producer
  std::string op, domain;                      // kOp
  bool any_inputs = false, commutative = false;  // kOp
  std::vector<Pattern> inputs;                 // kOp: the inputs; kOneOf: the alternatives; kOptional: the one
  double value = 0, rel_tol = 0;               // kScalar
};

namespace {

using Kind = PatternNode::Kind;

Pattern Make(PatternNode n) { return Pattern(std::make_shared<const PatternNode>(std::move(n))); }

}  // namespace

Pattern Pattern::As(std::string name) const {
  PatternNode n = *node_;
  n.name = std::move(name);
  return Make(std::move(n));
}

Pattern Pattern::Where(std::function<bool(const ir::Node&)> pred) const {
  PatternNode n = *node_;
  n.where = std::move(pred);
  return Make(std::move(n));
}

Pattern Pattern::Domain(std::string domain) const {
  PatternNode n = *node_;
  n.domain = std::move(domain);
  return Make(std::move(n));
}

Pattern Any(std::string name) { return Make({.kind = Kind::kAny, .name = std::move(name)}); }

Pattern Const(std::string name) { return Make({.kind = Kind::kConst, .name = std::move(name)}); }

Pattern Scalar(double value, double rel_tol) {
  return Make({.kind = Kind::kScalar, .value = value, .rel_tol = rel_tol});
}

Pattern Op(std::string op, std::vector<Pattern> inputs) {
  return Make({.kind = Kind::kOp, .op = std::move(op), .inputs = std::move(inputs)});
}

Pattern Op(std::string op) { return Make({.kind = Kind::kOp, .op = std::move(op), .any_inputs = true}); }

Pattern Commutative(std::string op, std::vector<Pattern> inputs) {
  return Make({.kind = Kind::kOp, .op = std::move(op), .commutative = true, .inputs = std::move(inputs)});
}

Pattern OneOf(std::vector<Pattern> alternatives) {
  return Make({.kind = Kind::kOneOf, .inputs = std::move(alternatives)});
}

Pattern Optional(Pattern p) { return Make({.kind = Kind::kOptional, .inputs = {std::move(p)}}); }

ir::Value* Match::value(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return v;
  }
  return nullptr;
}

ir::Node* Match::node(std::string_view name) const {
  const ir::Value* v = value(name);
  return v ? v->producer() : nullptr;
}

bool Matcher::Try(const Pattern& pattern, ir::Node& root, Match* out) {
  if (root.owner() != &graph_ || !root.output(0)) return false;
  root_ = &root;
  goals_.clear();
  bindings_.clear();
  nodes_.clear();
  goals_.push_back({pattern.node_.get(), root.output(0)});
  if (!Solve()) return false;
  out->pattern_ = pattern;
  out->values_.clear();
  for (const Binding& b : bindings_) out->values_.emplace_back(b.by->name, b.value);
  out->nodes_.clear();
  for (ir::Node* n : nodes_) {
    if (std::find(out->nodes_.begin(), out->nodes_.end(), n) == out->nodes_.end()) out->nodes_.push_back(n);
  }
  return true;
}

// Matches the last goal, then the others. The search is depth first: each step that has alternatives tries them
// in order and undoes what it pushed before trying the next, so on failure goals_, bindings_ and nodes_ are as
// they were.
bool Matcher::Solve() {
  if (goals_.empty()) return Accept();
  const Goal goal = goals_.back();
  goals_.pop_back();
  if (Step(goal)) return true;
  goals_.push_back(goal);
  return false;
}

bool Matcher::Step(const Goal& goal) {
  const PatternNode& p = *goal.pattern;
  ir::Value* v = goal.value;
  if (p.where) {
    const ir::Node* n = v ? v->producer() : nullptr;
    if (!n || !p.where(*n)) return false;
  }
  if (p.name.empty()) return MatchStructure(p, v);
  for (size_t i = 0; i < bindings_.size(); ++i) {
    const Binding b = bindings_[i];
    if (b.by->name != p.name) continue;
    if (b.value != v) return false;
    return b.by == &p ? Solve() : MatchStructure(p, v);  // this very pattern matched this value already
  }
  bindings_.push_back({&p, v});
  if (MatchStructure(p, v)) return true;
  bindings_.pop_back();
  return false;
}

bool Matcher::MatchStructure(const PatternNode& p, ir::Value* v) {
  auto push_and_solve = [&](const Pattern& q) {
    goals_.push_back({q.node_.get(), v});
    if (Solve()) return true;
    goals_.pop_back();
    return false;
  };
  switch (p.kind) {
    case Kind::kAny: return v && Solve();
    case Kind::kConst: return ConstantTensor(graph_, v) && Solve();
    case Kind::kScalar: {
      const auto c = ir::ConstantNumberScalar(graph_, v);
      return c && std::fabs(*c - p.value) <= p.rel_tol * std::fabs(p.value) && Solve();
    }
    case Kind::kOptional: return v ? push_and_solve(p.inputs[0]) : Solve();
    case Kind::kOneOf:
      for (const Pattern& alt : p.inputs) {
        if (push_and_solve(alt)) return true;
      }
      return false;
    case Kind::kOp: return MatchOp(p, v);
  }
  return false;
}

bool Matcher::MatchOp(const PatternNode& p, ir::Value* v) {
  ir::Node* n = v ? v->producer() : nullptr;
  if (!n || n->owner() != &graph_ || n->output(0) != v || n->op_type() != p.op || n->domain() != p.domain) {
    return false;
  }
  const size_t k = p.any_inputs ? 0 : p.inputs.size();
  if (!p.any_inputs && n->num_inputs() > k) return false;
  nodes_.push_back(n);
  const int orders = p.commutative && k == 2 ? 2 : 1;
  for (int swap = 0; swap < orders; ++swap) {
    for (size_t i = k; i-- > 0;) {  // pushed last to first: input 0 is matched first
      goals_.push_back({p.inputs[i].node_.get(), n->input(swap ? k - 1 - i : i)});
    }
    if (Solve()) return true;
    goals_.resize(goals_.size() - k);
  }
  nodes_.pop_back();
  return false;
}

bool Matcher::Matched(const ir::Node* n) const { return std::find(nodes_.begin(), nodes_.end(), n) != nodes_.end(); }

bool Matcher::Accept() const {
  if (!Matched(root_)) return false;
  for (const ir::Node* n : nodes_) {
    if (ctx_ && ctx_->Frozen(*n)) return false;
    for (size_t k = 0; k < n->num_outputs(); ++k) {
      const ir::Value* out = n->output(k);
      if (!out || (n == root_ && k == 0)) continue;
      if (IsGraphOutput(graph_, out)) return false;
      for (const ir::Node* c : out->consumers()) {
        if (n == root_ || !Matched(c)) return false;  // the root's other outputs must be unread
      }
    }
  }
  return true;
}

bool ApplyRules(ir::Model& model, const PassContext& ctx, const std::vector<Rule>& rules) {
  constexpr int kMaxRounds = 16;
  ir::Graph& g = *model.graph;
  Matcher matcher(g, nullptr);  // frozen nodes are checked below: they block the match rather than fail it
  Match m;
  std::vector<std::string_view> fired;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<ir::Node*> order;  // reverse topological order
    order.reserve(g.nodes().size());
    for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) order.push_back(it->get());
    // `gone`: nodes a rewrite matched (removed or done for this round); `present`: the graph's nodes now (a
    // pointer from `order` may be dangling once a rewrite removed its node).
    std::unordered_set<const ir::Node*> gone, present(order.begin(), order.end());
    fired.clear();
    for (ir::Node* n : order) {
      if (gone.count(n) || !present.count(n)) continue;
      for (const Rule& rule : rules) {
        if (!matcher.Try(rule.pattern, *n, &m)) continue;
        const auto& nodes = m.nodes();
        if (std::any_of(nodes.begin(), nodes.end(), [&](const ir::Node* x) { return ctx.Frozen(*x); })) {
          gone.insert(nodes.begin(), nodes.end());
          break;
        }
        if (!rule.rewrite(m, model, ctx)) continue;
        gone.insert(m.nodes().begin(), m.nodes().end());
        present.clear();
        for (const auto& p : g.nodes()) present.insert(p.get());
        if (std::find(fired.begin(), fired.end(), rule.name) == fired.end()) fired.push_back(rule.name);
        break;
      }
    }
    if (fired.empty()) return round > 0;
    g.TopologicalSort();
  }
  std::string names;
  for (std::string_view f : fired) names += (names.empty() ? "" : ", ") + std::string(f);
  throw InternalError("pattern rules still rewriting after " + std::to_string(kMaxRounds) + " rounds: " + names);
}

void RemoveMatched(ir::Graph& graph, const Match& match) {
  const ir::Value* keep = match.root()->output(0);
  std::vector<ir::Value*> outputs;
  for (const ir::Node* n : match.nodes()) {
    for (ir::Value* v : n->outputs()) {
      if (v && v != keep) outputs.push_back(v);
    }
  }
  for (ir::Node* n : match.nodes()) graph.RemoveNode(n);
  for (ir::Value* v : outputs) graph.RemoveValue(v);
}

}  // namespace ferry::passes
