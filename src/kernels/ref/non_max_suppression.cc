// NonMaxSuppression: greedy per-batch, per-class box selection by score, suppressing boxes whose IoU with an
// already selected box exceeds iou_threshold. Output: int64 [num_selected, 3] rows of
// (batch_index, class_index, box_index), in batch, class, then descending-score order (ties: lower box index
// first). Boxes are [y1, x1, y2, x2] (any corner order) or, with center_point_box=1, [x_center, y_center,
// width, height]. IoU is computed in float, as the ONNX reference does.
#include "kernels/ref/non_max_suppression.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// Input i is present and not empty (an empty optional input takes its default).
bool Given(const PrepareContext& ctx, int i) {
  return ctx.has_input(i) && ShapeElementCount(ctx.tensor_input(i).shape) > 0;
}

// Input i's first value (float32: Prepare checked), or `def` when it is absent or empty.
float ScalarFloat(const KernelContext& ctx, int i, float def) {
  const Tensor* t = ctx.input(i);
  if (!t || t->size() == 0) return def;
  return t->data<float>()[0];
}

class NonMaxSuppression : public OpKernel {
 public:
  explicit NonMaxSuppression(const ir::Node& node) : center_(NmsCenterPointBox(node)) {}

  // The output's row count depends on the scores: dynamic.
  void Prepare(PrepareContext& ctx) const override { CheckNonMaxSuppressionInputs(ctx); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.required_input(0);
    const Tensor& scores = ctx.required_input(1);
    const int64_t num_batches = boxes.dim(0), num_boxes = boxes.dim(1), num_classes = scores.dim(1);
    const NmsParams params = ReadNonMaxSuppressionParams(ctx, num_boxes);
    const float* box_data = boxes.data<float>();
    const float* score_data = scores.data<float>();

    std::vector<int64_t> selected;  // flattened triples
    std::vector<NmsBox> corners(static_cast<size_t>(num_boxes));
    std::vector<std::pair<float, int64_t>> candidates;
    std::vector<int64_t> kept;
    for (int64_t b = 0; b < num_batches && params.max_per_class > 0; ++b) {
      for (int64_t i = 0; i < num_boxes; ++i) {
        corners[static_cast<size_t>(i)] = NmsCorners(box_data + (b * num_boxes + i) * 4, center_);
      }
      for (int64_t c = 0; c < num_classes; ++c) {
        NmsSelectClass(score_data + (b * num_classes + c) * num_boxes, corners.data(), num_boxes, params, candidates,
                       kept);
        for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
      }
    }
    const int64_t count = static_cast<int64_t>(selected.size() / 3);
    Tensor& y = ctx.Output(0, DataType::kInt64, {count, 3});
    std::copy(selected.begin(), selected.end(), y.data<int64_t>());
  }

 private:
  bool center_;
};

}  // namespace

bool NmsCenterPointBox(const ir::Node& node) {
  const int64_t v = node.GetInt("center_point_box", 0);
  if (v != 0 && v != 1) {
    throw InvalidModelError(node.Describe() + ": attribute 'center_point_box' must be 0 or 1, got " +
                            std::to_string(v));
  }
  return v == 1;
}

NmsBox NmsCorners(const float* b, bool center_point) {
  if (center_point) {
    const float half_w = b[2] / 2, half_h = b[3] / 2;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

float NmsArea(const NmsBox& b) { return (b.x_max - b.x_min) * (b.y_max - b.y_min); }

bool NmsSuppressedByIoU(const NmsBox& a, const NmsBox& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const float area_a = NmsArea(a);
  const float area_b = NmsArea(b);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

void CheckNonMaxSuppressionInputs(PrepareContext& ctx) {
  const InputSpec& boxes = ctx.tensor_input(0);
  const InputSpec& scores = ctx.tensor_input(1);
  if (boxes.dtype != DataType::kFloat || scores.dtype != DataType::kFloat) {
    throw UnsupportedError(ctx.Describe() + ": boxes and scores must be float32 (" + ctx.InputString(0) + ", " +
                           ctx.InputString(1) + ")");
  }
  const Shape& bs = boxes.shape;
  const Shape& ss = scores.shape;
  if (bs.size() != 3 || bs[2] != 4) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'boxes' must have shape [batches, boxes, 4], got " +
                               ShapeToString(bs));
  }
  if (ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1]) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'scores' must have shape [" + std::to_string(bs[0]) +
                               ", classes, " + std::to_string(bs[1]) + "] to match boxes " + ShapeToString(bs) +
                               ", got " + ShapeToString(ss));
  }
  if (Given(ctx, 2)) {
    const DataType t = ctx.input(2).dtype;
    if (t != DataType::kInt32 && t != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'max_output_boxes_per_class': expected an int32 or " +
                                 "int64 tensor, got " + std::string(DataTypeName(t)));
    }
  }
  for (int i : {3, 4}) {
    if (Given(ctx, i) && ctx.input(i).dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input " + std::to_string(i) + " must be float32, got " +
                                 std::string(DataTypeName(ctx.input(i).dtype)));
    }
  }
  ctx.SetOutputDynamic(0);
}

NmsParams ReadNonMaxSuppressionParams(const KernelContext& ctx, int64_t num_boxes) {
  NmsParams p;
  if (const Tensor* t = ctx.input(2); t && t->size() > 0) {  // int32 or int64 (Prepare checked)
    p.max_per_class = t->dtype() == DataType::kInt64 ? t->data<int64_t>()[0] : t->data<int32_t>()[0];
  }
  p.max_per_class = std::clamp<int64_t>(p.max_per_class, 0, num_boxes);
  p.iou_threshold = ScalarFloat(ctx, 3, 0.0f);
  const Tensor* score_t = ctx.input(4);
  p.has_score_threshold = score_t && score_t->size() > 0;
  p.score_threshold = ScalarFloat(ctx, 4, 0.0f);
  return p;
}

void NmsCandidates(const float* scores, int64_t num_boxes, const NmsParams& params,
                   std::vector<std::pair<float, int64_t>>& candidates) {
  candidates.clear();
  for (int64_t i = 0; i < num_boxes; ++i) {
    if (!params.has_score_threshold || scores[i] > params.score_threshold) candidates.emplace_back(scores[i], i);
  }
  // Descending score, NaN last; stable so equal scores keep the lower box index first.
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& p, const auto& q) {
    return std::isnan(q.first) ? !std::isnan(p.first) : p.first > q.first;
  });
}

void NmsSelectClass(const float* scores, const NmsBox* corners, int64_t num_boxes, const NmsParams& params,
                    std::vector<std::pair<float, int64_t>>& candidates, std::vector<int64_t>& kept) {
  kept.clear();
  if (params.max_per_class <= 0) return;
  NmsCandidates(scores, num_boxes, params, candidates);
  for (const auto& cand : candidates) {
    if (static_cast<int64_t>(kept.size()) >= params.max_per_class) break;
    const NmsBox& box = corners[cand.second];
    bool keep = true;
    for (int64_t k : kept) {
      if (NmsSuppressedByIoU(box, corners[k], params.iou_threshold)) {
        keep = false;
        break;
      }
    }
    if (keep) kept.push_back(cand.second);
  }
}

void RegisterNonMaxSuppressionKernels(KernelRegistry& r) {
  for (int since : {10, 11}) {
    r.Add({.op = "NonMaxSuppression",
           .since = since,
           .until = since == 10 ? 10 : kOpsetOpen,
           .create = MakeKernel<NonMaxSuppression>,
           .host_inputs = {2, 3, 4}});
  }
}

}  // namespace ferry::ref
