// ONNX RotaryEmbedding (opset 23) and com.microsoft RotaryEmbedding (ONNX Runtime's contrib op), what their ref and
// cpu kernels share: the attributes, the validated geometry of one input signature (Prepare) and the checked cache
// rows. Defined in rotary_embedding.cc, which describes the semantics of both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

struct RotaryEmbeddingAttrs {
  explicit RotaryEmbeddingAttrs(const ir::Node& node);
  bool ms = false;               // the com.microsoft op: inputs (input, position_ids, cos_cache, sin_cache)
  bool packed_batching = false;  // com.microsoft is_packed_batching
  bool interleaved = false;
  int64_t rotary_dim = 0;  // 0: the head size
  int64_t num_heads = 0;
};

struct RotaryEmbeddingPlan {
  int64_t B = 0, H = 0, S = 0, D = 0;      // batch, heads, sequence, head size
  int64_t sb = 0, sh = 0, ss = 0;          // element (b, h, s, d) at b*sb + h*sh + s*ss + d
  int64_t rot = 0, half = 0;               // rotated features per head, and half of them
  int cos_in = 1, sin_in = 2, pos_in = 3;  // input indices (com.microsoft: 2, 3, 1)
  int pos_format = -1;  // com.microsoft: 0 = one start position (rows p + s), 1 = [B, S] positions; ONNX: -1
};

// Every shape and dtype check of X, the caches and position_ids (throws InvalidArgumentError naming the node);
// declares the output and returns the geometry.
RotaryEmbeddingPlan PrepareRotaryEmbedding(PrepareContext& ctx, const RotaryEmbeddingAttrs& attrs);

// The cache row of each (b, s), row-major [B, S]: position_ids, each checked against the cache's length (throws
// InvalidArgumentError naming `what` for one outside it); com.microsoft's single start position p gives p + s.
// Empty without position_ids: the row of (b, s) is then b * S + s.
std::vector<int64_t> RotaryEmbeddingPositions(const RotaryEmbeddingPlan& p, const Tensor* position_ids,
                                              const Tensor& cos_cache, const std::string& what);

}  // namespace ferry::ref
