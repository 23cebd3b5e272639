// NonMaxSuppression (opsets 10, 11) on the cpu backend: center_point_box 0 / 1, max_output_boxes_per_class,
// iou_threshold and score_threshold, any number of batches and classes. Ref's node code
// (ref/non_max_suppression.h) checks the inputs, reads the scalar inputs, computes box corners and IoU and runs
// one class's greedy selection (one sort by score, then the suppression walk), so the semantics live once; this
// kernel runs the (batch, class) selections in parallel (each batch's corners converted once, in parallel too)
// and concatenates them in ref's order: batch, class, selection.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/non_max_suppression.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class NonMaxSuppression : public OpKernel {
 public:
  explicit NonMaxSuppression(const ir::Node& node) : center_(ref::NmsCenterPointBox(node)) {}

  void Prepare(PrepareContext& ctx) const override { ref::CheckNonMaxSuppressionInputs(ctx); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.required_input(0);
    const Tensor& scores = ctx.required_input(1);
    const int64_t num_batches = boxes.dim(0), num_boxes = boxes.dim(1), num_classes = scores.dim(1);
    const ref::NmsParams params = ref::ReadNonMaxSuppressionParams(ctx, num_boxes);
    const float* box_data = boxes.data<float>();
    const float* score_data = scores.data<float>();
    const int64_t pairs = params.max_per_class > 0 ? num_batches * num_classes : 0;

    std::vector<ref::NmsBox> corners(static_cast<size_t>(pairs > 0 ? num_batches * num_boxes : 0));
    ParallelFor(ctx.threads(), static_cast<int64_t>(corners.size()), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        corners[static_cast<size_t>(i)] = ref::NmsCorners(box_data + i * 4, center_);
    });
    // Selections per (batch, class); a pair with many candidates costs a sort and up to max_per_class IoU walks.
    std::vector<std::vector<int64_t>> kept(static_cast<size_t>(pairs));
    const int64_t min_chunk = std::max<int64_t>(1, 2048 / std::max<int64_t>(num_boxes, 1));
    ParallelFor(ctx.threads(), pairs, min_chunk, [&](int64_t begin, int64_t end) {
      std::vector<std::pair<float, int64_t>> candidates;
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / num_classes;
        ref::NmsSelectClass(score_data + p * num_boxes, corners.data() + b * num_boxes, num_boxes, params, candidates,
                            kept[static_cast<size_t>(p)]);
      }
    });
    int64_t count = 0;
    for (const auto& k : kept) count += static_cast<int64_t>(k.size());
    Tensor& y = ctx.OutputUninitialized(0, DataType::kInt64, {count, 3});
    int64_t* out = y.data<int64_t>();
    for (int64_t p = 0; p < pairs; ++p) {
      for (int64_t box : kept[static_cast<size_t>(p)]) {
        *out++ = p / num_classes;
        *out++ = p % num_classes;
        *out++ = box;
      }
    }
  }

 private:
  bool center_;
};

}  // namespace

void RegisterNonMaxSuppressionKernels(KernelRegistry& r) {
  for (int since : {10, 11}) {
    r.Add({.op = "NonMaxSuppression",
           .since = since,
           .until = since == 10 ? 10 : kOpsetOpen,
           .create = MakeKernel<NonMaxSuppression>,
           .host_inputs = {2, 3, 4},
           .name = "cpu.f32_nonmaxsuppression__parallel." + std::to_string(since)});
  }
}

}  // namespace ferry::cpu
