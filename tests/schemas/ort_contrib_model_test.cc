// A model as ONNX Runtime's tools write it: com.microsoft::FusedMatMul and the default-domain LayerNormalization
// at opset 14 (ONNX Runtime's version 1). Import and type inference accept it, and it runs on cpu (no fallback)
// and on ref, computing the hand-worked value. An op no backend implements by decision (com.microsoft::SampleOp,
// kernels/refused_ops.h) is refused at the kernel layer, naming the op, its origin and the reason, not at the
// graph layer as an unknown op or a plugin's.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/session.h"
#include "ir/onnx_import.h"
#include "runtime/placement.h"
#include "runtime/type_inference.h"
#include "testing/model_builder.h"
#include "tools/check.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr float kX[8] = {1, 2, 3, 4, -1, 0.5f, 2, -3};
constexpr float kW[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0.5f, 0.5f, 1, 1};  // [3, 4], read transposed (transB)

ModelBuilder OrtWrittenModel() {
  ModelBuilder b(14);
  auto* ms = b.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 4});
  b.FloatInitializer("w", {3, 4}, std::vector<float>(kW, kW + 12));
  b.FloatInitializer("scale", {3}, {1.0f, 2.0f, 0.5f});
  b.FloatInitializer("bias", {3}, {0.0f, 1.0f, -1.0f});
  auto& mm = b.Node("FusedMatMul", {"x", "w"}, {"y"}, "fused_matmul");
  mm.set_domain("com.microsoft");
  ModelBuilder::IntAttr(mm, "transB", 1);
  auto* alpha = mm.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(0.5f);
  b.Node("LayerNormalization", {"y", "scale", "bias"}, {"z"}, "layer_norm");
  b.Output("z", onnx::TensorProto::FLOAT, {2, 3});
  return b;
}

// z = LayerNorm(0.5 * x W^T) over the last dim (epsilon 1e-5), times scale plus bias, in double.
std::vector<double> Expected() {
  const double scale[3] = {1, 2, 0.5}, bias[3] = {0, 1, -1};
  std::vector<double> z;
  for (int i = 0; i < 2; ++i) {
    double y[3], mean = 0, var = 0;
    for (int j = 0; j < 3; ++j) {
      y[j] = 0;
      for (int k = 0; k < 4; ++k) y[j] += 0.5 * kX[i * 4 + k] * kW[j * 4 + k];
      mean += y[j] / 3;
    }
    for (double v : y) var += (v - mean) * (v - mean) / 3;
    for (int j = 0; j < 3; ++j) z.push_back((y[j] - mean) / std::sqrt(var + 1e-5) * scale[j] + bias[j]);
  }
  return z;
}

ModelBuilder RefusedOpModel() {
  ModelBuilder b(17);
  auto* ms = b.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 4});
  b.Node("SampleOp", {"x"}, {"y"}, "sample").set_domain("com.microsoft");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 4});
  return b;
}

std::unique_ptr<ir::Model> Import(const ModelBuilder& b) {
  const std::string bytes = b.Bytes();
  return ir::ImportModelFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, "",
                                  "ort_written.onnx");
}

TEST(OrtContribModel, ImportAndTypeInferenceAccept) {
  auto model = Import(OrtWrittenModel());
  ASSERT_NO_THROW(runtime::InferTypes(*model));
  EXPECT_EQ(model->graph->FindValue("y")->type().ToString(), "float32[2,3]");
  EXPECT_EQ(model->graph->FindValue("z")->type().ToString(), "float32[2,3]");
}

TEST(OrtContribModel, RunsOnCpuWithoutFallbackAndOnRef) {
  const std::string path = testing::WriteTempFile(OrtWrittenModel().Bytes(), "ort_written_run.onnx");
  const std::vector<double> want = Expected();
  for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu"}, std::vector<std::string>{"ref"}}) {
    SCOPED_TRACE(backends[0]);
    SessionOptions o;
    o.backends = backends;
    o.allow_fallback = false;
    o.optimization_level = 0;  // the ops as written, not what the passes make of them
    auto session = Session::Create(path, o);
    Tensor x(DataType::kFloat, {2, 4});
    std::copy(kX, kX + 8, x.data<float>());
    const auto out = session->Run({{"x", x}});
    ASSERT_EQ(out.size(), 1u);
    const Tensor& z = out[0].second;
    ASSERT_EQ(z.shape(), (Shape{2, 3}));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(z.data<float>()[i], want[i], 1e-4) << "element " << i;
  }
}

TEST(OrtContribModel, PlacementRefusesADecidedOpAtTheKernelLayerWithItsReason) {
  auto model = Import(RefusedOpModel());
  runtime::InferTypes(*model);
  const runtime::PlacementOptions options = runtime::ResolvePlacementOptions({"cpu", "ref"}, {}, {}, true);
  const runtime::Placement p = runtime::PlaceModel(*model, options);
  ASSERT_EQ(p.unplaced.size(), 1u);
  EXPECT_EQ(p.unplaced[0].layer, FailureLayer::kKernel) << p.unplaced[0].reason;
  EXPECT_TRUE(Contains(p.unplaced[0].reason, "SampleOp")) << p.unplaced[0].reason;
  EXPECT_TRUE(Contains(p.unplaced[0].reason, "example op")) << p.unplaced[0].reason;
  try {
    runtime::RequireFullPlacement(*model, p);
    FAIL() << "placement accepted a model no backend can run";
  } catch (const InvalidModelError& e) {
    FAIL() << "a graph-layer error: " << e.what();
  } catch (const UnsupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(Contains(msg, "com.microsoft::SampleOp")) << msg;
    EXPECT_TRUE(Contains(msg, "(ONNX Runtime contrib op)")) << msg;
    EXPECT_FALSE(Contains(msg, "--plugin")) << msg;
  }
}

TEST(OrtContribModel, CheckNamesTheContribOpAtTheKernelLayer) {
  const std::string path = testing::WriteTempFile(RefusedOpModel().Bytes(), "ort_refused.onnx");
  const tools::CheckReport r = tools::CheckModel(path, {});
  ASSERT_EQ(r.nodes.size(), 1u);
  const tools::NodeCheck& n = r.nodes[0];
  EXPECT_EQ(n.domain, "com.microsoft");
  EXPECT_EQ(n.verdict, tools::Verdict::kUnsupported);
  EXPECT_EQ(n.layer, FailureLayer::kKernel) << n.reason;
  EXPECT_TRUE(Contains(n.remedy, "ONNX Runtime contrib op com.microsoft::SampleOp")) << n.remedy;
  EXPECT_FALSE(Contains(n.remedy, "plugin")) << n.remedy;
  // The ORT-written model with kernels is runnable.
  const std::string ok = testing::WriteTempFile(OrtWrittenModel().Bytes(), "ort_written_check.onnx");
  for (const tools::NodeCheck& c : tools::CheckModel(ok, {}).nodes) {
    EXPECT_EQ(c.verdict, tools::Verdict::kNative) << c.name << ": " << c.reason;
  }
}

TEST(OrtContribModel, SessionRefusesAsUnsupportedNotInvalid) {
  const std::string path = testing::WriteTempFile(RefusedOpModel().Bytes(), "ort_refused_session.onnx");
  try {
    Session::Create(path);
    FAIL() << "a session ran an op no backend has";
  } catch (const InvalidModelError& e) {
    FAIL() << "a graph-layer error: " << e.what();
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(Contains(e.what(), "ONNX Runtime contrib op")) << e.what();
  }
}

}  // namespace
}  // namespace ferry
