// com.microsoft normalizations and attention that ONNX Runtime's transformer optimizer emits (schemas_ort_contrib.h).
//
// SkipLayerNormalization(input, skip, gamma, beta?, bias?) -> (output, mean?, inv_std_var?, input_skip_bias_sum?)
//   LayerNormalization over the last dim of S = input + skip (+ bias); `epsilon` 1e-12. skip is [B, S, H],
//   [1, S, H] or [S, H]; gamma, beta, bias [H].
// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) -> (output, mean?, inv_std_var?, input_skip_bias_sum?)
//   the same with RMS normalization (no beta).
// SimplifiedLayerNormalization(X, scale) -> (Y, inv_std_var?)   RMS normalization over [axis, rank); the
//   interface of the default-domain registration (schemas_ort_default_domain.cc), which models also carry under
//   com.microsoft.
// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?, gamma,
//   beta, mask?, position_ids?) -> (output, mask_index?, embedding_sum?)   BERT's embedding sum, layer-normalized.
// Attention(input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?) -> (output, present?)
//   multi-head attention with the Q/K/V projections merged in `weights`; `num_heads` required.
// MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?, past_value?,
//   past_sequence_length?, cache_indirection?) -> (output, present_key?, present_value?, qk?)   attention on
//   projected Q, K, V (or packed QKV / KV); `num_heads` required.
// RotaryEmbedding(input, position_ids, cos_cache, sin_cache) -> output   RoPE; output has the input's shape.
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

namespace {

constexpr float kSkipLayerNormEpsilon = 1e-12f;  // ONNX Runtime's default for the skip and embed norms

}  // namespace

void RegisterMsTransformerSchemas(SchemaRegistry& r) {
  const std::string d(kMsDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  const TypeList attention_types = Types({"float", "float16", "bfloat16"});

  r.Add(op("SkipLayerNormalization")
            .In("input", "T")
            .In("skip", "T")
            .In("gamma", "T")
            .OptIn("beta", "T")
            .OptIn("bias", "T")
            .Out("output", "T")
            .OptOut("mean", "U")
            .OptOut("inv_std_var", "U")
            .OptOut("input_skip_bias_sum", "T")
            .AttrFloat("epsilon", kSkipLayerNormEpsilon)
            .Constrain("T", attention_types)
            .Constrain("U", Types({"float"})));
  r.Add(op("SkipSimplifiedLayerNormalization")
            .In("input", "T")
            .In("skip", "T")
            .In("gamma", "T")
            .OptIn("bias", "T")
            .Out("output", "T")
            .OptOut("mean", "U")
            .OptOut("inv_std_var", "U")
            .OptOut("input_skip_bias_sum", "T")
            .AttrFloat("epsilon", kSkipLayerNormEpsilon)
            .Constrain("T", attention_types)
            .Constrain("U", Types({"float"})));
  r.Add(SimplifiedLayerNormalizationSchema(d));
  r.Add(op("EmbedLayerNormalization")
            .In("input_ids", "T1")
            .OptIn("segment_ids", "T1")
            .In("word_embedding", "T")
            .In("position_embedding", "T")
            .OptIn("segment_embedding", "T")
            .In("gamma", "T")
            .In("beta", "T")
            .OptIn("mask", "T1")
            .OptIn("position_ids", "T1")
            .Out("output", "T")
            .OptOut("mask_index", "T1")
            .OptOut("embedding_sum", "T")
            .AttrFloat("epsilon", kSkipLayerNormEpsilon)
            .AttrOptional("mask_index_type", AttrType::kInt)
            .Constrain("T1", Types({"int32"}))
            .Constrain("T", Types({"float", "float16"})));
  r.Add(op("Attention")
            .In("input", "T")
            .In("weights", "T")
            .OptIn("bias", "T")
            .OptIn("mask_index", "M")
            .OptIn("past", "T")
            .OptIn("attention_bias", "T")
            .OptIn("past_sequence_length", "M")
            .Out("output", "T")
            .OptOut("present", "T")
            .AttrRequired("num_heads", AttrType::kInt)
            .AttrInt("unidirectional", 0)
            .AttrOptional("qkv_hidden_sizes", AttrType::kInts)
            .AttrOptional("past_present_share_buffer", AttrType::kInt)
            .AttrOptional("do_rotary", AttrType::kInt)
            .AttrOptional("rotary_embedding_dim", AttrType::kInt)
            .AttrOptional("mask_filter_value", AttrType::kFloat)
            .AttrOptional("scale", AttrType::kFloat)
            .Constrain("T", attention_types)
            .Constrain("M", Types({"int32"})));
  r.Add(op("MultiHeadAttention")
            .In("query", "T")
            .OptIn("key", "T")
            .OptIn("value", "T")
            .OptIn("bias", "T")
            .OptIn("key_padding_mask", "M")
            .OptIn("attention_bias", "T")
            .OptIn("past_key", "T")
            .OptIn("past_value", "T")
            .OptIn("past_sequence_length", "M")
            .OptIn("cache_indirection", "M")
            .Out("output", "T")
            .OptOut("present_key", "T")
            .OptOut("present_value", "T")
            .OptOut("qk", "QK")
            .AttrRequired("num_heads", AttrType::kInt)
            .AttrOptional("mask_filter_value", AttrType::kFloat)
            .AttrOptional("scale", AttrType::kFloat)
            .AttrInt("unidirectional", 0)
            .Constrain("T", attention_types)
            .Constrain("QK", attention_types)
            .Constrain("M", Types({"int32"})));
  r.Add(op("RotaryEmbedding")
            .In("input", "T")
            .In("position_ids", "M")
            .In("cos_cache", "T")
            .In("sin_cache", "T")
            .Out("output", "T")
            .AttrOptional("interleaved", AttrType::kInt)
            .AttrOptional("is_packed_batching", AttrType::kInt)
            .AttrOptional("num_heads", AttrType::kInt)
            .AttrOptional("rotary_embedding_dim", AttrType::kInt)
            .AttrOptional("scale", AttrType::kFloat)
            .Constrain("T", attention_types)
            .Constrain("M", Types({"int64"})));
}

}  // namespace ferry::schemas
