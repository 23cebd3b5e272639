// com.microsoft LLM attention with KV caches and the decoding loops (schemas_ort_contrib.h): GroupQueryAttention,
// SparseAttention, DecoderMaskedMultiHeadAttention, DecoderMaskedSelfAttention, PackedAttention,
// PackedMultiHeadAttention; BeamSearch, GreedySearch, Sampling, WhisperBeamSearch (a decoder subgraph run in a
// loop; `decoder` is a graph attribute). Schemas only. Attributes whose default ONNX Runtime applies in its
// kernels are optional without a default.
#include "schemas/op_origin.h"
#include "schemas/schemas_ort_contrib.h"

namespace ferry::schemas {

using ir::AttrType;

namespace {

// The attributes every decoding loop shares.
SchemaEdit& DecodingAttrs(SchemaEdit& s) {
  s.AttrRequired("decoder", AttrType::kGraph)
      .AttrOptional("encoder", AttrType::kGraph)
      .AttrOptional("init_decoder", AttrType::kGraph)
      .AttrRequired("eos_token_id", AttrType::kInt)
      .AttrRequired("pad_token_id", AttrType::kInt);
  return AttrsOptional(s, AttrType::kInt,
                       {"decoder_start_token_id", "model_type", "no_repeat_ngram_size", "vocab_size"});
}

}  // namespace

void RegisterMsLlmSchemas(SchemaRegistry& r) {
  const std::string d(kMsDomain);
  auto op = [&](const char* name) { return NewOp(name, 1, d); };
  const TypeList f32_16 = Types({"float", "float16"});
  const TypeList i32 = Types({"int32"});

  SchemaEdit gqa = op("GroupQueryAttention")
                       .In("query", "T")
                       .OptIn("key", "T")
                       .OptIn("value", "T")
                       .OptIn("past_key", "T_CACHE")
                       .OptIn("past_value", "T_CACHE")
                       .In("seqlens_k", "M")
                       .In("total_sequence_length", "M")
                       .OptIn("cos_cache", "T")
                       .OptIn("sin_cache", "T")
                       .OptIn("position_ids", "tensor(int64)")
                       .OptIn("attention_bias", "T")
                       .OptIn("head_sink", "T")
                       .OptIn("k_scale", "T_KV_SCALE")
                       .OptIn("v_scale", "T_KV_SCALE")
                       .OptIn("q_norm_weight", "T")
                       .OptIn("k_norm_weight", "T")
                       .Out("output", "T")
                       .OptOut("present_key", "T_CACHE")
                       .OptOut("present_value", "T_CACHE")
                       .OptOut("output_qk", "T")
                       .AttrRequired("num_heads", AttrType::kInt)
                       .AttrRequired("kv_num_heads", AttrType::kInt)
                       .Constrain("T", Types({"float16", "bfloat16", "float"}))
                       .Constrain("T_CACHE", Types({"float", "float16", "bfloat16", "uint8", "int8", "float8e4m3fn"}))
                       .Constrain("T_KV_SCALE", Types({"float"}))
                       .Constrain("M", i32);
  AttrsOptional(gqa, AttrType::kInt,
                {"causal", "do_rotary", "kv_cache_bit_width", "local_window_size", "qk_output", "rotary_interleaved",
                 "sliding_window_cache", "smooth_softmax"});
  AttrsOptional(gqa, AttrType::kFloat, {"qk_norm_epsilon", "scale", "softcap"});
  AttrsOptional(gqa, AttrType::kString, {"k_quant_type", "v_quant_type"});
  r.Add(std::move(gqa));
  SchemaEdit sparse = op("SparseAttention")
                          .In("query", "T")
                          .OptIn("key", "T")
                          .OptIn("value", "T")
                          .In("past_key", "T")
                          .In("past_value", "T")
                          .In("block_row_indices", "M")
                          .In("block_col_indices", "M")
                          .In("total_sequence_length", "M")
                          .In("key_total_sequence_lengths", "M")
                          .OptIn("cos_cache", "T")
                          .OptIn("sin_cache", "T")
                          .Out("output", "T")
                          .Out("present_key", "T")
                          .Out("present_value", "T")
                          .AttrRequired("num_heads", AttrType::kInt)
                          .AttrRequired("kv_num_heads", AttrType::kInt)
                          .AttrRequired("sparse_block_size", AttrType::kInt)
                          .Constrain("T", Types({"float", "float16", "bfloat16"}))
                          .Constrain("M", i32);
  AttrsOptional(sparse, AttrType::kInt, {"do_rotary", "rotary_interleaved"});
  AttrsOptional(sparse, AttrType::kFloat, {"scale"});
  r.Add(std::move(sparse));
  SchemaEdit dmmha = op("DecoderMaskedMultiHeadAttention")
                         .In("query", "T")
                         .OptIn("key", "T")
                         .OptIn("value", "T")
                         .OptIn("mask_index", "M")
                         .OptIn("attention_bias", "T")
                         .OptIn("past_key", "T")
                         .OptIn("past_value", "T")
                         .OptIn("past_sequence_length", "M")
                         .OptIn("beam_width", "M")
                         .OptIn("cache_indirection", "M")
                         .OptIn("bias", "T")
                         .Out("output", "T")
                         .OptOut("present_key", "T")
                         .OptOut("present_value", "T")
                         .OptOut("qk", "QK")
                         .AttrRequired("num_heads", AttrType::kInt)
                         .Constrain("T", f32_16)
                         .Constrain("QK", f32_16)
                         .Constrain("M", i32);
  AttrsOptional(dmmha, AttrType::kFloat, {"mask_filter_value", "scale"});
  AttrsOptional(dmmha, AttrType::kInt, {"output_qk", "past_present_share_buffer"});
  r.Add(std::move(dmmha));
  SchemaEdit dmsa = op("DecoderMaskedSelfAttention")
                        .In("input", "T")
                        .In("weights", "T")
                        .In("bias", "T")
                        .OptIn("mask_index", "M")
                        .In("past", "T")
                        .OptIn("attention_bias", "T")
                        .In("past_sequence_length", "M")
                        .OptIn("beam_width", "M")
                        .OptIn("cache_indirection", "M")
                        .Out("output", "T")
                        .Out("present", "T")
                        .AttrRequired("num_heads", AttrType::kInt)
                        .Constrain("T", f32_16)
                        .Constrain("M", i32);
  AttrsOptional(dmsa, AttrType::kInt, {"do_rotary", "past_present_share_buffer"});
  AttrsOptional(dmsa, AttrType::kFloat, {"mask_filter_value", "scale"});
  r.Add(std::move(dmsa));
  r.Add(op("PackedAttention")
            .In("input", "T")
            .In("weights", "T")
            .In("bias", "T")
            .In("token_offset", "M")
            .In("cumulative_sequence_length", "M")
            .OptIn("attention_bias", "T")
            .Out("output", "T")
            .AttrRequired("num_heads", AttrType::kInt)
            .AttrOptional("qkv_hidden_sizes", AttrType::kInts)
            .AttrOptional("scale", AttrType::kFloat)
            .Constrain("T", f32_16)
            .Constrain("M", i32));
  r.Add(op("PackedMultiHeadAttention")
            .In("query", "T")
            .OptIn("key", "T")
            .OptIn("value", "T")
            .OptIn("bias", "T")
            .In("token_offset", "M")
            .In("cumulative_sequence_length", "M")
            .OptIn("attention_bias", "T")
            .Out("output", "T")
            .AttrRequired("num_heads", AttrType::kInt)
            .AttrOptional("mask_filter_value", AttrType::kFloat)
            .AttrOptional("scale", AttrType::kFloat)
            .Constrain("T", f32_16)
            .Constrain("M", i32));

  SchemaEdit beam = op("BeamSearch")
                        .In("input_ids", "F")
                        .In("max_length", "I")
                        .OptIn("min_length", "I")
                        .In("num_beams", "I")
                        .In("num_return_sequences", "I")
                        .OptIn("length_penalty", "T")
                        .OptIn("repetition_penalty", "T")
                        .OptIn("vocab_mask", "M")
                        .OptIn("prefix_vocab_mask", "M")
                        .OptIn("attention_mask", "I")
                        .OptIn("decoder_input_ids", "I")
                        .OptIn("logits_processor", "I")
                        .Out("sequences", "I")
                        .OptOut("sequences_scores", "T")
                        .OptOut("scores", "T")
                        .AttrOptional("early_stopping", AttrType::kInt)
                        .Constrain("T", f32_16)
                        .Constrain("F", Types({"float", "int32", "float16"}))
                        .Constrain("I", i32)
                        .Constrain("M", i32);
  r.Add(std::move(DecodingAttrs(beam)));
  SchemaEdit greedy = op("GreedySearch")
                          .In("input_ids", "I")
                          .In("max_length", "I")
                          .OptIn("min_length", "I")
                          .OptIn("repetition_penalty", "T")
                          .OptIn("vocab_mask", "I")
                          .OptIn("prefix_vocab_mask", "I")
                          .OptIn("attention_mask", "I")
                          .Out("sequences", "I")
                          .Constrain("T", Types({"float"}))
                          .Constrain("I", i32);
  r.Add(std::move(DecodingAttrs(greedy)));
  SchemaEdit sampling = op("Sampling")
                            .In("input_ids", "I")
                            .In("max_length", "I")
                            .OptIn("min_length", "I")
                            .OptIn("repetition_penalty", "T")
                            .OptIn("vocab_mask", "I")
                            .OptIn("prefix_vocab_mask", "I")
                            .OptIn("attention_mask", "I")
                            .OptIn("presence_mask", "I")
                            .OptIn("seed", "I")
                            .Out("sequences", "I")
                            .OptOut("filtered_logits", "T")
                            .Constrain("T", Types({"float"}))
                            .Constrain("I", i32);
  AttrsOptional(sampling, AttrType::kInt, {"custom", "min_tokens_to_keep"});
  AttrsOptional(sampling, AttrType::kFloat, {"filter_value", "presence_penalty", "temperature", "top_p"});
  r.Add(std::move(DecodingAttrs(sampling)));
  SchemaEdit whisper = op("WhisperBeamSearch")
                           .In("input_ids", "F")
                           .In("max_length", "I")
                           .OptIn("min_length", "I")
                           .In("num_beams", "I")
                           .In("num_return_sequences", "I")
                           .OptIn("length_penalty", "T")
                           .OptIn("repetition_penalty", "T")
                           .OptIn("vocab_mask", "M")
                           .OptIn("prefix_vocab_mask", "M")
                           .OptIn("attention_mask", "I")
                           .OptIn("decoder_input_ids", "I")
                           .OptIn("logits_processor", "I")
                           .OptIn("cross_qk_layer_head", "I")
                           .OptIn("extra_decoding_ids", "I")
                           .OptIn("temperature", "T")
                           .Out("sequences", "I")
                           .OptOut("sequences_scores", "T")
                           .OptOut("scores", "T")
                           .OptOut("cross_qk", "V")
                           .OptOut("non_speech_probs", "T")
                           .Constrain("T", f32_16)
                           .Constrain("F", Types({"float", "int32", "float16"}))
                           .Constrain("I", i32)
                           .Constrain("M", i32)
                           .Constrain("V", Types({"float"}));
  AttrsOptional(whisper, AttrType::kInt,
                {"beginning_timestamp_token_id", "decoder_output_cross_qk", "early_stopping", "no_speech_token_id",
                 "no_timestamps_token_id", "start_of_lm_token_id", "transcribe_token_id", "translate_token_id"});
  r.Add(std::move(DecodingAttrs(whisper)));
}

}  // namespace ferry::schemas
