// The pattern matcher (passes/pattern.h): binding semantics, commutative operands, scalar tolerance,
// alternatives, optional inputs, predicates, the replaceability checks (single reader, graph outputs, frozen
// nodes), and ApplyRules' fixed point.
#include "passes/pattern.h"

#include <gtest/gtest.h>

#include "ferry/error.h"
#include "pass_test_util.h"
#include "passes/rewrite_util.h"

namespace ferry {
namespace {

using namespace passes;  // NOLINT: the pattern vocabulary reads best unqualified
using pass_test::kF;
using pass_test::Net;

ir::Node* Named(const ir::Model& m, const std::string& name) {
  for (const auto& n : m.graph->nodes()) {
    if (n->name() == name) return n.get();
  }
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

// Matches `p` at the node named `root`, with `ctx` (null: no frozen check).
bool Matches(const ir::Model& m, const Pattern& p, const std::string& root, Match* out = nullptr,
             const PassContext* ctx = nullptr) {
  Match local;
  Matcher matcher(*m.graph, ctx);
  ir::Node* n = Named(m, root);
  return n && matcher.Try(p, *n, out ? out : &local);
}

// x, y inputs; node k (named Op_k) writes OpK.
struct Model {
  Net net;
  Model() {
    net.b.Input("x", kF, {2, 3});
    net.b.Input("y", kF, {2, 3});
  }
  std::unique_ptr<ir::Model> Done(const std::string& out) {
    net.b.Output(out, kF, {});
    return pass_test::Import(net.b.Bytes());
  }
};

TEST(PatternMatcher, SameNameBindsSameValue) {
  Model a;
  a.net.Op("Mul", {"x", "x"});                       // Mul_1
  const std::string o = a.net.Op("Mul", {"x", "y"});  // Mul_2
  const auto m = a.Done(o);
  const Pattern p = Op("Mul", {Any("v"), Any("v")});
  Match match;
  EXPECT_TRUE(Matches(*m, p, "Mul_1", &match));
  EXPECT_EQ(match.value("v")->name(), "x");
  EXPECT_EQ(match.root()->name(), "Mul_1");
  EXPECT_EQ(match.value("nothing"), nullptr);
  EXPECT_FALSE(Matches(*m, p, "Mul_2"));
  EXPECT_TRUE(Matches(*m, Op("Mul", {Any("a"), Any("b")}), "Mul_2"));
}

TEST(PatternMatcher, NamedValueAcrossSubtreesBacktracks) {
  // Mul(Relu(x), x): x must be Relu's input too; with Commutative the first order tried binds x to the Relu's
  // output and fails, the swapped one matches.
  Model a;
  const std::string r = a.net.Op("Relu", {"x"});
  const std::string o = a.net.Op("Mul", {"x", r});
  const auto m = a.Done(o);
  const Pattern x = Any("x");
  Match match;
  EXPECT_TRUE(Matches(*m, Commutative("Mul", {Op("Relu", {x}), x}), "Mul_2", &match));
  EXPECT_EQ(match.value("x")->name(), "x");
  ASSERT_EQ(match.nodes().size(), 2u);
  EXPECT_EQ(match.nodes()[1]->name(), "Relu_1");
  EXPECT_FALSE(Matches(*m, Op("Mul", {Op("Relu", {x}), x}), "Mul_2"));  // ordered: Relu is the second operand
}

TEST(PatternMatcher, CommutativeOperands) {
  Model a;
  a.net.Constant("one", 1.0f);
  a.net.Op("Add", {"one", "x"});                     // Add_1
  const std::string o = a.net.Op("Add", {"x", "one"});  // Add_2
  const auto m = a.Done(o);
  for (const char* root : {"Add_1", "Add_2"}) {
    Match match;
    EXPECT_TRUE(Matches(*m, Commutative("Add", {Any("v"), Scalar(1)}), root, &match)) << root;
    EXPECT_EQ(match.value("v")->name(), "x");
  }
  EXPECT_FALSE(Matches(*m, Op("Add", {Any("v"), Scalar(1)}), "Add_1"));
  EXPECT_TRUE(Matches(*m, Op("Add", {Any("v"), Scalar(1)}), "Add_2"));
  EXPECT_FALSE(Matches(*m, Commutative("Add", {Any("v"), Scalar(1)}).Domain("ai.ferry"), "Add_2"));
}

TEST(PatternMatcher, ScalarTolerance) {
  Model a;
  a.net.Constant("near", 1.0000005f);
  a.net.Constant("far", 1.00001f);
  a.net.b.Int64Initializer("three", {}, {3});
  a.net.b.FloatInitializer("two", {3}, {1.0f, 1.0f, 1.0f});  // three elements: no scalar
  a.net.Op("Pow", {"x", "near"});                      // Pow_1
  a.net.Op("Pow", {"x", "far"});                       // Pow_2
  a.net.Op("Pow", {"x", "three"});                     // Pow_3
  const std::string o = a.net.Op("Pow", {"x", "two"});  // Pow_4
  const auto m = a.Done(o);
  EXPECT_TRUE(Matches(*m, Op("Pow", {Any("x"), Scalar(1, 1e-6)}), "Pow_1"));
  EXPECT_FALSE(Matches(*m, Op("Pow", {Any("x"), Scalar(1)}), "Pow_1"));  // rel_tol 0: equal
  EXPECT_FALSE(Matches(*m, Op("Pow", {Any("x"), Scalar(1, 1e-6)}), "Pow_2"));
  EXPECT_TRUE(Matches(*m, Op("Pow", {Any("x"), Scalar(1, 1e-4)}), "Pow_2"));
  EXPECT_TRUE(Matches(*m, Op("Pow", {Any("x"), Scalar(3)}), "Pow_3"));  // an integer constant
  EXPECT_FALSE(Matches(*m, Op("Pow", {Any("x"), Scalar(1)}), "Pow_4"));
  EXPECT_TRUE(Matches(*m, Op("Pow", {Any("x"), Const("c")}), "Pow_4"));
  EXPECT_FALSE(Matches(*m, Op("Pow", {Const("c"), Any("v")}), "Pow_1"));  // x is a graph input, no constant
}

TEST(PatternMatcher, OneOfOptionalAndPredicates) {
  Model a;
  a.net.Constant("lo", 0.0f);
  a.net.Op("Clip", {"x"});                           // Clip_1
  a.net.Op("Clip", {"x", "lo"});                     // Clip_2
  auto& leaky = a.net.b.Node("LeakyRelu", {"x"}, {"leaky"}, "Leaky");
  pass_test::FloatAttr(leaky, "alpha", 0.2f);
  a.net.b.Input("s", kF, {});
  const std::string o = a.net.Op("Clip", {"x", "", "s"});  // Clip_3: min omitted, max not constant
  const auto m = a.Done(o);
  const Pattern clip = Op("Clip", {Any("x"), Optional(Const("min")), Optional(Const("max"))});
  Match match;
  EXPECT_TRUE(Matches(*m, clip, "Clip_1", &match));
  EXPECT_EQ(match.value("min"), nullptr);
  EXPECT_TRUE(Matches(*m, clip, "Clip_2", &match));
  EXPECT_EQ(match.value("min")->name(), "lo");
  EXPECT_EQ(match.value("max"), nullptr);
  EXPECT_FALSE(Matches(*m, clip, "Clip_3"));
  EXPECT_FALSE(Matches(*m, Op("Clip", {Any("x")}), "Clip_2"));  // more inputs than the pattern lists

  const Pattern act = OneOf({Op("Relu", {Any("x")}).As("relu"),
                             Op("LeakyRelu", {Any("x")}).Where([](const ir::Node& n) {
                               return n.GetFloat("alpha", 0.01f) < 0.1f;
                             }),
                             Op("LeakyRelu").As("leaky")});  // any inputs
  ASSERT_TRUE(Matches(*m, act, "Leaky", &match));              // the predicate refuses the second alternative
  EXPECT_EQ(match.value("relu"), nullptr);
  EXPECT_EQ(match.value("x"), nullptr);
  EXPECT_EQ(match.node("leaky")->name(), "Leaky");
  EXPECT_FALSE(Matches(*m, Op("Relu", {Any("x")}), "Leaky"));
}

// x -> Relu_1 -> Sigmoid_2 -> Tanh_3 (output); Relu_1 and Sigmoid_2 maybe read again.
std::unique_ptr<ir::Model> Chain(bool second_reader, bool middle_output) {
  Model a;
  const std::string r = a.net.Op("Relu", {"x"});
  const std::string s = a.net.Op("Sigmoid", {r});
  const std::string t = a.net.Op("Tanh", {s});
  if (second_reader) a.net.b.Output(a.net.Op("Neg", {r}), kF, {});
  if (middle_output) a.net.b.Output(s, kF, {});
  return a.Done(t);
}

TEST(PatternMatcher, IntermediatesHaveNoOtherReaderAndAreNoGraphOutput) {
  const Pattern p = Op("Tanh", {Op("Sigmoid", {Op("Relu", {Any("x")})})});
  EXPECT_TRUE(Matches(*Chain(false, false), p, "Tanh_3"));
  EXPECT_FALSE(Matches(*Chain(true, false), p, "Tanh_3"));
  EXPECT_FALSE(Matches(*Chain(false, true), p, "Tanh_3"));
  // Relu_1's other reader is outside the match but Relu_1 is no part of it (a leaf): fine.
  EXPECT_TRUE(Matches(*Chain(true, false), Op("Tanh", {Op("Sigmoid", {Any("r")})}), "Tanh_3"));
  // The root may be a graph output, and its value read by anything.
  EXPECT_TRUE(Matches(*Chain(false, true), Op("Sigmoid", {Op("Relu", {Any("x")})}), "Sigmoid_2"));
}

TEST(PatternMatcher, ANamedIntermediateMayHaveReadersInsideTheMatch) {
  // d = Sub(x, y) read by Mul(d, d) and Div(d, ·): a DAG pattern naming d.
  Model a;
  const std::string d = a.net.Op("Sub", {"x", "y"});
  const std::string o = a.net.Op("Div", {d, a.net.Op("Mul", {d, d})});
  auto m = a.Done(o);
  const Pattern dp = Op("Sub", {Any("x"), Any("y")}).As("d");
  Match match;
  ASSERT_TRUE(Matches(*m, Op("Div", {dp, Op("Mul", {dp, dp})}), "Div_3", &match));
  EXPECT_EQ(match.nodes().size(), 3u);  // each node once
  // Unnamed, the two Subs would be matched independently: still one node, also accepted.
  EXPECT_TRUE(Matches(*m, Op("Div", {Op("Sub"), Op("Mul", {Any("a"), Any("a")})}), "Div_3"));
  // Without the Mul in the pattern, d has a reader outside the match.
  EXPECT_FALSE(Matches(*m, Op("Div", {dp, Any("q")}), "Div_3"));
}

TEST(PatternMatcher, FrozenNodesAreRefused) {
  const auto m = Chain(false, false);
  const Pattern p = Op("Tanh", {Op("Sigmoid", {Op("Relu", {Any("x")})})});
  for (const char* pin : {"Relu_1", "Sigmoid", "Tanh_3"}) {
    const PassContext ctx = pass_test::Context(2, {}, {pin});
    EXPECT_FALSE(Matches(*m, p, "Tanh_3", nullptr, &ctx)) << pin;
  }
  const PassContext other = pass_test::Context(2, {}, {"Neg"});
  EXPECT_TRUE(Matches(*m, p, "Tanh_3", nullptr, &other));
}

// A rule collapsing Relu(Relu(v)) into Relu(v): each rewrite can make a new pair.
Rule ReluOfRelu() {
  return {"relu_relu", Op("Relu", {Op("Relu", {Any("v")})}), "relu(relu(v)) = relu(v)",
          [](const Match& m, ir::Model& model, const PassContext&) {
            ir::Graph& g = *model.graph;
            ir::Value* v = m.value("v");
            ir::Value* out = m.root()->output(0);
            RemoveMatched(g, m);
            g.AddNode(UniqueNodeName(g, "relu"), "Relu", "", {v}, {out})->set_opset(17);
            return true;
          }};
}

std::unique_ptr<ir::Model> ReluChain(int n) {
  Model a;
  std::string h = "x";
  for (int i = 0; i < n; ++i) h = a.net.Op("Relu", {h});
  return a.Done(h);
}

TEST(PatternMatcher, ApplyRulesRunsToAFixedPoint) {
  for (int n : {1, 2, 5, 9}) {
    SCOPED_TRACE(n);
    auto m = ReluChain(n);
    const std::string out = m->graph->outputs()[0]->name();
    const PassContext ctx = pass_test::Context(2, {});
    EXPECT_EQ(ApplyRules(*m, ctx, {ReluOfRelu()}), n > 1);
    ASSERT_EQ(m->graph->nodes().size(), 1u);
    EXPECT_EQ(m->graph->nodes()[0]->input(0)->name(), "x");
    EXPECT_EQ(m->graph->nodes()[0]->output(0)->name(), out);
    EXPECT_FALSE(ApplyRules(*m, ctx, {ReluOfRelu()}));  // idempotent
  }
}

TEST(PatternMatcher, FrozenNodeBlocksTheMatchesInsideIt) {
  // Relu_3(Relu_2(·)) holds the pinned Relu_3: neither it nor Relu_2(Relu_1(·)) inside it is rewritten.
  auto m = ReluChain(3);
  const std::string before = ir::DumpGraph(*m->graph);
  EXPECT_FALSE(ApplyRules(*m, pass_test::Context(2, {}, {"Relu_3"}), {ReluOfRelu()}));
  EXPECT_EQ(ir::DumpGraph(*m->graph), before);
  // Pinning the first one: the pair after it still collapses.
  EXPECT_TRUE(ApplyRules(*m, pass_test::Context(2, {}, {"Relu_1"}), {ReluOfRelu()}));
  EXPECT_EQ(pass_test::OpList(*m), "Relu Relu");
}

TEST(PatternMatcher, RewriteThatDeclinesChangesNothing) {
  auto m = ReluChain(3);
  const std::string before = ir::DumpGraph(*m->graph);
  Rule declines = ReluOfRelu();
  int calls = 0;
  declines.rewrite = [&](const Match&, ir::Model&, const PassContext&) {
    ++calls;
    return false;
  };
  EXPECT_FALSE(ApplyRules(*m, pass_test::Context(2, {}), {declines}));
  EXPECT_EQ(calls, 2);  // tried at Relu_3 and Relu_2, one round
  EXPECT_EQ(ir::DumpGraph(*m->graph), before);
}

TEST(PatternMatcher, RuleThatNeverStopsIsAnInternalError) {
  auto m = ReluChain(1);
  const Rule forever{"relu_forever", Op("Relu", {Any("v")}), "relu(v) = relu(v)",
                     [](const Match& match, ir::Model& model, const PassContext&) {
                       ir::Graph& g = *model.graph;
                       ir::Value* v = match.value("v");
                       ir::Value* out = match.root()->output(0);
                       RemoveMatched(g, match);
                       g.AddNode(UniqueNodeName(g, "relu"), "Relu", "", {v}, {out})->set_opset(17);
                       return true;
                     }};
  try {
    ApplyRules(*m, pass_test::Context(2, {}), {ReluOfRelu(), forever});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("relu_forever"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("relu_relu"), std::string::npos) << e.what();
  }
}

TEST(PatternMatcher, Deterministic) {
  // Two independent pairs and a longer chain: the same graph, node names included, every time.
  auto build = [] {
    Model a;
    const std::string p = a.net.Op("Relu", {a.net.Op("Relu", {"x"})});
    const std::string q = a.net.Op("Relu", {a.net.Op("Relu", {a.net.Op("Relu", {"y"})})});
    return a.Done(a.net.Op("Add", {p, q}));
  };
  std::string first;
  for (int i = 0; i < 3; ++i) {
    auto m = build();
    ApplyRules(*m, pass_test::Context(2, {}), {ReluOfRelu()});
    const std::string dump = ir::DumpGraph(*m->graph);
    if (i == 0) first = dump;
    EXPECT_EQ(dump, first);
  }
  EXPECT_EQ(first.find("Relu_"), std::string::npos) << first;  // every pair replaced
}

}  // namespace
}  // namespace ferry
