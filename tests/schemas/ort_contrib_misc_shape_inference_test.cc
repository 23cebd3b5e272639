// Shape inference for ONNX Runtime's remaining contrib ops (group "misc", src/schemas/shape_inference/ort_misc.cc):
// one model per op family, imported and run through runtime::InferTypes; and the shapes that make a model invalid.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
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
constexpr int32_t kI8 = onnx::TensorProto::INT8;
constexpr int32_t kI16 = onnx::TensorProto::INT16;
constexpr int32_t kU16 = onnx::TensorProto::UINT16;
constexpr int32_t kI32 = onnx::TensorProto::INT32;
constexpr int32_t kI64 = onnx::TensorProto::INT64;
constexpr int32_t kStr = onnx::TensorProto::STRING;

ModelBuilder OrtModel() {
  ModelBuilder b(17);
  auto* op = b.proto().add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  return b;
}

onnx::NodeProto& Ms(ModelBuilder& b, const std::string& op, std::initializer_list<std::string> in,
                    std::initializer_list<std::string> out) {
  auto& n = b.Node(op, in, out);
  n.set_domain("com.microsoft");
  return n;
}

TEST(OrtContribMiscShapeInference, CropAndResizeMurmurHash3Tokenizer) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"N", "3", "H", "W"});
  InputDims(b, "rois", kF, {"R", "4"});
  InputDims(b, "idx", kI32, {"R"});
  auto* crop = b.graph().add_initializer();
  crop->set_name("crop");
  crop->set_data_type(kI32);
  crop->add_dims(2);
  crop->add_int32_data(7);
  crop->add_int32_data(5);
  Ms(b, "CropAndResize", {"x", "rois", "idx", "crop"}, {"crops"});
  InputDims(b, "keys", kI64, {"A", "2"});
  Ms(b, "MurmurHash3", {"keys"}, {"h_pos"});
  ModelBuilder::IntAttr(Ms(b, "MurmurHash3", {"keys"}, {"h_neg"}), "positive", 0);
  InputDims(b, "text", kStr, {"2", "3"});
  InputDims(b, "empty", kStr, {"0"});
  for (const char* in : {"text", "empty"}) {
    auto& t = Ms(b, "Tokenizer", {in}, {std::string(in) + "_tokens"});
    ModelBuilder::IntAttr(t, "mark", 0);
    ModelBuilder::IntAttr(t, "mincharnum", 1);
    auto* pad = t.add_attribute();
    pad->set_name("pad_value");
    pad->set_type(onnx::AttributeProto::STRING);
    pad->set_s("#");
    auto* exp = t.add_attribute();
    exp->set_name("tokenexp");
    exp->set_type(onnx::AttributeProto::STRING);
    exp->set_s("[a-z]+");
  }
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "crops"), "float32[R,3,7,5]");
  EXPECT_EQ(TypeOf(*m, "h_pos"), "uint32[A,2]");
  EXPECT_EQ(TypeOf(*m, "h_neg"), "int32[A,2]");
  EXPECT_EQ(TypeOf(*m, "text_tokens"), "string[2,3,?]");
  EXPECT_EQ(TypeOf(*m, "empty_tokens"), "string[0]");
}

TEST(OrtContribMiscShapeInference, DecodingHelpers) {
  ModelBuilder b = OrtModel();
  InputDims(b, "ids", kI64, {"B", "L"});
  InputDims(b, "scores", kF, {"B", "V"});
  ModelBuilder::IntAttr(Ms(b, "NGramRepeatBlock", {"ids", "scores"}, {"blocked"}), "ngram_size", 2);
  InputDims(b, "src", kI64, {"S"});
  InputDims(b, "cur", kI64, {"C"});
  InputDims(b, "prev", kI64, {"1"});
  InputDims(b, "pred", kI64, {"P"});
  Ms(b, "BifurcationDetector", {"src", "cur", "prev"}, {"tok0", "idx0"});
  Ms(b, "BifurcationDetector", {"src", "cur", "prev", "pred"}, {"tok1", "idx1"});
  InputDims(b, "cost", kF, {"1", "R", "Q"});
  Ms(b, "DynamicTimeWarping", {"cost"}, {"path"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "blocked"), "float32[B,V]");
  EXPECT_EQ(TypeOf(*m, "tok0"), "int64[C]");
  EXPECT_EQ(TypeOf(*m, "idx0"), "int64[1]");
  EXPECT_EQ(TypeOf(*m, "tok1"), "int64[?]");
  EXPECT_EQ(TypeOf(*m, "path"), "int32[2,?]");
}

TEST(OrtContribMiscShapeInference, UnfoldPoolsConvTransposePadMatMul) {
  ModelBuilder b = OrtModel();
  InputDims(b, "u", kF, {"N", "10", "4"});
  auto& unfold = Ms(b, "UnfoldTensor", {"u"}, {"windows"});
  ModelBuilder::IntAttr(unfold, "dim", 1);
  ModelBuilder::IntAttr(unfold, "size", 3);
  ModelBuilder::IntAttr(unfold, "step", 2);
  InputDims(b, "x", kF, {"N", "2", "7", "8"});
  InputDims(b, "mask", kI32, {"1", "1", "7", "8"});
  auto& mwm = Ms(b, "MaxpoolWithMask", {"x", "mask"}, {"masked"});
  Ints(mwm, "kernel_shape", {3, 2});
  Ints(mwm, "strides", {2, 2});
  InputDims(b, "nhwc", kI8, {"N", "7", "8", "3"});
  auto& nhwc = Ms(b, "NhwcMaxPool", {"nhwc"}, {"pooled"});
  Ints(nhwc, "kernel_shape", {2, 2});
  Ints(nhwc, "strides", {2, 2});
  ModelBuilder::IntAttr(nhwc, "ceil_mode", 1);
  b.FloatInitializer("w", {2, 3, 3, 3}, std::vector<float>(54, 0.0f));
  b.Int64Initializer("pads", {4}, {1, 0, 0, 1});
  auto& ct = Ms(b, "ConvTransposeWithDynamicPads", {"x", "w", "pads"}, {"deconv"});
  Ints(ct, "strides", {2, 2});
  InputDims(b, "dyn_pads", kI64, {"4"});
  Ms(b, "ConvTransposeWithDynamicPads", {"x", "w", "dyn_pads"}, {"deconv_dyn"});
  b.Int64Initializer("pad_amounts", {1, 8}, {0, 0, 1, 2, 0, 0, 3, 0});
  Ms(b, "Pad", {"x", "pad_amounts"}, {"padded"});
  InputDims(b, "a", kI16, {"B", "M", "K"});
  InputDims(b, "bm", kI16, {"K", "N"});
  InputDims(b, "ua", kU16, {"M", "K"});
  InputDims(b, "ub", kU16, {"K"});
  Ms(b, "MatMulInteger16", {"a", "bm"}, {"prod"});
  Ms(b, "MatMulInteger16", {"ua", "ub"}, {"uprod"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "windows"), "float32[N,4,4,3]");
  EXPECT_EQ(TypeOf(*m, "masked"), "float32[N,2,3,4]");
  EXPECT_EQ(TypeOf(*m, "pooled"), "int8[N,4,4,3]");
  // (7 - 1) * 2 + 3 - 1 - 0 = 14, (8 - 1) * 2 + 3 - 0 - 1 = 16; unknown pads leave the extents unknown.
  EXPECT_EQ(TypeOf(*m, "deconv"), "float32[N,3,14,16]");
  EXPECT_EQ(TypeOf(*m, "deconv_dyn"), "float32[N,3,?,?]");
  EXPECT_EQ(TypeOf(*m, "padded"), "float32[N,2,11,10]");
  EXPECT_EQ(TypeOf(*m, "prod"), "int32[B,M,N]");
  EXPECT_EQ(TypeOf(*m, "uprod"), "uint32[M]");
}

TEST(OrtContribMiscShapeInference, AttnLstm) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"S", "B", "3"});
  InputDims(b, "w", kF, {"2", "20", "7"});
  InputDims(b, "r", kF, {"2", "20", "5"});
  auto& n = Ms(b, "AttnLSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"});
  auto* dir = n.add_attribute();
  dir->set_name("direction");
  dir->set_type(onnx::AttributeProto::STRING);
  dir->set_s("bidirectional");
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[S,2,B,5]");
  EXPECT_EQ(TypeOf(*m, "y_h"), "float32[2,B,5]");
  EXPECT_EQ(TypeOf(*m, "y_c"), "float32[2,B,5]");
}

TEST(OrtContribMiscShapeInference, ShapesThatCannotRunAreInvalid) {
  {
    ModelBuilder b = OrtModel();
    InputDims(b, "u", kF, {"2", "3"});
    ModelBuilder::IntAttr(Ms(b, "UnfoldTensor", {"u"}, {"w"}), "size", 4);
    EXPECT_THROW(Infer(b), InvalidModelError);
  }
  {
    ModelBuilder b = OrtModel();
    InputDims(b, "a", kI16, {"2", "3"});
    InputDims(b, "c", kI16, {"4", "5"});
    Ms(b, "MatMulInteger16", {"a", "c"}, {"y"});
    try {
      Infer(b);
      ADD_FAILURE() << "inferred";
    } catch (const InvalidModelError& e) {
      EXPECT_NE(std::string(e.what()).find("inner dimensions"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ferry
