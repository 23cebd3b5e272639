// ONNX Runtime's contrib schemas (src/schemas/schemas_ort_contrib.h): the ops ONNX Runtime's optimizers and
// quantizer emit are known with their arity and attribute defaults, com.microsoft and com.microsoft.nchwc are
// built-in domains at opset 1 (no plugin can claim them), the default-domain versions below ONNX's first one
// are ONNX Runtime's convention, and OriginOf names every origin.
#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::schemas {
namespace {

const SchemaRegistry& R() { return SchemaRegistry::Get(); }

struct Arity {
  const char* domain;
  const char* op;
  int min_in, max_in, min_out, max_out;
};

// ContribOperators.md's "Inputs (a - b)" / "Outputs (a - b)" for the first group of issue 27.
TEST(OrtContribSchemas, FirstGroupHasTheDocumentedArity) {
  const std::string ms(kMsDomain), nchwc(kMsNchwcDomain);
  const std::vector<Arity> ops = {
      {"com.microsoft", "FusedConv", 2, 4, 1, 1},
      {"com.microsoft", "FusedGemm", 2, 3, 1, 1},
      {"com.microsoft", "FusedMatMul", 2, 2, 1, 1},
      {"com.microsoft", "TransposeMatMul", 2, 2, 1, 1},
      {"com.microsoft", "BiasGelu", 2, 2, 1, 1},
      {"com.microsoft", "FastGelu", 1, 2, 1, 1},
      {"com.microsoft", "Gelu", 1, 1, 1, 1},
      {"com.microsoft", "QuickGelu", 1, 1, 1, 1},
      {"com.microsoft", "BiasAdd", 3, 3, 1, 1},
      {"com.microsoft", "SkipLayerNormalization", 3, 5, 1, 4},
      {"com.microsoft", "SkipSimplifiedLayerNormalization", 3, 4, 1, 4},
      {"com.microsoft", "SimplifiedLayerNormalization", 2, 2, 1, 2},
      {"", "SimplifiedLayerNormalization", 2, 2, 1, 2},
      {"com.microsoft", "EmbedLayerNormalization", 7, 9, 1, 3},
      {"com.microsoft", "Attention", 2, 7, 1, 2},
      {"com.microsoft", "MultiHeadAttention", 1, 10, 1, 4},
      {"com.microsoft", "RotaryEmbedding", 4, 4, 1, 1},
      {"com.microsoft", "GridSample", 2, 2, 1, 1},
      {"com.microsoft", "Inverse", 1, 1, 1, 1},
      {"com.microsoft", "Trilu", 1, 2, 1, 1},
      {"com.microsoft", "Range", 2, 3, 1, 1},
      {"com.microsoft", "Unique", 1, 1, 3, 3},
      {"com.microsoft", "ExpandDims", 2, 2, 1, 1},
      {"com.microsoft", "CDist", 2, 2, 1, 1},
      {"com.microsoft", "WordConvEmbedding", 4, 4, 1, 1},
      {"com.microsoft.nchwc", "ReorderInput", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "ReorderOutput", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "Conv", 2, 4, 1, 1},
      {"com.microsoft.nchwc", "MaxPool", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "AveragePool", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "GlobalAveragePool", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "GlobalMaxPool", 1, 1, 1, 1},
      {"com.microsoft.nchwc", "Upsample", 1, 1, 1, 1},
  };
  for (const Arity& a : ops) {
    SCOPED_TRACE(std::string(a.domain) + "::" + a.op);
    const OpSchema* s = R().Find(a.domain, a.op, 1);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->since_version, 1);
    EXPECT_EQ(s->min_inputs, a.min_in);
    EXPECT_EQ(s->max_inputs, a.max_in);
    EXPECT_EQ(s->min_outputs, a.min_out);
    EXPECT_EQ(s->max_outputs, a.max_out);
    EXPECT_FALSE(s->closed_attributes);  // a non-default domain tolerates attributes it does not list
  }
}

const AttrSchema& AttrOf(const char* domain, const char* op, const char* attr) {
  const OpSchema* s = R().Find(domain, op, 1);
  if (!s) throw InternalError(std::string("no schema ") + op);
  const AttrSchema* a = s->FindAttr(attr);
  if (!a) throw InternalError(std::string(op) + " has no attribute " + attr);
  return *a;
}

int64_t DefaultInt(const char* domain, const char* op, const char* attr) {
  const AttrSchema& a = AttrOf(domain, op, attr);
  EXPECT_TRUE(a.default_value.has_value()) << op << "." << attr;
  return a.default_value ? a.default_value->i : INT64_MIN;
}

float DefaultFloat(const char* domain, const char* op, const char* attr) {
  const AttrSchema& a = AttrOf(domain, op, attr);
  EXPECT_TRUE(a.default_value.has_value()) << op << "." << attr;
  return a.default_value ? a.default_value->f : -1.0f;
}

std::string DefaultString(const char* domain, const char* op, const char* attr) {
  const AttrSchema& a = AttrOf(domain, op, attr);
  EXPECT_TRUE(a.default_value.has_value()) << op << "." << attr;
  return a.default_value ? a.default_value->s : "<none>";
}

bool OptionalWithoutDefault(const char* domain, const char* op, const char* attr) {
  const AttrSchema& a = AttrOf(domain, op, attr);
  return !a.required && !a.default_value;
}

TEST(OrtContribSchemas, AttributeDefaultsAreOnnxRuntimes) {
  const char* ms = "com.microsoft";
  EXPECT_EQ(DefaultString(ms, "FusedConv", "auto_pad"), "NOTSET");
  EXPECT_EQ(DefaultInt(ms, "FusedConv", "group"), 1);
  EXPECT_TRUE(OptionalWithoutDefault(ms, "FusedConv", "activation"));
  EXPECT_TRUE(OptionalWithoutDefault(ms, "FusedConv", "activation_params"));
  EXPECT_EQ(DefaultFloat(ms, "FusedGemm", "alpha"), 1.0f);
  EXPECT_EQ(DefaultFloat(ms, "FusedGemm", "beta"), 1.0f);
  EXPECT_EQ(DefaultInt(ms, "FusedGemm", "transA"), 0);
  EXPECT_TRUE(OptionalWithoutDefault(ms, "FusedGemm", "activation_alpha"));
  for (const char* op : {"FusedMatMul", "TransposeMatMul"}) {
    EXPECT_EQ(DefaultFloat(ms, op, "alpha"), 1.0f);
    EXPECT_EQ(DefaultInt(ms, op, "transA"), 0);
    EXPECT_EQ(DefaultInt(ms, op, "transB"), 0);
  }
  EXPECT_EQ(DefaultInt(ms, "FusedMatMul", "transBatchA"), 0);
  EXPECT_EQ(DefaultInt(ms, "FusedMatMul", "transBatchB"), 0);
  EXPECT_EQ(R().Find(ms, "TransposeMatMul", 1)->FindAttr("transBatchA"), nullptr);
  EXPECT_FLOAT_EQ(DefaultFloat(ms, "QuickGelu", "alpha"), 1.702f);
  EXPECT_FLOAT_EQ(DefaultFloat(ms, "SkipLayerNormalization", "epsilon"), 1e-12f);
  EXPECT_FLOAT_EQ(DefaultFloat(ms, "SkipSimplifiedLayerNormalization", "epsilon"), 1e-12f);
  EXPECT_FLOAT_EQ(DefaultFloat(ms, "EmbedLayerNormalization", "epsilon"), 1e-12f);
  EXPECT_TRUE(OptionalWithoutDefault(ms, "EmbedLayerNormalization", "mask_index_type"));
  EXPECT_TRUE(AttrOf(ms, "Attention", "num_heads").required);
  EXPECT_EQ(DefaultInt(ms, "Attention", "unidirectional"), 0);
  EXPECT_TRUE(OptionalWithoutDefault(ms, "Attention", "scale"));
  EXPECT_TRUE(OptionalWithoutDefault(ms, "Attention", "qkv_hidden_sizes"));
  EXPECT_TRUE(AttrOf(ms, "MultiHeadAttention", "num_heads").required);
  EXPECT_EQ(DefaultInt(ms, "Trilu", "upper"), 1);
  EXPECT_EQ(DefaultString(ms, "GridSample", "mode"), "bilinear");
  EXPECT_EQ(DefaultString(ms, "GridSample", "padding_mode"), "zeros");
  EXPECT_EQ(DefaultInt(ms, "GridSample", "align_corners"), 0);
  EXPECT_EQ(DefaultString(ms, "CDist", "metric"), "sqeuclidean");
  for (const char* op : {"", "com.microsoft"}) {
    EXPECT_EQ(DefaultInt(op, "SimplifiedLayerNormalization", "axis"), -1);
    EXPECT_FLOAT_EQ(DefaultFloat(op, "SimplifiedLayerNormalization", "epsilon"), 1e-5f);
    EXPECT_EQ(DefaultInt(op, "SimplifiedLayerNormalization", "stash_type"), 1);
  }
  const char* nchwc = "com.microsoft.nchwc";
  EXPECT_EQ(DefaultInt(nchwc, "ReorderInput", "channels_last"), 0);
  EXPECT_EQ(DefaultInt(nchwc, "ReorderOutput", "channels"), 0);
  EXPECT_EQ(DefaultInt(nchwc, "Conv", "group"), 1);
  EXPECT_TRUE(AttrOf(nchwc, "MaxPool", "kernel_shape").required);
  EXPECT_EQ(DefaultInt(nchwc, "MaxPool", "storage_order"), 0);
  EXPECT_EQ(DefaultInt(nchwc, "AveragePool", "count_include_pad"), 0);
  EXPECT_EQ(DefaultString(nchwc, "Upsample", "mode"), "nearest");
  EXPECT_EQ(DefaultString(nchwc, "Upsample", "coordinate_transformation_mode"), "asymmetric");
}

TEST(OrtContribSchemas, TypeConstraintsAreOnnxRuntimes) {
  const OpSchema* attention = R().Find("com.microsoft", "Attention", 1);
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->InputTypeVar(3), "M");
  EXPECT_EQ(attention->FindTypeConstraint("M")->allowed, std::vector<std::string>{"tensor(int32)"});
  EXPECT_EQ(attention->FindTypeConstraint("T")->allowed,
            (std::vector<std::string>{"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}));
  const OpSchema* gemm = R().Find("com.microsoft", "FusedGemm", 1);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->FindTypeConstraint("T")->allowed.size(), 7u);  // float16, float, double, u/int32, u/int64
  const OpSchema* unique = R().Find("com.microsoft", "Unique", 1);
  ASSERT_NE(unique, nullptr);
  EXPECT_EQ(unique->outputs[1].type_str, "tensor(int64)");
  EXPECT_EQ(R().Find("com.microsoft", "ExpandDims", 1)->inputs[1].type_str, "tensor(int32)");
}

// The default-domain registrations ONNX Runtime makes below the first ONNX version, and their origin.
TEST(OrtContribSchemas, DefaultDomainConventionVersions) {
  const OpSchema* ln14 = R().Find("", "LayerNormalization", 14);
  ASSERT_NE(ln14, nullptr);
  EXPECT_EQ(ln14->since_version, 1);
  EXPECT_EQ(ln14->min_inputs, 2);
  EXPECT_EQ(ln14->max_inputs, 3);
  EXPECT_EQ(ln14->max_outputs, 3);
  EXPECT_EQ(ln14->InputTypeVar(1), "V");
  EXPECT_EQ(ln14->OutputTypeVar(1), "U");
  EXPECT_EQ(ln14->FindTypeConstraint("U")->allowed, (std::vector<std::string>{"tensor(float)", "tensor(double)"}));
  EXPECT_EQ(ln14->FindAttr("stash_type")->default_value->i, 1);
  EXPECT_EQ(ln14->FindAttr("epsilon")->default_value->f, 1e-5f);
  EXPECT_EQ(R().Find("", "LayerNormalization", 17)->since_version, 17);
  EXPECT_EQ(R().Find("", "SimplifiedLayerNormalization", 28)->since_version, 1);

  EXPECT_EQ(OriginOf("", "LayerNormalization", 14), OpOrigin::kOrtConvention);
  EXPECT_EQ(OriginOf("ai.onnx", "LayerNormalization", 16), OpOrigin::kOrtConvention);
  EXPECT_EQ(OriginOf("", "LayerNormalization", 17), OpOrigin::kOnnx);
  EXPECT_EQ(OriginOf("", "SimplifiedLayerNormalization", 21), OpOrigin::kOrtConvention);
  EXPECT_EQ(OriginOf("", "Relu", 14), OpOrigin::kOnnx);
  EXPECT_EQ(OriginOf("ai.onnx.ml", "LabelEncoder", 4), OpOrigin::kOnnx);
  EXPECT_EQ(OriginOf("com.microsoft", "FusedMatMul", 1), OpOrigin::kOrtContrib);
  EXPECT_EQ(OriginOf("com.microsoft.nchwc", "Conv", 1), OpOrigin::kOrtContrib);
  EXPECT_EQ(OriginOf("ai.ferry", "FusedConv", 1), OpOrigin::kFerry);
  EXPECT_EQ(OriginOf("com.example", "Foo", 1), OpOrigin::kUnknown);
  EXPECT_EQ(OriginName(OpOrigin::kOrtContrib), "ONNX Runtime contrib op");
  EXPECT_EQ(OriginName(OpOrigin::kOrtConvention),
            "ONNX Runtime convention (default-domain op below its first ONNX version)");
  // Every listed convention op has its version-1 schema in the default domain.
  for (const OrtDefaultDomainOp& o : OrtDefaultDomainOps()) {
    const auto versions = R().Versions("", o.op);
    ASSERT_FALSE(versions.empty()) << o.op;
    EXPECT_EQ(versions.front()->since_version, 1) << o.op;
    if (o.first_onnx_version > 0) {
      EXPECT_EQ(R().Find("", o.op, o.first_onnx_version)->since_version, o.first_onnx_version) << o.op;
    }
  }
}

TEST(OrtContribSchemas, ContribDomainsAreBuiltin) {
  for (const char* d : {"com.microsoft", "com.microsoft.nchwc"}) {
    EXPECT_TRUE(R().IsBuiltinDomain(d)) << d;
    EXPECT_EQ(R().MaxOpset(d), 1) << d;
    EXPECT_EQ(CanonicalDomain(d), d);
    OpSchema custom;
    custom.domain = d;
    custom.name = "MyPluginOp";
    EXPECT_THROW(SchemaRegistry::AddExtension(custom, 1), InvalidArgumentError) << d;
  }
  EXPECT_EQ(R().Find("com.microsoft", "FusedMatMul", 2)->since_version, 1);  // opset 1 is the only version
}

// The quantized and LLM ops of the second group, and the decoding loops, have schemas too.
TEST(OrtContribSchemas, SecondGroupIsKnown) {
  for (const char* op : {"QLinearConv",
                         "QLinearAdd",
                         "QLinearMul",
                         "QLinearSigmoid",
                         "QLinearLeakyRelu",
                         "QLinearAveragePool",
                         "QLinearGlobalAveragePool",
                         "QLinearConcat",
                         "QLinearSoftmax",
                         "QLinearWhere",
                         "QGemm",
                         "QAttention",
                         "MatMulIntegerToFloat",
                         "DynamicQuantizeMatMul",
                         "DynamicQuantizeLSTM",
                         "QEmbedLayerNormalization",
                         "QuantizeLinear",
                         "DequantizeLinear",
                         "GroupQueryAttention",
                         "MatMulNBits",
                         "GatherBlockQuantized",
                         "SparseAttention",
                         "DecoderMaskedMultiHeadAttention",
                         "DecoderMaskedSelfAttention",
                         "PackedAttention",
                         "PackedMultiHeadAttention",
                         "MoE",
                         "QMoE",
                         "BeamSearch",
                         "GreedySearch",
                         "Sampling",
                         "WhisperBeamSearch"}) {
    EXPECT_NE(R().Find("com.microsoft", op, 1), nullptr) << op;
  }
  const OpSchema* concat = R().Find("com.microsoft", "QLinearConcat", 1);
  EXPECT_EQ(concat->min_inputs, 3);
  EXPECT_EQ(concat->max_inputs, INT_MAX);
  EXPECT_FALSE(concat->inputs[2].homogeneous);
  const OpSchema* gqa = R().Find("com.microsoft", "GroupQueryAttention", 1);
  EXPECT_EQ(gqa->min_inputs, 7);
  EXPECT_EQ(gqa->max_inputs, 16);
  EXPECT_EQ(R().Find("com.microsoft", "QMoE", 1)->max_inputs, 21);
  EXPECT_EQ(R().Find("com.microsoft", "MatMulNBits", 1)->min_inputs, 3);
  const AttrSchema* decoder = R().Find("com.microsoft", "BeamSearch", 1)->FindAttr("decoder");
  ASSERT_NE(decoder, nullptr);
  EXPECT_TRUE(decoder->required);
  EXPECT_EQ(decoder->type, ir::AttrType::kGraph);
}

}  // namespace
}  // namespace ferry::schemas
