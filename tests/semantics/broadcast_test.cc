// Broadcasting in the op-semantics layer (src/semantics/broadcast.h): static and symbolic dim pairs, whole
// shapes multidirectionally, and the unidirectional fit.
#include "semantics/broadcast.h"

#include <gtest/gtest.h>

#include <vector>

namespace ferry::semantics {
namespace {

ir::Dim Sym(const std::string& s) { return ir::Dim::Symbolic(s); }

TEST(SemanticsBroadcast, StaticDims) {
  EXPECT_EQ(BroadcastDim(int64_t{3}, int64_t{1}), 3);
  EXPECT_EQ(BroadcastDim(int64_t{1}, int64_t{0}), 0);
  EXPECT_EQ(BroadcastDim(int64_t{4}, int64_t{4}), 4);
  EXPECT_EQ(BroadcastDim(int64_t{2}, int64_t{3}), std::nullopt);
}

TEST(SemanticsBroadcast, SymbolicDims) {
  bool conflict = false;
  EXPECT_EQ(BroadcastDim(ir::Dim::Static(1), Sym("N"), &conflict).symbol, "N");
  EXPECT_EQ(BroadcastDim(Sym("N"), ir::Dim::Static(5), &conflict).value, 5);  // the static dim decides
  EXPECT_EQ(BroadcastDim(Sym("N"), Sym("N"), &conflict).symbol, "N");
  const ir::Dim unknown = BroadcastDim(Sym("N"), Sym("M"), &conflict);
  EXPECT_FALSE(unknown.is_static());
  EXPECT_TRUE(unknown.symbol.empty());
  EXPECT_FALSE(conflict);
  BroadcastDim(ir::Dim::Static(2), ir::Dim::Static(3), &conflict);
  EXPECT_TRUE(conflict);
}

TEST(SemanticsBroadcast, ShapesRightAligned) {
  const std::vector<Shape> ok{{2, 1, 4}, {3, 1}, {}};
  EXPECT_EQ(BroadcastShapes(ok), (Shape{2, 3, 4}));
  const std::vector<Shape> bad{{2, 3}, {4, 3}};
  EXPECT_EQ(BroadcastShapes(bad), std::nullopt);
  EXPECT_TRUE(BroadcastsTo({1, 4}, {3, 2, 4}));
  EXPECT_FALSE(BroadcastsTo({3, 2, 4}, {1, 4}));
  EXPECT_FALSE(BroadcastsTo({2, 1}, {3, 1}));
}

}  // namespace
}  // namespace ferry::semantics
