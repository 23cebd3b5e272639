// GridSample's node, shared by the ref and cpu kernels: the attributes (opsets 16, 20, 22), Prepare's checks of X
// and grid with the sampling geometry they give, and the taps of one spatial dim (un-normalization, padding,
// nearest / linear / cubic weights). The kernels differ only in how they sum the taps (ref: any type in double;
// cpu: float32, vectorized over output pixels). Semantics: see grid_sample.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

enum class GridSampleMode { kLinear, kNearest, kCubic };
enum class GridSamplePadding { kZeros, kBorder, kReflection };

struct GridSampleAttributes {
  int64_t opset = 0;
  bool align_corners = false;
  GridSampleMode mode = GridSampleMode::kLinear;
  GridSamplePadding padding = GridSamplePadding::kZeros;
  // ONNX (its reference): border / reflection first clamp / reflect the un-normalized coordinate, then fetch the
  // taps with the padding rule. com.microsoft::GridSample (ONNX Runtime's kernel): only the taps are padded, which
  // gives the same samples for nearest and linear but other ones for cubic near the border.
  bool pad_coordinate = true;
  // Taps per spatial dim: 1 (nearest), 2 (linear) or 4 (cubic).
  int taps() const { return mode == GridSampleMode::kNearest ? 1 : mode == GridSampleMode::kLinear ? 2 : 4; }
};

// The mode attribute as written (its default depends on the opset).
std::string GridSampleModeName(const ir::Node& node);

// Throws InvalidModelError naming the node for an unknown mode or padding_mode.
GridSampleAttributes ParseGridSampleAttributes(const ir::Node& node);

// The sampling geometry of one signature.
struct GridSamplePlan {
  int64_t r = 0, n_batch = 0, channels = 0, out_spatial = 1, in_spatial = 1;
  std::vector<int64_t> dims, strides;  // X's spatial dims (outermost first) and their strides
  Shape out_shape;                     // Y: [N, C, O1..Or]
};

// The checks of X and grid (ranks, matching shapes, a non-empty X unless Y is empty, nearest for types that do not
// interpolate); errors name ctx.Describe(). Returns the geometry; Prepare declares out_shape.
GridSamplePlan CheckGridSampleInputs(const PrepareContext& ctx, const GridSampleAttributes& attrs);

// The taps of one spatial dim of size d (elements `stride` apart) for the normalized coordinate v: attrs.taps()
// offsets into the image (-1: a zero-padded tap) and weights. Every offset is -1 for a non-finite v.
void GridSampleTaps(const GridSampleAttributes& attrs, double v, int64_t d, int64_t stride, int64_t* off, double* w);

}  // namespace ferry::ref
