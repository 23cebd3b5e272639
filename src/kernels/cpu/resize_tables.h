// The float32 interpolation engine shared by the cpu Resize and Upsample kernels.
//
// Resizing is separable. Prepare (once per signature, when scales / sizes / roi are constants) builds a plan: per
// axis, for every output coordinate, its input taps (clamped index, weight; nearest 1, linear 2, cubic 4) and
// whether it lies outside the input (tf_crop_and_resize), with the coordinate maths of the ref engine
// (kernels/ref/resize_util.cc, the oracle). Compute runs the plan in two passes, each threaded with ParallelFor:
//   1. the innermost axis: every input row is resized into a scratch row of the output width (a table-driven
//      gather; skipped when that axis is unchanged);
//   2. the outer axes: every output row is the weighted sum of the scratch rows its taps select (a contiguous,
//      vectorized multiply-add over the row; a plain copy for nearest), then the extrapolation value is written
//      where any axis lies outside the input.
// Nearest copies input elements, so it matches ref bit for bit; linear and cubic sum in float (ref in double).
#pragma once

#include <cstdint>
#include <vector>

#include "ferry/tensor.h"
#include "kernels/ref/resize_util.h"

namespace ferry::cpu {

struct ResizeAxis {
  int64_t taps = 1;
  std::vector<int64_t> index;   // out * taps clamped input indices along the axis
  std::vector<float> weight;    // out * taps weights
  std::vector<uint8_t> outside; // out flags: the sample lies outside the input (tf_crop_and_resize)
  bool any_outside = false;
  bool identity = false;        // out == in and output i reads input i alone
};

struct ResizePlan {
  Shape in_shape, out_shape;
  std::vector<ResizeAxis> axes;
  float extrapolation = 0;
};

// The plan for resizing `in` to `out`: `scales[a]` is the coordinate-transform scale of axis a, `roi_start` /
// `roi_end` per axis (read for tf_crop_and_resize only). Antialias is not supported (the predicates refuse it).
ResizePlan BuildResizePlan(const Shape& in, const Shape& out, const std::vector<double>& scales,
                           const std::vector<double>& roi_start, const std::vector<double>& roi_end,
                           const ref::ResizeParams& params);

// Resizes x (plan.in_shape) into y (plan.out_shape), both float32 and contiguous.
void RunResizePlan(const ResizePlan& plan, const float* x, float* y, int threads);

}  // namespace ferry::cpu
