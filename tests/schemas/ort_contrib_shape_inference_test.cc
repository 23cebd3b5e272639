// Shape inference for ONNX Runtime's contrib ops (src/schemas/shape_inference/transformer.cc and the families
// whose helpers they reuse): models built here, imported and run through runtime::InferTypes.
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
using shape_inference_test::InputDims;
using shape_inference_test::Infer;
using shape_inference_test::Ints;
using shape_inference_test::TypeOf;

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kI32 = onnx::TensorProto::INT32;
constexpr int32_t kI64 = onnx::TensorProto::INT64;

// A model importing com.microsoft (and com.microsoft.nchwc) at opset 1 beside the default domain.
ModelBuilder OrtModel(int64_t opset = 17) {
  ModelBuilder b(opset);
  for (const char* d : {"com.microsoft", "com.microsoft.nchwc"}) {
    auto* op = b.proto().add_opset_import();
    op->set_domain(d);
    op->set_version(1);
  }
  return b;
}

onnx::NodeProto& Ms(ModelBuilder& b, const std::string& op, std::initializer_list<std::string> in,
                    std::initializer_list<std::string> out) {
  auto& n = b.Node(op, in, out);
  n.set_domain("com.microsoft");
  return n;
}

void Int32Init(ModelBuilder& b, const std::string& name, std::vector<int32_t> values) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(kI32);
  for (int32_t v : values) t->add_int32_data(v);
}

TEST(OrtContribShapeInference, MatMulFamily) {
  ModelBuilder b = OrtModel();
  InputDims(b, "a", kF, {"B", "S", "K"});
  InputDims(b, "b", kF, {"B", "N", "K"});
  InputDims(b, "m", kF, {"M", "K"});
  InputDims(b, "w", kF, {"N", "K"});
  InputDims(b, "c", kF, {"N"});
  InputDims(b, "x4", kF, {"H", "B", "S", "K"});
  ModelBuilder::IntAttr(Ms(b, "FusedMatMul", {"a", "b"}, {"ab"}), "transB", 1);
  auto& ta = Ms(b, "TransposeMatMul", {"b", "a"}, {"ba"});
  ModelBuilder::IntAttr(ta, "transB", 1);
  auto& tt = Ms(b, "TransposeMatMul", {"a", "a"}, {"aa"});
  ModelBuilder::IntAttr(tt, "transA", 1);
  // transBatchA: [H, B, S, K] is read as [B, S, H, K] (the Transpose perm [1, 2, 0, 3]).
  auto& tb = Ms(b, "FusedMatMul", {"x4", "w"}, {"batch"});
  ModelBuilder::IntAttr(tb, "transBatchA", 1);
  ModelBuilder::IntAttr(tb, "transB", 1);
  auto& gemm = Ms(b, "FusedGemm", {"m", "w", "c"}, {"g"});
  ModelBuilder::IntAttr(gemm, "transB", 1);
  Ms(b, "CDist", {"m", "w"}, {"dist"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "ab"), "float32[B,S,N]");
  EXPECT_EQ(TypeOf(*m, "ba"), "float32[B,N,S]");
  EXPECT_EQ(TypeOf(*m, "aa"), "float32[B,K,K]");
  EXPECT_EQ(TypeOf(*m, "batch"), "float32[B,S,H,N]");
  EXPECT_EQ(TypeOf(*m, "g"), "float32[M,N]");
  EXPECT_EQ(TypeOf(*m, "dist"), "float32[M,N]");
}

TEST(OrtContribShapeInference, InnerDimensionsThatDifferAreInvalid) {
  ModelBuilder b = OrtModel();
  InputDims(b, "a", kF, {"2", "3"});
  InputDims(b, "b", kF, {"4", "5"});
  ModelBuilder::IntAttr(Ms(b, "FusedMatMul", {"a", "b"}, {"y"}), "transB", 1);
  EXPECT_THROW(Infer(b), InvalidModelError);
}

TEST(OrtContribShapeInference, ElementwiseAndTensorOps) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"N", "S", "64"});
  InputDims(b, "bias", kF, {"64"});
  InputDims(b, "sq", kF, {"N", "4", "4"});
  Int32Init(b, "axis", {1});
  Ms(b, "Gelu", {"x"}, {"gelu"});
  Ms(b, "BiasGelu", {"x", "bias"}, {"bgelu"});
  Ms(b, "FastGelu", {"x", "bias"}, {"fgelu"});
  Ms(b, "QuickGelu", {"x"}, {"qgelu"});
  Ms(b, "BiasAdd", {"x", "bias", "x"}, {"badd"});
  Ms(b, "Inverse", {"sq"}, {"inv"});
  Ms(b, "Trilu", {"sq"}, {"tri"});
  Ms(b, "ExpandDims", {"x", "axis"}, {"expanded"});
  Ms(b, "Unique", {"bias"}, {"u", "idx", "counts"});
  auto m = Infer(b);
  for (const char* v : {"gelu", "bgelu", "fgelu", "qgelu", "badd"}) EXPECT_EQ(TypeOf(*m, v), "float32[N,S,64]") << v;
  EXPECT_EQ(TypeOf(*m, "inv"), "float32[N,4,4]");
  EXPECT_EQ(TypeOf(*m, "tri"), "float32[N,4,4]");
  EXPECT_EQ(TypeOf(*m, "expanded"), "float32[N,1,S,64]");
  EXPECT_EQ(TypeOf(*m, "u"), "float32[?]");
  EXPECT_EQ(TypeOf(*m, "idx"), "int64[?]");
}

TEST(OrtContribShapeInference, RangeOfConstants) {
  ModelBuilder b = OrtModel();
  b.Int64Initializer("start", {}, {2});
  b.Int64Initializer("limit", {}, {11});
  b.Int64Initializer("delta", {}, {3});
  Ms(b, "Range", {"start", "limit", "delta"}, {"r"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "r"), "int64[3]");
}

TEST(OrtContribShapeInference, ConvFamily) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"N", "3", "32", "32"});
  b.FloatInitializer("w", {8, 3, 3, 3}, std::vector<float>(8 * 3 * 3 * 3, 0.5f));
  auto& conv = Ms(b, "FusedConv", {"x", "w"}, {"c"});
  Ints(conv, "pads", {1, 1, 1, 1});
  auto* act = conv.add_attribute();
  act->set_name("activation");
  act->set_type(onnx::AttributeProto::STRING);
  act->set_s("Relu");
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "c"), "float32[N,8,32,32]");
}

TEST(OrtContribShapeInference, Normalizations) {
  ModelBuilder b = OrtModel(14);
  InputDims(b, "x", kF, {"B", "S", "768"});
  InputDims(b, "skip", kF, {"B", "S", "768"});
  InputDims(b, "gamma", kF, {"768"});
  Ms(b, "SkipLayerNormalization", {"x", "skip", "gamma"}, {"y", "mean", "inv", "sum"});
  Ms(b, "SkipSimplifiedLayerNormalization", {"x", "skip", "gamma"}, {"ys", "", "", "sums"});
  Ms(b, "SimplifiedLayerNormalization", {"x", "gamma"}, {"rms"});
  b.Node("SimplifiedLayerNormalization", {"x", "gamma"}, {"rms_default", "rms_inv"});
  b.Node("LayerNormalization", {"x", "gamma", "gamma"}, {"ln", "ln_mean"});  // ONNX Runtime's version 1
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "mean"), "float32[B,S,1]");
  EXPECT_EQ(TypeOf(*m, "inv"), "float32[B,S,1]");
  EXPECT_EQ(TypeOf(*m, "sum"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "ys"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "sums"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "rms"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "rms_default"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "rms_inv"), "float32[B,S,1]");
  EXPECT_EQ(TypeOf(*m, "ln"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "ln_mean"), "float32[B,S,1]");
}

TEST(OrtContribShapeInference, EmbedLayerNormalization) {
  ModelBuilder b = OrtModel();
  InputDims(b, "ids", kI32, {"B", "S"});
  InputDims(b, "word", kF, {"30522", "768"});
  InputDims(b, "pos", kF, {"512", "768"});
  InputDims(b, "gamma", kF, {"768"});
  Ms(b, "EmbedLayerNormalization", {"ids", "", "word", "pos", "", "gamma", "gamma"}, {"out", "mask_index"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "out"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "mask_index"), "int32[B]");
}

TEST(OrtContribShapeInference, Attention) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"B", "S", "768"});
  InputDims(b, "w", kF, {"768", "2304"});
  InputDims(b, "bias", kF, {"2304"});
  InputDims(b, "past", kF, {"2", "B", "12", "7", "64"});
  auto& a = Ms(b, "Attention", {"x", "w", "bias"}, {"y"});
  ModelBuilder::IntAttr(a, "num_heads", 12);
  auto& q = Ms(b, "Attention", {"x", "w", "bias", "", "past"}, {"y2", "present"});
  ModelBuilder::IntAttr(q, "num_heads", 12);
  auto& sizes = Ms(b, "Attention", {"x", "w"}, {"y3"});
  ModelBuilder::IntAttr(sizes, "num_heads", 12);
  Ints(sizes, "qkv_hidden_sizes", {768, 768, 768});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "y2"), "float32[B,S,768]");
  EXPECT_EQ(TypeOf(*m, "present"), "float32[2,B,12,?,64]");  // 7 + S
  EXPECT_EQ(TypeOf(*m, "y3"), "float32[B,S,768]");
}

TEST(OrtContribShapeInference, AttentionWithStaticPastGrowsThePresent) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"1", "1", "64"});
  InputDims(b, "w", kF, {"64", "192"});
  InputDims(b, "past", kF, {"2", "1", "4", "7", "16"});
  ModelBuilder::IntAttr(Ms(b, "Attention", {"x", "w", "", "", "past"}, {"y", "present"}), "num_heads", 4);
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[1,1,64]");
  EXPECT_EQ(TypeOf(*m, "present"), "float32[2,1,4,8,16]");
}

TEST(OrtContribShapeInference, MultiHeadAttention) {
  ModelBuilder b = OrtModel();
  InputDims(b, "q", kF, {"B", "S", "512"});
  InputDims(b, "k", kF, {"B", "L", "512"});
  InputDims(b, "v", kF, {"B", "L", "256"});
  InputDims(b, "qkv", kF, {"B", "S", "8", "3", "64"});
  InputDims(b, "past_k", kF, {"B", "8", "5", "64"});
  InputDims(b, "k1", kF, {"B", "3", "512"});
  ModelBuilder::IntAttr(Ms(b, "MultiHeadAttention", {"q", "k", "v"}, {"y"}), "num_heads", 8);
  ModelBuilder::IntAttr(Ms(b, "MultiHeadAttention", {"qkv"}, {"packed"}), "num_heads", 8);
  auto& cached = Ms(b, "MultiHeadAttention", {"q", "k1", "k1", "", "", "", "past_k", "past_k"},
                    {"yc", "present_k", "present_v"});
  ModelBuilder::IntAttr(cached, "num_heads", 8);
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[B,S,256]");
  EXPECT_EQ(TypeOf(*m, "packed"), "float32[B,S,512]");
  EXPECT_EQ(TypeOf(*m, "yc"), "float32[B,S,512]");
  EXPECT_EQ(TypeOf(*m, "present_k"), "float32[B,8,8,64]");
  EXPECT_EQ(TypeOf(*m, "present_v"), "float32[B,8,8,64]");
}

TEST(OrtContribShapeInference, AttentionRanksOutsideTheOpAreInvalid) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"B", "768"});
  InputDims(b, "w", kF, {"768", "2304"});
  ModelBuilder::IntAttr(Ms(b, "Attention", {"x", "w"}, {"y"}), "num_heads", 12);
  EXPECT_THROW(Infer(b), InvalidModelError);
}

TEST(OrtContribShapeInference, GridSampleKeepsTheInputType) {
  ModelBuilder b = OrtModel();
  InputDims(b, "x", kF, {"N", "3", "8", "8"});
  InputDims(b, "grid", kF, {"N", "4", "5", "2"});
  Ms(b, "GridSample", {"x", "grid"}, {"y"});
  auto m = Infer(b);
  EXPECT_EQ(TypeOf(*m, "y"), "float32[N,3,4,5]");
}

}  // namespace
}  // namespace ferry
