// What the graph alone tells of a value's shape (src/semantics/value_shape.h): an initializer's, a declared
// static shape, a symbolic one (rank only), none.
#include "semantics/value_shape.h"

#include <gtest/gtest.h>

#include "ir/onnx_import.h"
#include "testing/model_builder.h"

namespace ferry::semantics {
namespace {

using ferry::testing::ModelBuilder;

TEST(SemanticsValueShape, InitializerThenTypeThenNothing) {
  ModelBuilder b(17);
  constexpr int32_t kF = onnx::TensorProto::FLOAT;
  b.Input("fixed", kF, {2, 3});
  b.InputSym("sym", kF, {2, -1}, "N");
  b.FloatInitializer("w", {4, 1}, {1, 2, 3, 4});
  auto* bare = b.graph().add_input();
  bare->set_name("bare");
  bare->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  const std::string bytes = b.Bytes();
  auto model = ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "m");
  const ir::Graph& g = *model->graph;
  EXPECT_EQ(KnownRank(g.FindValue("w")), 2);
  EXPECT_EQ(KnownStaticShape(g.FindValue("w")), (Shape{4, 1}));
  EXPECT_EQ(KnownStaticShape(g.FindValue("fixed")), (Shape{2, 3}));
  EXPECT_EQ(KnownRank(g.FindValue("sym")), 2);
  EXPECT_EQ(KnownStaticShape(g.FindValue("sym")), std::nullopt);
  EXPECT_EQ(KnownRank(g.FindValue("bare")), std::nullopt);
  EXPECT_EQ(KnownStaticShape(g.FindValue("bare")), std::nullopt);
  EXPECT_EQ(KnownRank(nullptr), std::nullopt);
}

}  // namespace
}  // namespace ferry::semantics
