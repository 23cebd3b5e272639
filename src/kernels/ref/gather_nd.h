// GatherND's checks and geometry, shared by the ref and cpu kernels (which differ only in how they copy).
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/tensor.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// Index tuples of length k after b batch dims, per batch `tuples` of them, each selecting `slice` elements; data's
// dims and row-major strides; the output's shape.
struct GatherNDGeometry {
  int64_t b = 0, k = 0, batches = 1, tuples = 1, slice = 1, batch_stride = 0;
  Shape dims;
  std::vector<int64_t> strides;
  Shape out_shape;
};

// Checks the indices' type, the ranks against batch_dims, the tuple length and the batch dims; throws
// InvalidArgumentError naming the node and both inputs.
GatherNDGeometry ResolveGatherND(const PrepareContext& ctx, int64_t batch_dims);

}  // namespace ferry::ref
