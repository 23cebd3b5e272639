// Resize's node, shared by the ref and cpu kernels: the attributes (opsets 10-19), Prepare's checks of the
// scales / sizes / roi inputs, and the geometry they give (output shape, per-axis scales, roi). The kernels differ
// only in how they interpolate (ref: ResizeTensor; cpu: resize_tables.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/ref/resize_util.h"

namespace ferry::ref {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeAttributes {
  int64_t opset = 0;
  ResizeParams params;
  std::vector<int64_t> axes;  // opset 18+: the axes scales / sizes / roi refer to ({} = all)
  AspectPolicy policy = AspectPolicy::kStretch;
};

// Throws InvalidModelError naming the node for an unknown mode, coordinate mode, nearest mode or policy.
ResizeAttributes ParseResizeAttributes(const ir::Node& node);

// What Prepare learned from the inputs: which of scales / sizes is given, the axes they refer to, where the values
// are, and whether the roi is used (tf_crop_and_resize with a non-empty roi).
struct ResizeInputs {
  std::vector<int64_t> axes;
  bool has_scales = false;
  bool use_roi = false;
  int values_index = 0;  // of scales or sizes
};

// The checks of the inputs' presence, dtypes and lengths; errors name ctx.Describe().
ResizeInputs CheckResizeInputs(const PrepareContext& ctx, const ResizeAttributes& attrs);

// The per-axis scales of the coordinate transform, the roi and the output shape.
struct ResizeGeometry {
  std::vector<double> scales, roi_start, roi_end;
  Shape out_shape;
};

// The geometry from the scales or sizes in `values` and the roi (null when not used) over input shape x, whose
// lengths and dtypes CheckResizeInputs checked. Throws InvalidArgumentError naming `what` for values that make
// no size.
ResizeGeometry ResolveResize(const ResizeAttributes& attrs, const ResizeInputs& inputs, const Shape& x,
                             const Tensor& values, const Tensor* roi_t, const std::string& what);

}  // namespace ferry::ref
