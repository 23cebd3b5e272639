// com.microsoft Attention and MultiHeadAttention (ONNX Runtime's contrib ops), what their ref and cpu kernels share:
// the attributes, the validated geometry one input signature resolves to (Prepare), and the mask as ONNX Runtime's
// CPU kernel builds it. Defined in ort_attention.cc, which describes the semantics.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// The mask forms: Attention's mask_index and MultiHeadAttention's key_padding_mask (int32).
enum class OrtMaskKind {
  kNone,
  kKeyLengths,  // [B] (or the first B values of [3B + 2]): keys at or after mask[b] are masked
  kEndStart,    // [2B] (Attention): keys at or after mask[b], and before mask[B + b], are masked
  kKeyPadding,  // [B, T]: 0 masks the key
  kAttention,   // [B, S, T]: 0 masks the key for that query row
};

// The node's attributes (both ops); the constructor throws InvalidModelError for a bad num_heads or
// qkv_hidden_sizes.
struct OrtAttentionAttrs {
  OrtAttentionAttrs(const ir::Node& node, bool mha);
  bool mha = false;
  int64_t num_heads = 0;
  bool unidirectional = false;
  float mask_filter_value = -10000.0f;
  float scale = 0.0f;                     // 0: 1 / sqrt(head_size)
  std::vector<int64_t> qkv_hidden_sizes;  // Attention; empty: three equal thirds
};

// The geometry Prepare resolves. Q is [B, N, S, H], K [B, N, T, H] and V [B, N, T, Hv] once the past (P rows)
// and the new keys (L rows) are joined (T = P + L).
struct OrtAttentionPlan {
  DataType dtype = DataType::kFloat;
  int64_t B = 0, S = 0, L = 0, P = 0, T = 0, N = 0, H = 0, Hv = 0;
  int64_t input_hidden = 0;  // Attention: input's last dim
  bool has_bias = false;     // the projection bias (Attention: bias; MHA: bias)
  bool kv_bnsh = false;      // MHA: key and value are [B, N, L, H] (used as they are, no bias)
  bool has_past = false;
  OrtMaskKind mask = OrtMaskKind::kNone;
  int mask_input = -1;  // the mask's input index (3 or 4), -1 without one
  bool has_attention_bias = false;
  int64_t ab_sb = 0, ab_sn = 0;  // attention_bias's strides over B and N (0 where it broadcasts); rows S x T
  bool causal = false;           // unidirectional and S > 1: key j is hidden from query row i < S - 1 when j > P + i
  float scale = 1.0f;
  DataType qk_dtype = DataType::kFloat;  // MHA output 3
};

// Every check of Attention's inputs (throws InvalidArgumentError, or UnsupportedError for a form ONNX Runtime's
// CPU kernel refuses, naming the node); declares the outputs' dtypes and shapes and returns the geometry.
OrtAttentionPlan PrepareOrtAttention(PrepareContext& ctx, const OrtAttentionAttrs& attrs);
// The same for MultiHeadAttention.
OrtAttentionPlan PrepareOrtMultiHeadAttention(PrepareContext& ctx, const OrtAttentionAttrs& attrs);

// The additive mask of every (b, mask row) as ONNX Runtime's CPU kernel writes it, [B, R, T] with R = S for a 3-D
// mask and 1 otherwise: 0 for a visible key, mask_filter_value for a masked one; with `with_causal`, R = S and key j
// of row i < S - 1 gets float's lowest value when j > P + i (what the causal mask writes). Empty without a mask (and
// without `with_causal` or causal). Throws InvalidArgumentError naming `what` for a negative end position.
std::vector<float> OrtAttentionMaskRows(const OrtAttentionPlan& p, const Tensor* mask, float mask_filter_value,
                                        bool with_causal, const std::string& what);

// Shape predicate of both ops: "" or why ONNX Runtime's CPU kernel (and so Ferry) refuses the static shapes (a 4-D
// Megatron mask, MHA's packed QKV or packed KV).
std::string OrtAttentionShapePredicate(const ir::Node& node);

}  // namespace ferry::ref
