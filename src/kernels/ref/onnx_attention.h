// ONNX Attention (opsets 23, 24), what its ref and cpu kernels share: the attributes, the validated geometry one
// input signature resolves to (Prepare), the mask as an additive float bias and the causal offset of a batch.
// Defined in attention.cc; the semantics are described there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// A [B, H, S, D] view of a 3-D or 4-D tensor: element (b, h, s, d) at b*sb + h*sh + s*ss + d.
struct AttentionHeadView {
  int64_t batch = 0, heads = 0, seq = 0, dim = 0;
  int64_t sb = 0, sh = 0, ss = 0;
  int64_t At(int64_t b, int64_t h, int64_t s) const { return b * sb + h * sh + s * ss; }
};

// The node's attributes; the constructor throws InvalidModelError for a qk_matmul_output_mode outside 0..3.
struct OnnxAttentionAttrs {
  explicit OnnxAttentionAttrs(const ir::Node& node);
  bool causal = false;
  int64_t q_heads = 0, kv_heads = 0;
  int64_t mode = 0;  // qk_matmul_output_mode
  bool has_scale = false;
  float scale = 1.0f;
  float softcap = 0.0f;
};

// The geometry Prepare resolves: views of Q, K, V and Y, the past and total key lengths, and the mask's
// broadcast strides over [B, Hq, Sq, mlen] (mlen = the mask's last dim; keys at or past it are masked).
struct OnnxAttentionPlan {
  AttentionHeadView q, k, v, y;
  int64_t spast = 0, total = 0;
  int64_t mb = 0, mh = 0, mq = 0, mlen = 0;
};

// Every check of Q, K, V, the past, nonpad_kv_seqlen and the mask's shape (throws InvalidArgumentError or
// UnsupportedError naming the node); declares the outputs' dtypes and shapes and returns the geometry.
OnnxAttentionPlan PrepareOnnxAttention(PrepareContext& ctx, const OnnxAttentionAttrs& attrs);

// The mask's elements as an additive float bias: bool true -> 0, false -> -inf; float and integer values as they
// are (converted to float).
std::vector<float> AttentionMaskBias(const Tensor& mask, const KernelContext& ctx);

// Where the causal frontier of batch b lies: key j is masked for query row i when j > i + offset (offset = the past
// length with a past, nonpad_kv_seqlen[b] - Sq with nonpad_kv_seqlen, else 0).
inline int64_t AttentionCausalOffset(const OnnxAttentionPlan& p, bool has_past, const std::vector<int64_t>& valid_len,
                                     int64_t b) {
  if (has_past) return p.spast;
  if (!valid_len.empty()) return valid_len[static_cast<size_t>(b)] - p.q.seq;
  return 0;
}

}  // namespace ferry::ref
