// A declarative pattern matcher for the fusion passes. A pattern says what a value must be, as an expression:
//
//   auto x = Any("x");
//   auto gelu = Commutative("Mul", {Commutative("Mul", {x, Op("Add", {Op("Erf", {Op("Div", {x, Scalar(kSqrt2)})}),
//                                                                      Scalar(1)})}), Scalar(0.5)});
//
// and a Matcher tries it at one node, the root: the top of the pattern matches the root's first output, the
// pattern's inputs the values the root reads, and so on up the producers. Rules pair a pattern with the rewrite of
// what it matched and the identity the rewrite relies on; ApplyRules runs them over a graph to a fixed point.
//
// Matching semantics:
// - Op(op, inputs) matches a value that is output 0 of a node of op `op` (domain "" unless .Domain(...)) in the
//   graph being matched (not an enclosing one), with no more inputs than the pattern lists; inputs the node lacks
//   (or omits) are nullptr, which only Optional(...) accepts. Op(op) without a list looks at no input.
//   Commutative(op, {a, b}) also tries the operands swapped.
// - A name (Any(name), Const(name), or any pattern's .As(name)) binds the value it matched; the same name binds
//   the same value everywhere in the pattern (so x in Mul(x, Mul(x, x)) is one value). Sub-patterns without a
//   name match independently, even when one Pattern object is used twice.
// - Where(pred) asks the producer of the matched value (which must exist) to satisfy `pred` (attribute checks).
// - Alternatives (OneOf, commutative operand orders) are tried in order with backtracking; the first complete
//   match that passes the checks below wins, so matching is deterministic.
// - Checks on a complete match: no matched node is frozen (ctx.Frozen, when the Matcher has a context), and every
//   matched node but the root is replaceable: none of its outputs is a graph output or read by a node outside the
//   match, a subgraph's included (in a tree pattern, each intermediate has exactly one reader; a named value read
//   twice inside the pattern, like d in Div(d, Sqrt(ReduceMean(Mul(d, d)))), may have all those readers). The
//   root's outputs after the first must be unread, so a rewrite may replace the root by a node writing its first
//   output.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace ferry::passes {

struct PatternNode;

// An immutable pattern expression; cheap to copy (shared). The modifiers return a changed copy.
class Pattern {
 public:
  explicit Pattern(std::shared_ptr<const PatternNode> node) : node_(std::move(node)) {}
  // Binds the matched value (and so its producer) to `name`.
  Pattern As(std::string name) const;
  // The matched value's producer must satisfy `pred`.
  Pattern Where(std::function<bool(const ir::Node&)> pred) const;
  // The op's domain (Op and Commutative only), "" (ai.onnx) by default.
  Pattern Domain(std::string domain) const;

 private:
  friend class Matcher;
  std::shared_ptr<const PatternNode> node_;
};

// Any present value, bound to `name`.
Pattern Any(std::string name);
// A constant (ir::ConstantTensor: an initializer that is no graph input, or a Constant node's value), bound to `name`.
Pattern Const(std::string name = "");
// A constant of one element (float, double, int32 or int64) within rel_tol of `value` (relative; 0: equal).
Pattern Scalar(double value, double rel_tol = 0);
// A node of op `op` reading values that match `inputs` in order.
Pattern Op(std::string op, std::vector<Pattern> inputs);
// A node of op `op`, whatever it reads.
Pattern Op(std::string op);
// A node of op `op` with two inputs matching {a, b} in either order.
Pattern Commutative(std::string op, std::vector<Pattern> inputs);
// The first alternative that matches.
Pattern OneOf(std::vector<Pattern> alternatives);
// An input that may be missing (nullptr); when present it must match `p`.
Pattern Optional(Pattern p);

// What a pattern matched: the nodes and the named values.
class Match {
 public:
  ir::Node* root() const { return nodes_.empty() ? nullptr : nodes_.front(); }
  // Every matched node, each once, the root first, then in matching order (outputs before their producers).
  const std::vector<ir::Node*>& nodes() const { return nodes_; }
  // The value bound to `name`; nullptr when unbound (an absent Optional, or a name on an untaken alternative).
  ir::Value* value(std::string_view name) const;
  // The producer of value(name), or nullptr.
  ir::Node* node(std::string_view name) const;

 private:
  friend class Matcher;
  Pattern pattern_{nullptr};  // keeps the names alive
  std::vector<std::pair<std::string_view, ir::Value*>> values_;
  std::vector<ir::Node*> nodes_;
};

// Tries patterns at nodes of one graph; keeps its working buffers between tries (no allocation per try once
// they have grown).
class Matcher {
 public:
  // `ctx` may be null: then frozen nodes are not checked.
  Matcher(const ir::Graph& graph, const PassContext* ctx) : graph_(graph), ctx_(ctx) {}
  // Whether `pattern` matches at `root` (a node of the graph); fills `out` when it does.
  bool Try(const Pattern& pattern, ir::Node& root, Match* out);

 private:
  struct Goal {
    const PatternNode* pattern;
    ir::Value* value;
  };
  struct Binding {
    const PatternNode* by;
    ir::Value* value;
  };
  bool Solve();
  bool Step(const Goal& goal);
  bool MatchStructure(const PatternNode& p, ir::Value* v);
  bool MatchOp(const PatternNode& p, ir::Value* v);
  bool Accept() const;
  bool Matched(const ir::Node* n) const;

  const ir::Graph& graph_;
  const PassContext* ctx_;
  ir::Node* root_ = nullptr;
  std::vector<Goal> goals_;        // what is left to match, the next goal last
  std::vector<Binding> bindings_;  // named values, in binding order
  std::vector<ir::Node*> nodes_;   // matched nodes, in matching order (repeats possible)
};

// A fusion rule: where it applies, the identity it relies on, and the rewrite.
struct Rule {
  std::string name;
  Pattern pattern;
  std::string identity;  // one line: the identity that makes the rewrite exact (or exact up to rounding)
  // Rewrites the match, or returns false having changed nothing (the replacement would not run there, a shape
  // does not fit...). It may remove matched nodes and add nodes, never remove a node outside the match.
  std::function<bool(const Match&, ir::Model&, const PassContext&)> rewrite;
};

// Runs `rules` on the model's top graph to a fixed point: each round visits the nodes from the graph's outputs
// back (reverse topological order, so the largest pattern, rooted at its last node, is tried before a smaller one
// rooted inside it), tries the rules in order at each node still present, and applies the first whose pattern
// matches and whose rewrite succeeds; nodes a rewrite adds are visited in the next round, after a topological
// sort. A match holding a frozen node is not rewritten, and blocks its nodes for the other rules and roots (so a
// smaller pattern inside it, like a LayerNorm without its pinned Add of beta, is not rewritten either). Rounds
// repeat until one changes nothing; a rule still firing after 16 rounds is an InternalError naming it. Returns
// whether anything changed.
bool ApplyRules(ir::Model& model, const PassContext& ctx, const std::vector<Rule>& rules);

// Removes the match's nodes and their outputs, except the root's first output (which the replacement writes).
void RemoveMatched(ir::Graph& graph, const Match& match);

}  // namespace ferry::passes
