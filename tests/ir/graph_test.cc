// The small conveniences of the IR types (src/ir/graph.h, type.h): a tensor's rank and static dims, a node's
// qualified op name, its subgraphs for editing, and moving a node within the node order.
#include "ir/graph.h"

#include <gtest/gtest.h>

#include "ferry/error.h"

namespace ferry::ir {
namespace {

TEST(IrTypes, RankAndStaticDims) {
  const TypeInfo unknown_rank = TypeInfo::Tensor(DataType::kFloat);
  EXPECT_FALSE(unknown_rank.rank());
  EXPECT_FALSE(unknown_rank.static_dims());
  const TypeInfo symbolic =
      TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim::Symbolic("batch"), Dim::Static(3)});
  EXPECT_EQ(symbolic.rank(), 2);
  EXPECT_FALSE(symbolic.static_dims());
  const TypeInfo fixed = TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{Dim::Static(2), Dim::Static(0)});
  EXPECT_EQ(fixed.static_dims(), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(TypeInfo::Tensor(DataType::kFloat, std::vector<Dim>{}).static_dims(), std::vector<int64_t>{});
  TypeInfo seq;
  seq.kind = TypeInfo::Kind::kSequence;
  seq.shape = std::vector<Dim>{Dim::Static(1)};
  EXPECT_FALSE(seq.rank());
}

TEST(IrNode, QualifiedOpAndMutableSubgraphs) {
  Graph g;
  Attribute body;
  body.name = "body";
  body.type = AttrType::kGraph;
  body.g = std::make_shared<Graph>(&g);
  Node* loop = g.AddNode("loop", "Loop", "", {}, {}, {body});
  Node* fused = g.AddNode("f", "FusedConv", "ai.ferry", {}, {});
  EXPECT_EQ(loop->qualified_op(), "Loop");
  EXPECT_EQ(fused->qualified_op(), "ai.ferry::FusedConv");
  EXPECT_EQ(fused->Describe(), "node 'f' (ai.ferry::FusedConv)");
  ASSERT_EQ(loop->mutable_subgraphs().size(), 1u);
  EXPECT_EQ(loop->mutable_subgraphs()[0], loop->subgraphs()[0]);
  loop->mutable_subgraphs()[0]->set_name("edited");
  EXPECT_EQ(loop->GetGraph("body")->name(), "edited");
  EXPECT_TRUE(fused->mutable_subgraphs().empty());
}

TEST(IrGraph, MoveBeforeAndAfter) {
  Graph g;
  Node* a = g.AddNode("a", "Relu", "", {}, {});
  Node* b = g.AddNode("b", "Relu", "", {}, {});
  Node* c = g.AddNode("c", "Relu", "", {}, {});
  auto order = [&] {
    std::string s;
    for (const auto& n : g.nodes()) s += n->name();
    return s;
  };
  g.MoveBefore(c, a);
  EXPECT_EQ(order(), "cab");
  g.MoveAfter(c, b);
  EXPECT_EQ(order(), "abc");
  g.MoveAfter(a, a);
  EXPECT_EQ(order(), "abc");
  Graph other;
  Node* stranger = other.AddNode("x", "Relu", "", {}, {});
  EXPECT_THROW(g.MoveBefore(stranger, a), InternalError);
}

}  // namespace
}  // namespace ferry::ir
