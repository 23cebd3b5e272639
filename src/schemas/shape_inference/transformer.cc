// Shape inference for ONNX Runtime's transformer ops in com.microsoft (schemas_com_microsoft_transformer.cc):
// Attention, MultiHeadAttention, EmbedLayerNormalization and the skip normalizations. What the inputs do not fix
// stays unknown; shapes of a rank the op never takes prove the model invalid.
#include <string>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

void RequireRank(InferenceContext& ctx, size_t input, const Dims* d, std::initializer_list<size_t> ranks,
                 const char* what) {
  if (!d) return;
  for (size_t r : ranks) {
    if (d->size() == r) return;
  }
  std::string allowed;
  for (size_t r : ranks) allowed += (allowed.empty() ? "" : " or ") + std::to_string(r);
  ctx.Fail(std::string(what) + " " + ctx.InputString(input) + " must have rank " + allowed);
}

// A dim of `d` plus a count that may be unknown.
ir::Dim AddDims(const ir::Dim& a, const ir::Dim& b) {
  if (!a.is_static() || !b.is_static()) return UnknownDim();
  const auto s = CheckedAdd(a.value, b.value);
  return s ? ir::Dim::Static(*s) : UnknownDim();
}

// Attention: input [B, S, H_in] -> output [B, S, v_hidden]; v_hidden = qkv_hidden_sizes[2], else a third of
// weights' second dim. present [2, B, num_heads, past_S + S, head_size] from past [2, B, num_heads, past_S,
// head_size] (past_present_share_buffer: past's shape).
void Attention(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(1);
  RequireRank(ctx, 0, x, {3}, "input");
  RequireRank(ctx, 1, w, {2}, "weights");
  const std::vector<int64_t> qkv = ctx.attr_ints("qkv_hidden_sizes");
  if (!qkv.empty() && qkv.size() != 3) ctx.Fail("qkv_hidden_sizes must have 3 values");
  ir::Dim v_hidden = UnknownDim();
  if (!qkv.empty()) {
    v_hidden = DimOf(qkv[2]);
  } else if (w && (*w)[1].is_static()) {
    if ((*w)[1].value % 3 != 0) {
      ctx.Fail("weights " + ctx.InputString(1) + ": the merged Q/K/V width must divide by 3 without qkv_hidden_sizes");
    }
    v_hidden = ir::Dim::Static((*w)[1].value / 3);
  }
  if (x) ctx.SetOutputShape(0, {(*x)[0], (*x)[1], v_hidden});
  const Dims* past = ctx.has_input(4) ? ctx.input_shape(4) : nullptr;
  RequireRank(ctx, 4, past, {5}, "past");
  if (ctx.num_outputs() > 1 && past && x) {
    Dims present(*past);
    if (ctx.attr_int("past_present_share_buffer", 0) == 0) present[3] = AddDims((*past)[3], (*x)[1]);
    ctx.SetOutputShape(1, std::move(present));
  }
}

// MultiHeadAttention: output [B, S, v_hidden]. query [B, S, hidden] or packed QKV [B, S, N, 3, H] (v_hidden =
// N * H); value [B, L, v_hidden], or a past value [B, N, L, H] (v_hidden = N * H); with packed KV
// (key [B, L, N, 2, H]) v_hidden is the query's hidden. present_key/value [B, N, P + L, H] from past_key/value
// [B, N, P, H], L the key's sequence length (the query's for packed QKV).
void MultiHeadAttention(InferenceContext& ctx) {
  const Dims* q = ctx.input_shape(0);
  const Dims* k = ctx.has_input(1) ? ctx.input_shape(1) : nullptr;
  const Dims* v = ctx.has_input(2) ? ctx.input_shape(2) : nullptr;
  RequireRank(ctx, 0, q, {3, 5}, "query");
  RequireRank(ctx, 1, k, {3, 4, 5}, "key");
  RequireRank(ctx, 2, v, {3, 4}, "value");
  if (!q) return;
  ir::Dim v_hidden = UnknownDim();
  ir::Dim kv_len = UnknownDim();
  if (q->size() == 5) {
    const ir::Dim heads[2] = {(*q)[2], (*q)[4]};
    v_hidden = DimProduct(heads);
    kv_len = (*q)[1];
  } else if (k && k->size() == 5) {
    v_hidden = (*q)[2];
    kv_len = (*k)[1];
  } else if (v && v->size() == 3) {
    v_hidden = (*v)[2];
    kv_len = (*v)[1];
  } else if (v && v->size() == 4) {
    const ir::Dim heads[2] = {(*v)[1], (*v)[3]};
    v_hidden = DimProduct(heads);
  }
  ctx.SetOutputShape(0, {(*q)[0], (*q)[1], v_hidden});
  for (size_t out = 1; out <= 2 && out < ctx.num_outputs(); ++out) {
    const size_t past_index = 5 + out;  // past_key 6, past_value 7
    const Dims* past = ctx.has_input(past_index) ? ctx.input_shape(past_index) : nullptr;
    RequireRank(ctx, past_index, past, {4}, out == 1 ? "past_key" : "past_value");
    if (!past) continue;
    Dims present(*past);
    present[2] = AddDims((*past)[2], kv_len);
    ctx.SetOutputShape(out, std::move(present));
  }
}

// EmbedLayerNormalization: input_ids [B, S], word_embedding [V, H] -> output and embedding_sum [B, S, H];
// mask_index [B].
void EmbedLayerNormalization(InferenceContext& ctx) {
  const Dims* ids = ctx.input_shape(0);
  const Dims* word = ctx.input_shape(2);
  RequireRank(ctx, 0, ids, {2}, "input_ids");
  RequireRank(ctx, 2, word, {2}, "word_embedding");
  if (!ids) return;
  const ir::Dim hidden = word ? (*word)[1] : UnknownDim();
  ctx.SetOutputShape(0, {(*ids)[0], (*ids)[1], hidden});
  if (ctx.num_outputs() > 1) ctx.SetOutputShape(1, {(*ids)[0]});
  if (ctx.num_outputs() > 2) ctx.SetOutputShape(2, {(*ids)[0], (*ids)[1], hidden});
}

// SkipLayerNormalization, SkipSimplifiedLayerNormalization: output and input_skip_bias_sum like input; mean and
// inv_std_var like input with the (normalized) last dim 1.
void SkipLayerNormalization(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->empty()) ctx.Fail("input " + ctx.InputString(0) + " must have rank >= 1");
  Dims stat(*x);
  stat.back() = ir::Dim::Static(1);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputShape(i, i == 1 || i == 2 ? stat : *x);
}

}  // namespace

void RegisterTransformerShapeInference(SchemaRegistry& r) {
  const std::string ms(kMsDomain);
  r.SetInference(ms, "Attention", 1, Attention);
  r.SetInference(ms, "MultiHeadAttention", 1, MultiHeadAttention);
  r.SetInference(ms, "EmbedLayerNormalization", 1, EmbedLayerNormalization);
  r.SetInference(ms, "SkipLayerNormalization", 1, SkipLayerNormalization);
  r.SetInference(ms, "SkipSimplifiedLayerNormalization", 1, SkipLayerNormalization);
}

}  // namespace ferry::schemas
