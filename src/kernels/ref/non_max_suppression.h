// NonMaxSuppression's node, shared by the ref and cpu kernels: Prepare's checks, the run's scalar inputs, box
// corners, the IoU test and the greedy selection of one (batch, class). The kernels differ only in how they walk
// the (batch, class) pairs (ref: in order; cpu: in parallel). Semantics: see non_max_suppression.cc.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// The center_point_box attribute as a flag; InvalidModelError naming the node unless it is 0 or 1.
bool NmsCenterPointBox(const ir::Node& node);

struct NmsBox {
  float y_min, x_min, y_max, x_max;
};

// The corners of box b (4 floats): [y1, x1, y2, x2] in any corner order, or [xc, yc, w, h] with center_point.
NmsBox NmsCorners(const float* b, bool center_point);

// A box's area as the IoU test computes it (zero or negative for an empty box, NaN with a NaN corner).
float NmsArea(const NmsBox& b);

// True when the IoU of a and b (in float) exceeds iou_threshold.
bool NmsSuppressedByIoU(const NmsBox& a, const NmsBox& b, float iou_threshold);

// The checks of boxes [batches, boxes, 4], scores [batches, classes, boxes] (float32) and the optional scalar
// inputs; errors name ctx.Describe(). Declares the output dynamic.
void CheckNonMaxSuppressionInputs(PrepareContext& ctx);

// The run's scalar inputs (absent or empty ones take their defaults); max_per_class clamped to [0, boxes].
struct NmsParams {
  int64_t max_per_class = 0;
  float iou_threshold = 0;
  bool has_score_threshold = false;
  float score_threshold = 0;
};
NmsParams ReadNonMaxSuppressionParams(const KernelContext& ctx, int64_t num_boxes);

// One (batch, class)'s candidates into `candidates` (cleared first): (score, box) of every box over the score
// threshold, by descending score, NaN last, ties by lower index: the order the greedy selection walks.
void NmsCandidates(const float* scores, int64_t num_boxes, const NmsParams& params,
                   std::vector<std::pair<float, int64_t>>& candidates);

// The boxes kept for one (batch, class): the candidates of `scores` (over the threshold) by descending score,
// NaN last, ties by lower index, each kept unless it overlaps a kept one; at most max_per_class. `candidates` is
// scratch; `kept` receives the box indices in selection order.
void NmsSelectClass(const float* scores, const NmsBox* corners, int64_t num_boxes, const NmsParams& params,
                    std::vector<std::pair<float, int64_t>>& candidates, std::vector<int64_t>& kept);

}  // namespace ferry::ref
