// FixInputShapes (`ferry optimize --shape`): symbolic and unknown input dims become static before type inference;
// anything that does not fit the declared input is an InvalidArgumentError naming the input, expected vs got.
#include "runtime/fix_input_shapes.h"

#include <gtest/gtest.h>

#include "ferry/error.h"
#include "ir/onnx_import.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using testing::ModelBuilder;
constexpr int32_t kF = onnx::TensorProto::FLOAT;

std::unique_ptr<ir::Model> Import(const ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  return ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
}

// x: float[N,3], z: float[N,3] (both symbolic in N), y = Relu(x) + z, w an initializer.
ModelBuilder TwoInputs() {
  ModelBuilder b;
  b.InputSym("x", kF, {-1, 3}, "N").InputSym("z", kF, {-1, 3}, "N");
  b.Node("Relu", {"x"}, {"r"});
  b.Node("Add", {"r", "z"}, {"s"});
  b.Node("Mul", {"s", "w"}, {"y"});
  b.FloatInitializer("w", {3}, {1, 2, 3});
  auto* out = b.graph().add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  return b;
}

std::string Message(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no InvalidArgumentError)";
}

TEST(OptimizeFixInputShapes, SymbolicDimsBecomeStaticAndInferenceSeesThem) {
  auto model = Import(TwoInputs());
  runtime::FixInputShapes(*model, {{"x", {2, 3}}});
  runtime::InferTypes(*model);
  EXPECT_EQ(model->graph->inputs()[0]->type().ToString(), "float32[2,3]");
  // One symbol, one value: z's N is bound too, and the output becomes static through inference.
  EXPECT_EQ(model->graph->inputs()[1]->type().ToString(), "float32[2,3]");
  EXPECT_EQ(model->graph->outputs()[0]->type().ToString(), "float32[2,3]");
}

TEST(OptimizeFixInputShapes, UnknownRankAndMatchingStaticDimsAreAccepted) {
  ModelBuilder b;
  auto* in = b.graph().add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(kF);  // no shape: unknown rank
  b.Input("s", kF, {4, 5});
  b.Node("Add", {"x", "s"}, {"y"});
  b.Output("y", kF, {});
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto model = Import(b);
  runtime::FixInputShapes(*model, {{"x", {4, 5}}, {"s", {4, 5}}});
  EXPECT_EQ(model->graph->inputs()[0]->type().ToString(), "float32[4,5]");
  runtime::InferTypes(*model);
  EXPECT_EQ(model->graph->outputs()[0]->type().ToString(), "float32[4,5]");
}

TEST(OptimizeFixInputShapes, UnknownInputIsNamedWithTheInputsThereAre) {
  auto model = Import(TwoInputs());
  const std::string m = Message([&] { runtime::FixInputShapes(*model, {{"nope", {1, 3}}}); });
  EXPECT_NE(m.find("no input 'nope'"), std::string::npos) << m;
  EXPECT_NE(m.find("x float32[N,3], z float32[N,3]"), std::string::npos) << m;
  // An initializer is not an input the caller feeds.
  const std::string w = Message([&] { runtime::FixInputShapes(*model, {{"w", {3}}}); });
  EXPECT_NE(w.find("no input 'w'"), std::string::npos) << w;
}

TEST(OptimizeFixInputShapes, WrongRankNamesExpectedAndGot) {
  auto model = Import(TwoInputs());
  const std::string m = Message([&] { runtime::FixInputShapes(*model, {{"x", {1, 3, 4}}}); });
  EXPECT_NE(m.find("input 'x': expected rank 2 (the model declares float32[N,3]), got 3 dims [1,3,4]"),
            std::string::npos)
      << m;
}

TEST(OptimizeFixInputShapes, DisagreeingStaticDimNamesExpectedAndGot) {
  auto model = Import(TwoInputs());
  const std::string m = Message([&] { runtime::FixInputShapes(*model, {{"x", {1, 4}}}); });
  EXPECT_NE(m.find("input 'x': expected dimension 1 to be 3 (the model declares float32[N,3]), got 4"),
            std::string::npos)
      << m;
}

TEST(OptimizeFixInputShapes, OneSymbolTwoValuesIsAnErrorAndNothingChanges) {
  auto model = Import(TwoInputs());
  const std::string m = Message([&] { runtime::FixInputShapes(*model, {{"x", {2, 3}}, {"z", {5, 3}}}); });
  EXPECT_NE(m.find("symbol 'N'"), std::string::npos) << m;
  EXPECT_EQ(model->graph->inputs()[0]->type().ToString(), "float32[N,3]");
  EXPECT_EQ(model->graph->inputs()[1]->type().ToString(), "float32[N,3]");
}

TEST(OptimizeFixInputShapes, NegativeDimIsRefused) {
  auto model = Import(TwoInputs());
  const std::string m = Message([&] { runtime::FixInputShapes(*model, {{"x", {-2, 3}}}); });
  EXPECT_NE(m.find("negative dimension"), std::string::npos) << m;
}

}  // namespace
}  // namespace ferry
