// ai.ferry SkipLayerNormalization (schemas_ferry.cc): the input checks both backends share, so that the ref and cpu
// kernels accept exactly the same inputs and name the same input in their errors.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/tensor.h"

namespace ferry {
class PrepareContext;
}  // namespace ferry

namespace ferry::ref {

struct SkipLayerNormShape {
  int64_t rows = 0;       // prod(X.shape[:axis])
  int64_t n = 0;          // prod(X.shape[axis:]): the normalized length of each row
  int64_t skip_size = 0;  // elements of Skip: element i of X adds Skip's element i % skip_size
};

// Checks X, Skip, gamma and beta (float32; X of rank >= 1; Skip of X's shape or of X's trailing dims after
// leading 1s; gamma and beta of n elements) and `axis`; throws InvalidArgumentError naming `what` and the input.
SkipLayerNormShape CheckSkipLayerNorm(const Tensor& x, const Tensor& skip, const Tensor& gamma, const Tensor* beta,
                                      int64_t axis, const std::string& what);

// Both backends' Prepare: CheckSkipLayerNorm on the inputs' specs, its shape kept as the state; Y, and Sum when
// requested, float32 of X's shape (an omitted Sum is dynamic: Compute does not write it).
void PrepareSkipLayerNorm(PrepareContext& ctx, int64_t axis);

}  // namespace ferry::ref
