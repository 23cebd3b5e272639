// The IR builder (src/ir/builder.h): fresh names in a graph and across a model, nodes and typed values, constants of
// every numeric type, the opset-dependent forms, and the subgraph-aware edits.
#include "ir/builder.h"

#include <gtest/gtest.h>

#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::ir {
namespace {

TEST(IrBuilder, NamesAreFreshInTheGraphAndItsEnclosingGraphs) {
  Graph outer;
  outer.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  Graph inner(&outer);
  Builder b(inner, 13);
  EXPECT_EQ(b.ValueName("x"), "x_2");  // the outer x would be shadowed
  EXPECT_EQ(b.ValueName("y"), "y");
  Value* y = b.AddValue("y");
  Value* y2 = b.AddValue("y");
  EXPECT_EQ(y->name(), "y");
  EXPECT_EQ(y2->name(), "y_2");
  Node* n = b.AddNode("n", "Relu", {y}, {y2});
  EXPECT_EQ(b.AddNode("n", "Relu", {y2}, {b.AddValue("z")})->name(), "n_2");
  EXPECT_EQ(n->opset(), 13);
  EXPECT_EQ(n->domain(), "");
  EXPECT_EQ(b.created().size(), 2u);
}

TEST(IrBuilder, ANameScopeCoversEveryGraphOfTheModelAndWhatItHandedOut) {
  Model m;
  m.graph = std::make_unique<Graph>();
  Graph& g = *m.graph;
  Value* c = g.AddValue("cond", TypeInfo::Tensor(DataType::kBool));
  Attribute branch;
  branch.name = "then_branch";
  branch.type = AttrType::kGraph;
  branch.g = std::make_shared<Graph>(&g);
  Value* t = branch.g->AddValue("t", TypeInfo::Tensor(DataType::kFloat));
  branch.g->mutable_outputs().push_back(t);
  Node* if_node = g.AddNode("if", "If", "", {c}, {g.AddValue("out")}, {branch});
  NameScope names(m);
  Builder b(g, 0, &names);
  EXPECT_EQ(b.ValueName("t"), "t_2");   // a value of the subgraph, which Graph::UniqueValueName does not see
  EXPECT_EQ(b.ValueName("t"), "t_3");   // handed out once, never again
  EXPECT_EQ(b.NodeName("if"), "if_2");
  g.RemoveNode(if_node);
  EXPECT_EQ(b.NodeName("if"), "if_3");  // also after the node is gone
  EXPECT_EQ(g.UniqueValueName("t"), "t");
}

TEST(IrBuilder, OpNamesAfterThePrefixAndTypesItsOutput) {
  Graph g;
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat16, std::vector<Dim>{Dim::Static(2)}));
  Builder b(g, 17);
  b.set_prefix("ln/");
  Value* y = b.Mul(x, b.Scalar(0.5, DataType::kFloat16));
  EXPECT_EQ(y->name(), "ln/Mul");
  EXPECT_EQ(y->producer()->name(), "ln/Mul");
  EXPECT_EQ(y->type().elem_type, DataType::kFloat16);
  EXPECT_EQ(y->producer()->input(1)->name(), "ln/c");
  EXPECT_EQ(b.Scalar(0.5, DataType::kFloat16), y->producer()->input(1));  // one initializer per constant
  EXPECT_NE(b.Scalar(0.5, DataType::kFloat), y->producer()->input(1));
  Value* cast = b.Cast(y, DataType::kFloat);
  EXPECT_EQ(cast->type().elem_type, DataType::kFloat);
  EXPECT_EQ(cast->name(), "ln/Cast");
  EXPECT_EQ(b.Mul(cast, cast)->name(), "ln/Mul_2");
}

TEST(IrBuilder, ConstantsOfEveryNumericType) {
  Graph g;
  Builder b(g);
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
                     DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kUint8, DataType::kUint16,
                     DataType::kUint32, DataType::kUint64, DataType::kBool}) {
    Value* v = b.AddScalar("s", t, 3);
    ASSERT_NE(v, nullptr) << DataTypeName(t);
    EXPECT_EQ(v->initializer()->dtype(), t);
    EXPECT_EQ(v->initializer()->rank(), 0);
    EXPECT_EQ(ElementType(v), t);
  }
  EXPECT_EQ(b.AddScalar("s", DataType::kString, 1), nullptr);
  EXPECT_FLOAT_EQ(static_cast<float>(b.AddScalar("h", DataType::kFloat16, 0.25)->initializer()->data<Float16>()[0]),
                  0.25f);
  const Tensor* ints = b.AddInt64s("i", {4, -1})->initializer();
  ASSERT_EQ(ints->shape(), (Shape{2}));
  EXPECT_EQ(ints->data<int64_t>()[1], -1);
  EXPECT_EQ(b.AddInt64s("k", {7}, true)->initializer()->rank(), 0);
  EXPECT_EQ(b.AddFloats("f", {1.5f})->initializer()->data<float>()[0], 1.5f);
  const Tensor* t = b.Constant(DataType::kInt32, {2, 2}, {1, 2, 3})->initializer();
  EXPECT_EQ(t->shape(), (Shape{2, 2}));
  EXPECT_EQ(t->data<int32_t>()[2], 3);
  EXPECT_EQ(t->data<int32_t>()[3], 0);  // past the values: zero
  EXPECT_THROW(b.Constant(DataType::kString, {}, {1}), InternalError);
}

TEST(IrBuilder, FormsFollowTheOpset) {
  Graph g;
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  Builder old(g, 10);
  Node* mean10 = old.ReduceMean(x, {1})->producer();
  EXPECT_EQ(mean10->num_inputs(), 1u);
  EXPECT_EQ(mean10->GetInts("axes"), (std::vector<int64_t>{1}));
  Node* clip10 = old.Clip(x, 0, 6)->producer();
  EXPECT_EQ(clip10->num_inputs(), 1u);
  EXPECT_EQ(clip10->GetFloat("max", 0), 6.0f);
  EXPECT_EQ(old.Softmax(x, 3)->producer()->GetInt("axis", 0), 2);
  Builder now(g, 18);
  Node* mean18 = now.ReduceMean(x, {1})->producer();
  ASSERT_EQ(mean18->num_inputs(), 2u);
  EXPECT_EQ(mean18->input(1)->initializer()->data<int64_t>()[0], 1);
  EXPECT_EQ(now.Clip(x, 0, 6)->producer()->num_inputs(), 3u);
  EXPECT_EQ(now.Unsqueeze(x, {0})->producer()->num_inputs(), 2u);
  EXPECT_EQ(now.Slice(x, 0, 1, 0)->producer()->num_inputs(), 4u);
  EXPECT_EQ(now.Softmax(x, 3)->producer()->GetInt("axis", 0), -1);
}

TEST(IrBuilder, AddNodeInImportsTheDomain) {
  Model m;
  m.graph = std::make_unique<Graph>();
  Builder b(*m.graph);
  Value* x = m.graph->AddValue("x");
  Node* n = b.AddNodeIn(m, "ai.ferry", 1, "fused", "FusedConv", {x}, {b.AddValue("y")});
  EXPECT_EQ(n->domain(), "ai.ferry");
  EXPECT_EQ(n->opset(), 1);
  EXPECT_EQ(m.opsets.at("ai.ferry"), 1);
}

TEST(IrBuilder, InsertsBeforeOrAfterANodeInTheOrderAdded) {
  Graph g;
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  Node* first = g.AddNode("first", "Neg", "", {x}, {g.AddValue("n")});
  Node* last = g.AddNode("last", "Abs", "", {x}, {g.AddValue("a")});
  Builder b(g, 13);
  b.InsertBefore(last);
  b.Op("Relu", {b.Op("Exp", {x})});
  b.InsertAfter(first);
  b.Op("Sigmoid", {x});
  b.Op("Tanh", {x});
  b.InsertAtEnd();
  b.Op("Sqrt", {x});
  std::string order;
  for (const auto& n : g.nodes()) order += n->op_type() + " ";
  EXPECT_EQ(order, "Neg Sigmoid Tanh Exp Relu Abs Sqrt ");
}

TEST(IrBuilder, OnAddSeesEveryNode) {
  Graph g;
  Builder b(g, 13);
  std::vector<std::string> seen;
  b.set_on_add([&](Node& n) { seen.push_back(n.op_type()); });
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  b.Op("Relu", {b.Op("Neg", {x})});
  EXPECT_EQ(seen, (std::vector<std::string>{"Neg", "Relu"}));
}

// A graph with x -> Neg -> a, an If whose branch reads `a` from the outer scope and outputs it, and `a` a graph
// output.
struct Nested {
  Graph g;
  Value* x;
  Value* a;
  Value* b;
  Graph* branch;
  Node* inner;
  Nested() {
    x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
    a = g.AddValue("a", TypeInfo::Tensor(DataType::kFloat));
    b = g.AddValue("b", TypeInfo::Tensor(DataType::kFloat));
    g.AddNode("neg", "Neg", "", {x}, {a});
    g.AddNode("abs", "Abs", "", {x}, {b});
    Attribute then_branch;
    then_branch.name = "then_branch";
    then_branch.type = AttrType::kGraph;
    then_branch.g = std::make_shared<Graph>(&g);
    branch = then_branch.g.get();
    Value* r = branch->AddValue("r");
    inner = branch->AddNode("relu", "Relu", "", {a}, {r});
    branch->mutable_outputs() = {r, a};
    g.AddNode("if", "If", "", {x}, {g.AddValue("out")}, {then_branch});
    g.mutable_outputs() = {a};
  }
};

TEST(IrBuilder, SubgraphReadersAndReplacingEveryUse) {
  Nested n;
  EXPECT_EQ(SubgraphReaders(n.g, n.a).size(), 2u);  // a node input and an output of the branch
  EXPECT_TRUE(IsRead(n.g, n.a));
  EXPECT_FALSE(IsRead(n.g, n.b));
  EXPECT_TRUE(IsGraphOutput(n.g, n.a));
  EXPECT_FALSE(IsGraphInput(n.g, n.a));
  ReplaceAllUses(n.g, n.a, n.b);
  EXPECT_EQ(n.inner->input(0), n.b);
  EXPECT_EQ(n.branch->outputs()[1], n.b);
  EXPECT_EQ(n.g.outputs()[0], n.a);  // the graph's own outputs stay
  EXPECT_TRUE(n.a->consumers().empty());
  EXPECT_TRUE(IsRead(n.g, n.b));
}

TEST(IrBuilder, RebuildKeepsNameOpsetOverloadAndDoc) {
  Graph g;
  Value* x = g.AddValue("x", TypeInfo::Tensor(DataType::kFloat));
  Value* y = g.AddValue("y");
  Node* n = g.AddNode("act", "Relu", "", {x}, {y});
  n->set_opset(14);
  n->set_doc("kept");
  n->set_overload("o");
  Node* r = Rebuild(n, "Sigmoid", {x}, {y}, {IntAttr("k", 1)});
  EXPECT_EQ(r->name(), "act");
  EXPECT_EQ(r->op_type(), "Sigmoid");
  EXPECT_EQ(r->opset(), 14);
  EXPECT_EQ(r->doc(), "kept");
  EXPECT_EQ(r->overload(), "o");
  EXPECT_EQ(y->producer(), r);
  EXPECT_EQ(g.nodes().size(), 1u);
  Value* z = g.AddValue("z");
  Node* q = RebuildWithOutput(r, y, z);
  EXPECT_EQ(q->op_type(), "Sigmoid");
  EXPECT_EQ(q->output(0), z);
  EXPECT_EQ(y->producer(), nullptr);
  EXPECT_EQ(q->GetInt("k", 0), 1);
}

}  // namespace
}  // namespace ferry::ir
