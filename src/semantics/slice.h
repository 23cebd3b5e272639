// Slice along one axis: which elements start / end / step select. The one definition shape inference
// (schemas/shape_inference/tensor.cc) and the Slice kernels (ref/slice.cc's ResolveSliceWindow, which cpu shares)
// resolve each sliced axis with.
#pragma once

#include <cstdint>

namespace ferry::semantics {

struct SliceAxis {
  int64_t begin = 0;   // first index read (0 when the slice is empty)
  int64_t length = 0;  // elements selected
  int64_t step = 1;    // stride, clamped to [-max(dim, 1), max(dim, 1)] (the same elements; products stay in range)
};

// ONNX Slice over `dim` (>= 0) elements: a negative start or end counts from the end; both clamp per the step's
// direction ([0, dim] forwards, [-1, dim - 1] backwards); a negative step walks backwards. step != 0.
SliceAxis ResolveSliceAxis(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace ferry::semantics
