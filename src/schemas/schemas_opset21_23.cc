// Default-domain schema versions introduced in opsets 21-23, as data.
// Source: ONNX docs/Changelog.md (Version 21/22/23 of the default ONNX operator set).
#include "schemas/schema_opset_helpers.h"

namespace ferry::schemas {

using namespace types;  // NOLINT(build/namespaces)
using ir::AttrType;

namespace {

// The ops whose "all types" constraints grow with each new IR version's element types (opsets 21, 23, 24, 25).
constexpr const char* kAllTypeOps[] = {"Cast",     "CastLike", "Constant", "ConstantOfShape", "Flatten",
                                       "Identity", "If",       "Loop",     "Pad",             "Reshape",
                                       "Scan",     "Shape",    "Size",     "Squeeze",         "Transpose",
                                       "Unsqueeze"};

}  // namespace

void ExpandAllTypeOps(SchemaRegistry& r, int since, const TypeList& add) {
  for (const char* op : kAllTypeOps) r.Add(ExpandAllTypes(Derive(r, op, since), add));
}

void RegisterOpset21Schemas(SchemaRegistry& r) {
  ExpandAllTypeOps(r, 21, kInt4);

  r.Add(NewOp("DequantizeLinear", 21)
            .In("x", "T1")
            .In("x_scale", "T2")
            .OptIn("x_zero_point", "T1")
            .Out("y", "T2")
            .AttrInt("axis", 1)
            .AttrInt("block_size", 0)
            .Constrain("T1", Concat({Types({"int8", "uint8", "int16", "uint16", "int32"}), kInt4, kFloat8}))
            .Constrain("T2", Types({"float", "float16", "bfloat16"})));
  r.Add(NewOp("QuantizeLinear", 21)
            .In("x", "T1")
            .In("y_scale", "T1")
            .OptIn("y_zero_point", "T2")
            .Out("y", "T2")
            .AttrInt("axis", 1)
            .AttrInt("block_size", 0)
            .AttrInt("output_dtype", 0)
            .AttrInt("saturate", 1)
            .Constrain("T1", Types({"float", "float16", "bfloat16", "int32"}))
            .Constrain("T2", Concat({Types({"int8", "uint8", "int16", "uint16"}), kInt4, kFloat8})));
  const TypeList kQuant8 = Concat({Types({"int8", "uint8"}), kFloat8});
  r.Add(NewOp("QLinearMatMul", 21)
            .In("a", "T1")
            .In("a_scale", "TS")
            .In("a_zero_point", "T1")
            .In("b", "T2")
            .In("b_scale", "TS")
            .In("b_zero_point", "T2")
            .In("y_scale", "TS")
            .In("y_zero_point", "T3")
            .Out("y", "T3")
            .Constrain("TS", Types({"float", "float16", "bfloat16"}))
            .Constrain("T1", kQuant8)
            .Constrain("T2", kQuant8)
            .Constrain("T3", kQuant8));
  r.Add(Derive(r, "GroupNormalization", 21).AttrInt("stash_type", 1));
}

void RegisterOpset22Schemas(SchemaRegistry& r) {
  // Opset 22 adds bfloat16 wherever these ops accepted float.
  for (const char* op :
       {"EyeLike", "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial",
        "Bernoulli", "ThresholdedRelu", "Selu", "Elu", "Mish", "HardSigmoid", "HardSwish", "Softsign", "Softplus",
        "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Round", "Det",
        "NegativeLogLikelihoodLoss", "AveragePool", "MaxPool", "MaxUnpool", "LpPool", "MaxRoiPool", "Conv",
        "ConvTranspose", "DeformConv", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "InstanceNormalization",
        "LpNormalization", "Dropout", "RoiAlign", "RNN", "GRU", "LSTM", "GridSample"}) {
    r.Add(AddBfloat16(Derive(r, op, 22)));
  }
}

void RegisterOpset23Schemas(SchemaRegistry& r) {
  const TypeList kFloat4 = Types({"float4e2m1"});
  ExpandAllTypeOps(r, 23, kFloat4);

  r.Add(NewOp("Attention", 23)
            .In("Q", "T1")
            .In("K", "T1")
            .In("V", "T2")
            .OptIn("attn_mask", "U")
            .OptIn("past_key", "T1")
            .OptIn("past_value", "T2")
            .Out("Y", "T1")
            .OptOut("present_key", "T1")
            .OptOut("present_value", "T2")
            .OptOut("qk_matmul_output", "T1")
            .AttrInt("is_causal", 0)
            .AttrOptional("kv_num_heads", AttrType::kInt)
            .AttrOptional("q_num_heads", AttrType::kInt)
            .AttrInt("qk_matmul_output_mode", 0)
            .AttrOptional("scale", AttrType::kFloat)
            .AttrFloat("softcap", 0.0f)
            .AttrOptional("softmax_precision", AttrType::kInt)
            .Constrain("T1", kFloatBf)
            .Constrain("T2", kFloatBf)
            .Constrain("U", Concat({kIntUnsigned, kIntSigned, kFloatBf, Types({"bool"})})));

  r.Add(NewOp("DequantizeLinear", 23)
            .In("x", "T1")
            .In("x_scale", "T2")
            .OptIn("x_zero_point", "T1")
            .Out("y", "T3")
            .AttrInt("axis", 1)
            .AttrInt("block_size", 0)
            .AttrInt("output_dtype", 0)
            .Constrain("T1", Concat({Types({"int8", "uint8", "int16", "uint16", "int32"}), kInt4, kFloat8, kFloat4}))
            .Constrain("T2", Types({"float", "float16", "bfloat16"}))
            .Constrain("T3", Types({"float", "float16", "bfloat16"})));
  r.Add(NewOp("QuantizeLinear", 23)
            .In("x", "T1")
            .In("y_scale", "T2")
            .OptIn("y_zero_point", "T3")
            .Out("y", "T3")
            .AttrInt("axis", 1)
            .AttrInt("block_size", 0)
            .AttrInt("output_dtype", 0)
            .AttrInt("precision", 0)
            .AttrInt("saturate", 1)
            .Constrain("T1", Types({"float", "float16", "bfloat16", "int32"}))
            .Constrain("T2", Types({"float", "float16", "bfloat16", "int32"}))
            .Constrain("T3", Concat({Types({"int8", "uint8", "int16", "uint16"}), kInt4, kFloat8, kFloat4})));

  r.Add(NewOp("RMSNormalization", 23)
            .In("X", "T")
            .In("scale", "V")
            .Out("Y", "V")
            .AttrInt("axis", -1)
            .AttrFloat("epsilon", 1e-5f)
            .AttrInt("stash_type", 1)
            .Constrain("T", kFloatBf)
            .Constrain("V", kFloatBf));
  r.Add(NewOp("RotaryEmbedding", 23)
            .In("X", "T")
            .In("cos_cache", "T")
            .In("sin_cache", "T")
            .OptIn("position_ids", "M")
            .Out("Y", "T")
            .AttrInt("interleaved", 0)
            .AttrOptional("num_heads", AttrType::kInt)
            .AttrInt("rotary_embedding_dim", 0)
            .Constrain("T", Types({"float", "float16", "bfloat16"}))
            .Constrain("M", Types({"int64"})));
}

}  // namespace ferry::schemas
