#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>

#include "ferry/error.h"
#include "ir/dump.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"
#include "testing/model_builder.h"

namespace ferry::ir {
namespace {

using ferry::testing::ModelBuilder;

std::unique_ptr<Model> FromBuilder(const ModelBuilder& b, const std::string& base_dir = "") {
  std::string bytes = b.Bytes();
  return ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, base_dir, "test.onnx");
}

ModelBuilder SmallModel() {
  ModelBuilder b(17);
  b.InputSym("x", onnx::TensorProto::FLOAT, {-1, 4}, "batch");
  b.FloatInitializer("w", {4}, {1, 2, 3, 4});
  b.Node("Mul", {"x", "w"}, {"m"}, "mul");
  auto& sm = b.Node("Softmax", {"m"}, {"y"}, "softmax");
  ModelBuilder::IntAttr(sm, "axis", -1);
  b.Output("y", onnx::TensorProto::FLOAT, {});
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  return b;
}

TEST(OnnxImport, BuildsGraphWithTypesAndInitializers) {
  auto model = FromBuilder(SmallModel());
  const Graph& g = *model->graph;
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type(), "Mul");
  EXPECT_EQ(g.nodes()[1]->GetInt("axis", 0), -1);
  EXPECT_EQ(g.nodes()[0]->opset(), 17);
  ASSERT_EQ(g.RequiredInputs().size(), 1u);
  const Value* x = g.RequiredInputs()[0];
  EXPECT_EQ(x->type().ToString(), "float32[batch,4]");
  ASSERT_EQ(g.initializers().size(), 1u);
  EXPECT_EQ(g.initializers()[0]->initializer()->data<float>()[3], 4.0f);
  EXPECT_EQ(g.nodes()[1]->input(0)->producer(), g.nodes()[0].get());
}

TEST(OnnxImport, RoundTripThroughExportIsStable) {
  auto model = FromBuilder(SmallModel());
  std::string bytes = ExportModelBytes(*model);
  auto again = ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "", "test.onnx");
  EXPECT_EQ(DumpModel(*model), DumpModel(*again));
  EXPECT_EQ(bytes, ExportModelBytes(*again));
}

TEST(OnnxImport, RoundTripKeepsSubgraphsAndOuterScope) {
  ModelBuilder b(17);
  b.Input("c", onnx::TensorProto::BOOL, {});
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  auto& n = b.Node("If", {"c"}, {"y"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* g = &ModelBuilder::GraphAttr(n, branch);
    auto* node = g->add_node();
    node->set_op_type(std::string(branch) == "then_branch" ? "Neg" : "Abs");
    node->add_input("x");  // outer-scope value
    node->add_output(std::string(branch) + "_out");
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto model = FromBuilder(b);
  const Graph* then_g = model->graph->nodes()[0]->GetGraph("then_branch");
  ASSERT_NE(then_g, nullptr);
  EXPECT_EQ(then_g->nodes()[0]->input(0), model->graph->inputs()[1]);  // resolved to the outer value
  std::string bytes = ExportModelBytes(*model);
  auto again = ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  EXPECT_EQ(DumpModel(*model), DumpModel(*again));
}

TEST(OnnxImport, DumpIsReadable) {
  auto model = FromBuilder(SmallModel());
  std::string dump = DumpModel(*model);
  EXPECT_NE(dump.find("%m = Mul(%x, %w)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("{axis=-1}"), std::string::npos) << dump;
  EXPECT_NE(dump.find("%w = initializer float32[4]"), std::string::npos) << dump;
}

TEST(OnnxImport, NodesOutOfOrderAreSorted) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2});
  b.Node("Relu", {"a"}, {"y"}, "second");
  b.Node("Neg", {"x"}, {"a"}, "first");
  b.Output("y", onnx::TensorProto::FLOAT, {2});
  auto model = FromBuilder(b);
  EXPECT_EQ(model->graph->nodes()[0]->name(), "first");
}

}  // namespace
}  // namespace ferry::ir
