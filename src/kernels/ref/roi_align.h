// RoiAlign's node, shared by the ref and cpu kernels: the attributes (opsets 10, 16, 22), Prepare's checks of X,
// rois and batch_indices, the run's batch indices, and the bilinear samples of one roi (positions in a channel
// plane and weights, shared by every channel). The kernels differ only in how they pool the samples (ref: any
// float type in double; cpu: float32, vectorized over the output bins). Semantics: see roi_align.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

struct RoiAlignAttributes {
  int64_t output_height = 1, output_width = 1, sampling_ratio = 0;
  double spatial_scale = 1;
  bool max = false;        // mode=max (else avg)
  bool half_pixel = true;  // coordinate_transformation_mode=half_pixel (opset 10: output_half_pixel)
};

// Throws InvalidModelError naming the node for an unknown mode or coordinate mode, or bad output / sampling sizes.
RoiAlignAttributes ParseRoiAlignAttributes(const ir::Node& node);

// The checks of X [N, C, H, W], rois [num_rois, 4] of X's type and batch_indices [num_rois] (int32 / int64);
// errors name ctx.Describe(). Returns Y's shape [num_rois, C, output_height, output_width].
Shape CheckRoiAlignInputs(const PrepareContext& ctx, const RoiAlignAttributes& attrs);

// The run's batch index of every roi (input 2); InvalidArgumentError naming the node for one outside [0, N).
std::vector<int64_t> RoiAlignBatchIndices(const KernelContext& ctx, int64_t num_rois, int64_t n);

// One bilinear sample: four positions in a channel plane and their weights (all 0 outside the plane).
struct RoiAlignSample {
  int64_t pos[4];
  double w[4];
};

// The samples of one roi whose coordinates (x1, y1, x2, y2, unscaled) are `roi`, over an H x W plane:
// output_height * output_width bins in row-major order, each of `per_bin` consecutive samples (0 for a NaN or
// negative roi with adaptive sampling). `count` is what avg mode divides a bin's sum by.
struct RoiAlignSamples {
  std::vector<RoiAlignSample> samples;
  int64_t per_bin = 0;
  double count = 1;
};
void PlanRoiAlignSamples(const RoiAlignAttributes& attrs, const double roi[4], int64_t height, int64_t width,
                         RoiAlignSamples& out);

}  // namespace ferry::ref
