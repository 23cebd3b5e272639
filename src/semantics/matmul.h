// MatMul's operand geometry (numpy matmul; MatMul, MatMulInteger, QLinearMatMul, ai.ferry FusedMatMul): a 1-D A
// is promoted to a row [1, K] and a 1-D B to a column [K, 1], the added dim removed from the result; the batch
// dims (all but the last two) broadcast. The one definition the ref and cpu kernels resolve their inputs with.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ferry/tensor.h"

namespace ferry::semantics {

struct MatMulShape {
  int64_t m = 0, k = 0, n = 0;
  Shape batch_a, batch_b;  // each operand's batch dims (none for a 1-D or 2-D operand)
  Shape batch;             // their broadcast: Y's batch dims
  Shape y_shape;           // batch, then M (unless A is 1-D), then N (unless B is 1-D)
};

// nullopt when an operand is a scalar, the K differ or the batch dims do not broadcast, with the reason in
// `*error` (when given): "MatMul inputs must have rank >= 1, got [..] and [..]", "inner dimensions do not match:
// A [..] and B [..]", "batch dimensions of A [..] and B [..] do not broadcast".
std::optional<MatMulShape> MatMulShapeOf(const Shape& a, const Shape& b, std::string* error = nullptr);

// MatMulShapeOf, throwing InvalidArgumentError "`what`: reason" where it has none.
MatMulShape ResolveMatMul(const Shape& a, const Shape& b, const std::string& what);

}  // namespace ferry::semantics
