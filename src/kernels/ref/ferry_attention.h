// ai.ferry Attention (schemas_ferry.cc), what its ref and cpu kernels share: the validated sizes of one call, and
// where each (query, key, value, mask) matrix of a leading index starts. Defined in ferry_attention.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::ref {

struct AttentionPlan {
  int64_t sq = 0, sk = 0, dh = 0, dv = 0;
  Shape out_shape;  // [lead..., Sq, Dv]
  // Per leading index (row-major over the broadcast leading dims, so out_shape's matrix `b` is at b * Sq * Dv):
  // the element offset of its Q [Sq, Dh], K ([Sk, Dh], or [Dh, Sk] when k_transposed), V [Sk, Dv] and mask
  // matrices (mask_offsets empty without a mask).
  std::vector<int64_t> q_offsets, k_offsets, v_offsets, mask_offsets;
  // The mask element of score (i, j) of a matrix is at mask_offsets[b] + i * mask_row_stride + j * mask_col_stride
  // (a stride is 0 along a dim the mask broadcasts).
  int64_t mask_row_stride = 0, mask_col_stride = 0;

  int64_t batch() const { return static_cast<int64_t>(q_offsets.size()); }
};

// Checks that Q, K, V and the mask are float, and Q [..., Sq, Dh], K [..., Sk, Dh] (k_transposed: [..., Dh, Sk]), V [..., Sk, Dv] and the mask (its last two
// dims 1 or Sq / Sk, its leading dims broadcasting with the others'); throws InvalidArgumentError naming `what`
// and the shapes otherwise.
AttentionPlan PlanAttention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, bool k_transposed,
                            const std::string& what);

}  // namespace ferry::ref
