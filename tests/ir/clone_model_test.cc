// ir::CloneModel: a deep copy of the IR (graphs, subgraphs reading outer values, functions, attributes, types)
// whose initializers share their tensors with the original, and that can be edited without touching it.
#include "ir/clone_model.h"

#include <gtest/gtest.h>

#include "ir/dump.h"
#include "ir/onnx_import.h"
#include "testing/model_builder.h"

namespace ferry::ir {
namespace {

using ferry::testing::ModelBuilder;

// y = If(c) then { x + w } else { x }: the then-branch reads x and w from the main graph.
std::unique_ptr<Model> IfModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Input("c", onnx::TensorProto::BOOL, {});
  b.FloatInitializer("w", {2}, {1.0f, 2.0f});
  auto& node = b.Node("If", {"c"}, {"y"}, "if");
  onnx::GraphProto& then_branch = ModelBuilder::GraphAttr(node, "then_branch");
  auto* add = then_branch.add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("x");
  add->add_input("w");
  add->add_output("t");
  then_branch.add_output()->set_name("t");
  onnx::GraphProto& else_branch = ModelBuilder::GraphAttr(node, "else_branch");
  auto* id = else_branch.add_node();
  id->set_op_type("Identity");
  id->set_name("id");
  id->add_input("x");
  id->add_output("e");
  else_branch.add_output()->set_name("e");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  const std::string bytes = b.Bytes();
  return ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "if.onnx");
}

TEST(CloneModel, CopiesEverythingAndSharesTheWeights) {
  const std::unique_ptr<Model> model = IfModel();
  const std::unique_ptr<Model> copy = CloneModel(*model);
  EXPECT_EQ(DumpModel(*copy), DumpModel(*model));
  EXPECT_EQ(copy->opsets, model->opsets);
  EXPECT_EQ(copy->path, model->path);
  ASSERT_EQ(copy->graph->initializers().size(), 1u);
  EXPECT_NE(copy->graph->initializers()[0], model->graph->initializers()[0]);
  EXPECT_EQ(copy->graph->initializers()[0]->initializer_ptr(), model->graph->initializers()[0]->initializer_ptr());

  // The then-branch's Add reads the copy's own x and w, not the original's.
  const Node& if_copy = *copy->graph->nodes().front();
  const Graph& then_copy = *if_copy.GetGraph("then_branch");
  const Node& add = *then_copy.nodes().front();
  EXPECT_EQ(add.input(0), copy->graph->inputs()[0]);
  EXPECT_EQ(add.input(1), copy->graph->initializers()[0]);
  EXPECT_NE(if_copy.GetGraph("then_branch"), model->graph->nodes().front()->GetGraph("then_branch"));
}

TEST(CloneModel, EditingTheCopyLeavesTheOriginal) {
  const std::unique_ptr<Model> model = IfModel();
  const std::string before = DumpModel(*model);
  std::unique_ptr<Model> copy = CloneModel(*model);
  Node& if_copy = *copy->graph->nodes().front();
  if_copy.mutable_subgraphs()[0]->set_name("renamed");
  copy->graph->set_name("renamed_main");
  copy->opsets[""] = 1;
  EXPECT_EQ(DumpModel(*model), before);
  EXPECT_NE(DumpModel(*copy), before);
}

}  // namespace
}  // namespace ferry::ir
