// Shape inference for ONNX Runtime's com.microsoft.nchwc ops (src/schemas/shape_inference/nchwc.cc): one model per
// op family, imported and run through runtime::InferTypes at both block sizes (FERRY_NCHWC_BLOCK, which only
// ReorderInput's padded channel count depends on); and the shapes that make a model invalid, with their messages.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "ferry/error.h"
#include "shape_inference_test_util.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using ferry::testing::ModelBuilder;
using shape_inference_test::Infer;
using shape_inference_test::InputDims;
using shape_inference_test::Ints;
using shape_inference_test::TypeOf;

constexpr int32_t kF = onnx::TensorProto::FLOAT;

// Sets FERRY_NCHWC_BLOCK for the scope.
class ScopedBlock {
 public:
  explicit ScopedBlock(const std::string& value) {
    if (const char* old = std::getenv("FERRY_NCHWC_BLOCK")) old_ = old, had_ = true;
    setenv("FERRY_NCHWC_BLOCK", value.c_str(), 1);
  }
  ~ScopedBlock() {
    if (had_) {
      setenv("FERRY_NCHWC_BLOCK", old_.c_str(), 1);
    } else {
      unsetenv("FERRY_NCHWC_BLOCK");
    }
  }

 private:
  std::string old_;
  bool had_ = false;
};

ModelBuilder NchwcModel() {
  ModelBuilder b(17);
  auto* op = b.proto().add_opset_import();
  op->set_domain("com.microsoft.nchwc");
  op->set_version(1);
  return b;
}

onnx::NodeProto& Nchwc(ModelBuilder& b, const std::string& op, std::initializer_list<std::string> in,
                       std::initializer_list<std::string> out) {
  auto& n = b.Node(op, in, out);
  n.set_domain("com.microsoft.nchwc");
  return n;
}

void Str(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// The InvalidModelError message of inferring `b` ("" when it infers).
std::string Failure(ModelBuilder& b) {
  try {
    Infer(b);
  } catch (const InvalidModelError& e) {
    return e.what();
  }
  return "";
}

TEST(OrtContribNchwcShapeInference, ReorderInputPadsToTheBlock) {
  for (const auto& [block, c3, c20] : {std::tuple{"8", "8", "24"}, std::tuple{"16", "16", "32"}}) {
    ScopedBlock scoped(block);
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"N", "3", "H", "W"});
    InputDims(b, "nhwc", kF, {"N", "H", "W", "20"});
    InputDims(b, "c", kF, {"N", "C", "7", "9"});
    Nchwc(b, "ReorderInput", {"x"}, {"y"});
    ModelBuilder::IntAttr(Nchwc(b, "ReorderInput", {"nhwc"}, {"y_last"}), "channels_last", 1);
    Nchwc(b, "ReorderInput", {"c"}, {"y_c"});
    auto m = Infer(b);
    EXPECT_EQ(TypeOf(*m, "y"), std::string("float32[N,") + c3 + ",H,W]") << block;
    EXPECT_EQ(TypeOf(*m, "y_last"), std::string("float32[N,") + c20 + ",H,W]") << block;
    EXPECT_EQ(TypeOf(*m, "y_c"), "float32[N,?,7,9]");  // a symbolic C: the padded count is unknown
  }
  ScopedBlock bad("7");  // the kernel names the bad override; inference leaves the dim unknown
  ModelBuilder b = NchwcModel();
  InputDims(b, "x", kF, {"1", "3", "4", "4"});
  Nchwc(b, "ReorderInput", {"x"}, {"y"});
  EXPECT_EQ(TypeOf(*Infer(b), "y"), "float32[1,?,4,4]");
}

TEST(OrtContribNchwcShapeInference, ReorderOutputHasTheLogicalChannels) {
  ModelBuilder b = NchwcModel();
  InputDims(b, "x", kF, {"N", "16", "7", "W"});
  ModelBuilder::IntAttr(Nchwc(b, "ReorderOutput", {"x"}, {"y"}), "channels", 10);
  auto& last = Nchwc(b, "ReorderOutput", {"x"}, {"y_last"});
  ModelBuilder::IntAttr(last, "channels", 10);
  ModelBuilder::IntAttr(last, "channels_last", 1);
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[N,10,7,W]");
  EXPECT_EQ(TypeOf(*m, "y_last"), "float32[N,7,W,10]");
}

TEST(OrtContribNchwcShapeInference, ConvIsOnnxConvWithSum) {
  ScopedBlock scoped("8");
  ModelBuilder b = NchwcModel();
  InputDims(b, "x", kF, {"N", "16", "14", "14"});
  InputDims(b, "w", kF, {"32", "16", "3", "3"});
  InputDims(b, "bias", kF, {"32"});
  auto& strided = Nchwc(b, "Conv", {"x", "w", "bias"}, {"y"});
  Ints(strided, "pads", {1, 1, 1, 1});
  Ints(strided, "strides", {2, 2});
  Str(strided, "activation", "Relu");
  // A plain first layer (3 channels < the block), auto_pad SAME_UPPER.
  InputDims(b, "img", kF, {"1", "3", "224", "224"});
  InputDims(b, "w0", kF, {"16", "3", "7", "7"});
  auto& first = Nchwc(b, "Conv", {"img", "w0"}, {"y0"});
  Str(first, "auto_pad", "SAME_UPPER");
  Ints(first, "strides", {2, 2});
  // Depthwise, dilated; and a 1x1 conv over unknown spatial dims whose Sum gives them.
  InputDims(b, "dw", kF, {"16", "1", "3", "3"});
  auto& depthwise = Nchwc(b, "Conv", {"x", "dw"}, {"y_dw"});
  ModelBuilder::IntAttr(depthwise, "group", 16);
  Ints(depthwise, "dilations", {2, 2});
  InputDims(b, "xs", kF, {"1", "16", "?", "?"});
  InputDims(b, "w1", kF, {"16", "16", "1", "1"});
  InputDims(b, "sum", kF, {"1", "16", "5", "6"});
  Nchwc(b, "Conv", {"xs", "w1", "", "sum"}, {"y_sum"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[N,32,7,7]");
  EXPECT_EQ(TypeOf(*m, "y0"), "float32[1,16,112,112]");
  EXPECT_EQ(TypeOf(*m, "y_dw"), "float32[N,16,10,10]");
  EXPECT_EQ(TypeOf(*m, "y_sum"), "float32[1,16,5,6]");
}

TEST(OrtContribNchwcShapeInference, PoolsAndUpsample) {
  ModelBuilder b = NchwcModel();
  InputDims(b, "x", kF, {"N", "16", "10", "W"});
  auto& max = Nchwc(b, "MaxPool", {"x"}, {"max"});
  Ints(max, "kernel_shape", {3, 3});
  Ints(max, "strides", {2, 2});
  ModelBuilder::IntAttr(max, "ceil_mode", 1);
  auto& avg = Nchwc(b, "AveragePool", {"x"}, {"avg"});
  Ints(avg, "kernel_shape", {3, 3});
  Ints(avg, "pads", {1, 1, 1, 1});
  Nchwc(b, "GlobalMaxPool", {"x"}, {"gmax"});
  Nchwc(b, "GlobalAveragePool", {"x"}, {"gavg"});
  InputDims(b, "u", kF, {"N", "16", "H", "5"});
  Ints(Nchwc(b, "Upsample", {"u"}, {"up"}), "scales", {1, 1, 2, 3});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "max"), "float32[N,16,5,?]");  // ceil((10 - 3) / 2) + 1
  EXPECT_EQ(TypeOf(*m, "avg"), "float32[N,16,10,?]");
  EXPECT_EQ(TypeOf(*m, "gmax"), "float32[N,16,1,1]");
  EXPECT_EQ(TypeOf(*m, "gavg"), "float32[N,16,1,1]");
  EXPECT_EQ(TypeOf(*m, "up"), "float32[N,16,?,15]");
}

TEST(OrtContribNchwcShapeInference, ShapesThatCannotRunAreInvalid) {
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "16", "4", "4"});
    InputDims(b, "w", kF, {"8", "8", "1", "1"});
    Nchwc(b, "Conv", {"x", "w"}, {"y"});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("input X 'x' float32[1,16,4,4] has 16 channels, expected W[1] * group = 8"), std::string::npos)
        << e;
  }
  {
    // A file written for block 16 read with block 8: 20 channels reordered to 24, where W expects 32.
    ScopedBlock scoped("8");
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "20", "4", "4"});
    InputDims(b, "w", kF, {"32", "32", "1", "1"});
    Nchwc(b, "ReorderInput", {"x"}, {"xb"});
    Nchwc(b, "Conv", {"xb", "w"}, {"y"});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("has 24 channels, expected W[1] * group = 32"), std::string::npos) << e;
    EXPECT_NE(e.find("padded to the NCHWc block, here 8: FERRY_NCHWC_BLOCK=8 or 16 sets it"), std::string::npos) << e;
  }
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "8", "4", "4"});
    InputDims(b, "w", kF, {"8", "8", "1", "1"});
    InputDims(b, "sum", kF, {"1", "8", "4", "5"});
    Nchwc(b, "Conv", {"x", "w", "", "sum"}, {"y"});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("input Sum 'sum' float32[1,8,4,5] does not have Y's shape [1,8,4,4]"), std::string::npos) << e;
  }
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "8", "4"});
    Nchwc(b, "GlobalMaxPool", {"x"}, {"y"});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("must be 4-D"), std::string::npos) << e;
    EXPECT_NE(e.find("com.microsoft.nchwc::GlobalMaxPool"), std::string::npos) << e;
  }
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "8", "4", "4"});
    Ints(Nchwc(b, "Upsample", {"x"}, {"y"}), "scales", {1, 2, 2, 2});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("attribute scales = [1,2,2,2], expected [1, 1, sh, sw]"), std::string::npos) << e;
  }
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "8", "4", "4"});
    Nchwc(b, "ReorderOutput", {"x"}, {"y"});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("attribute channels = 0, expected > 0"), std::string::npos) << e;
  }
  {
    ModelBuilder b = NchwcModel();
    InputDims(b, "x", kF, {"1", "8", "2", "2"});
    Ints(Nchwc(b, "MaxPool", {"x"}, {"y"}), "kernel_shape", {3, 3});
    const std::string e = Failure(b);
    EXPECT_NE(e.find("too small"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace ferry
