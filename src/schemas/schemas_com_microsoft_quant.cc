// com.microsoft quantized ops that ONNX Runtime's quantizer and model builders emit (schemas_ort_contrib.h):
// the QLinear* family (8-bit tensors with per-tensor scale and zero point), QGemm, QAttention, the dynamic
// quantization fusions, com.microsoft's QuantizeLinear / DequantizeLinear (16-bit and 4-bit types before ONNX
// had them), the block-quantized weight ops (MatMulNBits, GatherBlockQuantized) and the mixtures of experts.
// Schemas only. Attributes whose default ONNX Runtime applies in its kernels are optional without a default.
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

namespace {

// (X, X_scale, X_zero_point?, Y_scale, Y_zero_point?) -> Y, 8-bit T: QLinearSigmoid, QLinearLeakyRelu.
SchemaEdit QLinearUnary(const std::string& domain, const char* name) {
  return std::move(NewOp(name, 1, domain)
                       .In("X", "T")
                       .In("X_scale", "tensor(float)")
                       .OptIn("X_zero_point", "T")
                       .In("Y_scale", "tensor(float)")
                       .OptIn("Y_zero_point", "T")
                       .Out("Y", "T")
                       .Constrain("T", Types({"uint8", "int8"})));
}

// (A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?) -> C: QLinearAdd, QLinearMul.
SchemaEdit QLinearBinary(const std::string& domain, const char* name) {
  return std::move(NewOp(name, 1, domain)
                       .In("A", "T")
                       .In("A_scale", "tensor(float)")
                       .OptIn("A_zero_point", "T")
                       .In("B", "T")
                       .In("B_scale", "tensor(float)")
                       .OptIn("B_zero_point", "T")
                       .In("C_scale", "tensor(float)")
                       .OptIn("C_zero_point", "T")
                       .Out("C", "T")
                       .Constrain("T", Types({"uint8", "int8"})));
}

}  // namespace

void RegisterMsQuantSchemas(SchemaRegistry& r) {
  const std::string d(kMsDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  const TypeList i8 = Types({"int8", "uint8"});
  const TypeList fl = Types({"float"});

  SchemaEdit conv = op("QLinearConv")
                        .In("x", "T1")
                        .In("x_scale", "tensor(float)")
                        .In("x_zero_point", "T1")
                        .In("w", "T2")
                        .In("w_scale", "tensor(float)")
                        .In("w_zero_point", "T2")
                        .In("y_scale", "tensor(float)")
                        .In("y_zero_point", "T3")
                        .OptIn("B", "T4")
                        .Out("y", "T3")
                        .Constrain("T1", i8)
                        .Constrain("T2", i8)
                        .Constrain("T3", i8)
                        .Constrain("T4", Types({"int32"}));
  AttrsOptional(conv, AttrType::kString, {"auto_pad"});
  AttrsOptional(conv, AttrType::kInt, {"channels_last", "group"});
  AttrsOptional(conv, AttrType::kInts, {"dilations", "kernel_shape", "pads", "strides"});
  r.Add(std::move(conv));
  r.Add(QLinearBinary(d, "QLinearAdd"));
  r.Add(QLinearBinary(d, "QLinearMul"));
  r.Add(QLinearUnary(d, "QLinearSigmoid"));
  r.Add(QLinearUnary(d, "QLinearLeakyRelu").AttrOptional("alpha", AttrType::kFloat));
  SchemaEdit avg = op("QLinearAveragePool")
                       .In("X", "T")
                       .In("x_scale", "tensor(float)")
                       .OptIn("x_zero_point", "T")
                       .In("y_scale", "tensor(float)")
                       .OptIn("y_zero_point", "T")
                       .Out("Y", "T")
                       .AttrRequired("kernel_shape", AttrType::kInts)
                       .Constrain("T", Types({"uint8", "int8"}));
  AttrsOptional(avg, AttrType::kString, {"auto_pad"});
  AttrsOptional(avg, AttrType::kInt, {"ceil_mode", "channels_last", "count_include_pad"});
  AttrsOptional(avg, AttrType::kInts, {"pads", "strides"});
  r.Add(std::move(avg));
  r.Add(op("QLinearGlobalAveragePool")
            .In("X", "T")
            .In("x_scale", "tensor(float)")
            .In("x_zero_point", "T")
            .In("y_scale", "tensor(float)")
            .In("y_zero_point", "T")
            .Out("Y", "T")
            .AttrOptional("channels_last", AttrType::kInt)
            .Constrain("T", Types({"uint8", "int8"})));
  r.Add(op("QLinearConcat")
            .In("Y_scale", "TF")
            .In("Y_zero_point", "T8")
            .VarIn("inputs", "TV", 1, false)
            .Out("Y", "T8")
            .AttrRequired("axis", AttrType::kInt)
            .Constrain("T8", Types({"uint8", "int8"}))
            .Constrain("TF", fl)
            .Constrain("TV", Types({"uint8", "int8", "float"})));
  r.Add(op("QLinearSoftmax")
            .In("X", "T")
            .In("X_scale", "tensor(float)")
            .OptIn("x_zero_point", "T")
            .In("y_scale", "tensor(float)")
            .In("y_zero_point", "T")
            .Out("Y", "T")
            .AttrOptional("axis", AttrType::kInt)
            .AttrRequired("opset", AttrType::kInt)
            .Constrain("T", Types({"uint8", "int8"})));
  r.Add(op("QLinearWhere")
            .In("condition", "B")
            .In("X", "T")
            .In("x_scale", "TF")
            .In("x_zero_point", "T")
            .In("Y", "T")
            .In("y_scale", "TF")
            .In("y_zero_point", "T")
            .In("z_scale", "TF")
            .In("z_zero_point", "T")
            .Out("Z", "T")
            .Constrain("B", Types({"bool"}))
            .Constrain("TF", fl)
            .Constrain("T", Types({"uint8", "int8"})));
  SchemaEdit qgemm = op("QGemm")
                         .In("A", "TA")
                         .In("a_scale", "T")
                         .In("a_zero_point", "TA")
                         .In("B", "TB")
                         .In("b_scale", "T")
                         .In("b_zero_point", "TB")
                         .OptIn("C", "TC")
                         .OptIn("y_scale", "T")
                         .OptIn("y_zero_point", "TYZ")
                         .Out("Y", "TY")
                         .Constrain("T", fl)
                         .Constrain("TA", Types({"uint8", "int8"}))
                         .Constrain("TB", Types({"uint8", "int8"}))
                         .Constrain("TC", Types({"int32"}))
                         .Constrain("TYZ", Types({"uint8", "int8"}))
                         .Constrain("TY", Types({"float", "uint8", "int8"}));
  AttrsOptional(qgemm, AttrType::kFloat, {"alpha"});
  AttrsOptional(qgemm, AttrType::kInt, {"transA", "transB"});
  r.Add(std::move(qgemm));
  SchemaEdit qattention = op("QAttention")
                              .In("input", "T1")
                              .In("weight", "T2")
                              .In("bias", "T3")
                              .In("input_scale", "T3")
                              .In("weight_scale", "T3")
                              .OptIn("mask_index", "T4")
                              .OptIn("input_zero_point", "T1")
                              .OptIn("weight_zero_point", "T2")
                              .OptIn("past", "T3")
                              .Out("output", "T3")
                              .OptOut("present", "T3")
                              .AttrRequired("num_heads", AttrType::kInt)
                              .Constrain("T1", i8)
                              .Constrain("T2", i8)
                              .Constrain("T3", Types({"float", "float16"}))
                              .Constrain("T4", Types({"int32"}));
  AttrsOptional(qattention, AttrType::kInt, {"do_rotary", "past_present_share_buffer", "unidirectional"});
  AttrsOptional(qattention, AttrType::kFloat, {"mask_filter_value", "scale"});
  r.Add(std::move(qattention));
  r.Add(op("MatMulIntegerToFloat")
            .In("A", "T1")
            .In("B", "T2")
            .In("a_scale", "T3")
            .In("b_scale", "T3")
            .OptIn("a_zero_point", "T1")
            .OptIn("b_zero_point", "T2")
            .OptIn("bias", "T3")
            .Out("Y", "T3")
            .Constrain("T1", i8)
            .Constrain("T2", i8)
            .Constrain("T3", Types({"float", "float16"})));
  r.Add(op("DynamicQuantizeMatMul")
            .In("A", "T1")
            .In("B", "T2")
            .In("b_scale", "T1")
            .OptIn("b_zero_point", "T2")
            .OptIn("bias", "T1")
            .Out("Y", "T1")
            .Constrain("T1", fl)
            .Constrain("T2", i8));
  SchemaEdit lstm = op("DynamicQuantizeLSTM")
                        .In("X", "T")
                        .In("W", "T2")
                        .In("R", "T2")
                        .OptIn("B", "T")
                        .OptIn("sequence_lens", "T1")
                        .OptIn("initial_h", "T")
                        .OptIn("initial_c", "T")
                        .OptIn("P", "T")
                        .In("W_scale", "T")
                        .In("W_zero_point", "T2")
                        .In("R_scale", "T")
                        .In("R_zero_point", "T2")
                        .OptOut("Y", "T")
                        .OptOut("Y_h", "T")
                        .OptOut("Y_c", "T")
                        .Constrain("T", fl)
                        .Constrain("T1", Types({"int32"}))
                        .Constrain("T2", Types({"uint8", "int8"}));
  AttrsOptional(lstm, AttrType::kFloats, {"activation_alpha", "activation_beta"});
  AttrsOptional(lstm, AttrType::kStrings, {"activations"});
  AttrsOptional(lstm, AttrType::kFloat, {"clip"});
  AttrsOptional(lstm, AttrType::kString, {"direction"});
  AttrsOptional(lstm, AttrType::kInt, {"hidden_size", "input_forget"});
  r.Add(std::move(lstm));
  r.Add(op("QEmbedLayerNormalization")
            .In("input_ids", "T1")
            .OptIn("segment_ids", "T1")
            .In("word_embedding_quant", "T2")
            .In("position_embedding_quant", "T2")
            .OptIn("segment_embedding", "T2")
            .In("gamma_quant", "T2")
            .In("beta_quant", "T2")
            .OptIn("mask", "T1")
            .In("word_embedding_scale", "T")
            .In("position_embedding_scale", "T")
            .OptIn("segment_embedding_scale", "T")
            .In("gamma_scale", "T")
            .In("beta_scale", "T")
            .In("word_embedding_zero_point", "T2")
            .In("position_embedding_zero_point", "T2")
            .OptIn("segment_embedding_zero_point", "T2")
            .In("gamma_zero_point", "T2")
            .In("beta_zero_point", "T2")
            .Out("layernorm_out", "T")
            .Out("mask_index_out", "T1")
            .AttrOptional("epsilon", AttrType::kFloat)
            .Constrain("T1", Types({"int32"}))
            .Constrain("T2", i8)
            .Constrain("T", fl));
  r.Add(op("QuantizeLinear")
            .In("x", "T1")
            .In("y_scale", "T1")
            .OptIn("y_zero_point", "T2")
            .Out("y", "T2")
            .AttrOptional("axis", AttrType::kInt)
            .Constrain("T1", Types({"float16", "float"}))
            .Constrain("T2", Types({"int8", "uint8", "int16", "uint16", "int4", "uint4"})));
  r.Add(op("DequantizeLinear")
            .In("x", "T1")
            .In("x_scale", "T2")
            .OptIn("x_zero_point", "T1")
            .Out("y", "T2")
            .AttrOptional("axis", AttrType::kInt)
            .Constrain("T1", Types({"int8", "uint8", "int16", "uint16", "int32", "int4", "uint4"}))
            .Constrain("T2", Types({"float16", "float"})));
  r.Add(op("MatMulNBits")
            .In("A", "T1")
            .In("B", "T2")
            .In("scales", "T1")
            .OptIn("zero_points", "T3")
            .OptIn("g_idx", "T4")
            .OptIn("bias", "T1")
            .Out("Y", "T1")
            .AttrRequired("K", AttrType::kInt)
            .AttrRequired("N", AttrType::kInt)
            .AttrRequired("block_size", AttrType::kInt)
            .AttrOptional("accuracy_level", AttrType::kInt)
            .AttrOptional("bits", AttrType::kInt)
            .AttrOptional("weight_prepacked", AttrType::kInt)
            .Constrain("T1", Types({"float", "float16", "bfloat16"}))
            .Constrain("T2", Types({"uint8"}))
            .Constrain("T3", Types({"uint8", "float16", "float", "bfloat16"}))
            .Constrain("T4", Types({"int32"})));
  SchemaEdit gather = op("GatherBlockQuantized")
                          .In("data", "T1")
                          .In("indices", "Tind")
                          .In("scales", "T2")
                          .OptIn("zero_points", "T1")
                          .Out("output", "T2")
                          .Constrain("T1", Types({"int4", "uint4", "uint8", "float8e4m3fn", "float8e4m3fnuz",
                                                  "float8e5m2", "float8e5m2fnuz", "float4e2m1"}))
                          .Constrain("T2", Types({"float", "float16", "bfloat16"}))
                          .Constrain("Tind", Types({"int32", "int64"}));
  AttrsOptional(gather, AttrType::kInt, {"bits", "block_size", "gather_axis", "quantize_axis"});
  r.Add(std::move(gather));

  const TypeList moe_types = Types({"float", "float16", "bfloat16"});
  SchemaEdit moe = op("MoE")
                       .In("input", "T")
                       .In("router_probs", "T")
                       .In("fc1_experts_weights", "T")
                       .OptIn("fc1_experts_bias", "T")
                       .In("fc2_experts_weights", "T")
                       .OptIn("fc2_experts_bias", "T")
                       .OptIn("fc3_experts_weights", "T")
                       .OptIn("fc3_experts_bias", "T")
                       .Out("output", "T")
                       .Constrain("T", moe_types);
  AttrsOptional(moe, AttrType::kFloat, {"activation_alpha", "activation_beta", "swiglu_limit"});
  AttrsOptional(moe, AttrType::kString, {"activation_type"});
  AttrsOptional(moe, AttrType::kInt, {"k", "normalize_routing_weights", "swiglu_fusion", "use_sparse_mixer"});
  r.Add(std::move(moe));
  SchemaEdit qmoe = op("QMoE")
                        .In("input", "T")
                        .In("router_probs", "T")
                        .In("fc1_experts_weights", "T1")
                        .OptIn("fc1_scales", "T2")
                        .OptIn("fc1_experts_bias", "T")
                        .In("fc2_experts_weights", "T1")
                        .OptIn("fc2_scales", "T2")
                        .OptIn("fc2_experts_bias", "T")
                        .OptIn("fc3_experts_weights", "T1")
                        .OptIn("fc3_scales", "T2")
                        .OptIn("fc3_experts_bias", "T")
                        .OptIn("fc1_zero_points", "T1")
                        .OptIn("fc2_zero_points", "T1")
                        .OptIn("fc3_zero_points", "T1")
                        .OptIn("router_weights", "T")
                        .OptIn("fc1_global_scale", "T4")
                        .OptIn("fc2_global_scale", "T4")
                        .OptIn("fc1_act_scale", "T4")
                        .OptIn("fc2_act_scale", "T4")
                        .OptIn("fc1_act_block_scale", "T2")
                        .OptIn("fc2_act_block_scale", "T2")
                        .Out("output", "T")
                        .Constrain("T", moe_types)
                        .Constrain("T1", Types({"uint8", "float8e4m3fn"}))
                        .Constrain("T2", Types({"float", "float16", "bfloat16", "float8e8m0", "float8e4m3fn"}))
                        .Constrain("T4", fl);
  AttrsOptional(qmoe, AttrType::kFloat, {"activation_alpha", "activation_beta", "swiglu_limit"});
  AttrsOptional(qmoe, AttrType::kString, {"activation_type", "quant_type"});
  AttrsOptional(qmoe, AttrType::kInt,
                {"accuracy_level", "block_size", "expert_weight_bits", "k", "normalize_routing_weights",
                 "swiglu_fusion", "use_sparse_mixer", "weights_prepacked"});
  r.Add(std::move(qmoe));
}

}  // namespace ferry::schemas
