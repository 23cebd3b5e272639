// A model as ONNX Runtime's tools write it: com.microsoft::FusedMatMul and the default-domain LayerNormalization
// at opset 14 (ONNX Runtime's version 1). Import and type inference accept it; placement, `ferry check` and a
// session refuse it at the kernel layer (no backend has these kernels yet), naming the op and its origin, not at
// the graph layer as an unknown op or a plugin's.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

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

ModelBuilder OrtWrittenModel() {
  ModelBuilder b(14);
  auto* ms = b.proto().add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 4});
  b.FloatInitializer("w", {3, 4}, std::vector<float>(12, 0.25f));
  b.FloatInitializer("scale", {3}, {1.0f, 1.0f, 1.0f});
  b.FloatInitializer("bias", {3}, {0.0f, 0.0f, 0.0f});
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

TEST(OrtContribModel, PlacementFailsAtTheKernelLayerNamingTheOrigin) {
  auto model = Import(OrtWrittenModel());
  runtime::InferTypes(*model);
  const runtime::PlacementOptions options = runtime::ResolvePlacementOptions({"cpu", "ref"}, {}, {}, true);
  const runtime::Placement p = runtime::PlaceModel(*model, options);
  ASSERT_EQ(p.unplaced.size(), 2u);
  for (const runtime::UnplacedNode& u : p.unplaced) {
    EXPECT_EQ(u.layer, FailureLayer::kKernel) << u.node->op_type() << ": " << u.reason;
    EXPECT_TRUE(Contains(u.reason, u.node->op_type())) << u.reason;
  }
  try {
    runtime::RequireFullPlacement(*model, p);
    FAIL() << "placement accepted a model no backend can run";
  } catch (const InvalidModelError& e) {
    FAIL() << "a graph-layer error: " << e.what();
  } catch (const UnsupportedError& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(Contains(msg, "FusedMatMul (ONNX Runtime contrib op)")) << msg;
    EXPECT_TRUE(Contains(msg, "LayerNormalization")) << msg;
    EXPECT_TRUE(Contains(msg, "(ONNX Runtime convention (default-domain op below its first ONNX version))")) << msg;
    EXPECT_FALSE(Contains(msg, "--plugin")) << msg;
  }
}

TEST(OrtContribModel, CheckNamesTheContribOpAtTheKernelLayer) {
  const std::string path = testing::WriteTempFile(OrtWrittenModel().Bytes(), "ort_written.onnx");
  const tools::CheckReport r = tools::CheckModel(path, {});
  bool seen_matmul = false, seen_norm = false;
  for (const tools::NodeCheck& n : r.nodes) {
    if (n.name == "fused_matmul") {
      seen_matmul = true;
      EXPECT_EQ(n.domain, "com.microsoft");
      EXPECT_EQ(n.verdict, tools::Verdict::kUnsupported);
      EXPECT_EQ(n.layer, FailureLayer::kKernel) << n.reason;
      EXPECT_TRUE(Contains(n.remedy, "ONNX Runtime contrib op com.microsoft::FusedMatMul")) << n.remedy;
      EXPECT_FALSE(Contains(n.remedy, "plugin")) << n.remedy;
    }
    if (n.name == "layer_norm") {
      seen_norm = true;
      EXPECT_EQ(n.layer, FailureLayer::kKernel) << n.reason;
      EXPECT_TRUE(Contains(n.remedy, "ONNX Runtime convention")) << n.remedy;
    }
  }
  EXPECT_TRUE(seen_matmul);
  EXPECT_TRUE(seen_norm);
}

TEST(OrtContribModel, SessionRefusesAsUnsupportedNotInvalid) {
  const std::string path = testing::WriteTempFile(OrtWrittenModel().Bytes(), "ort_written_session.onnx");
  try {
    Session::Create(path);
    FAIL() << "a session ran ops no backend has";
  } catch (const InvalidModelError& e) {
    FAIL() << "a graph-layer error: " << e.what();
  } catch (const UnsupportedError& e) {
    EXPECT_TRUE(Contains(e.what(), "ONNX Runtime contrib op")) << e.what();
  }
}

}  // namespace
}  // namespace ferry
