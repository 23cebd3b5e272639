// NonMaxSuppression (opsets 10, 11) on the cpu backend: center_point_box 0 / 1, max_output_boxes_per_class,
// iou_threshold and score_threshold, any number of batches and classes. Ref's node code
// (ref/non_max_suppression.h) checks the inputs, reads the scalar inputs, computes box corners, orders one class's
// candidates and defines the IoU test, so the semantics live once; this kernel runs the (batch, class) selections
// in parallel (each batch's corners converted once, in parallel too) and concatenates them in ref's order: batch,
// class, selection.
//
// The greedy walk tests each candidate against every box kept so far, which is most of the time when many boxes
// survive (SSDlite's torchvision export puts every class's top boxes into one NMS: ~100 ms of its run with the
// scalar walk, as long as ONNX Runtime's). The AVX-512F and AVX2 variants keep the kept boxes' corners and areas
// as arrays and test a candidate against 16 (8) of them per step. The test is ref's (NmsSuppressedByIoU) operation
// for operation, so the selection is the same bit for bit: std::max(a, b) is vmaxps(b, a) and std::min(a, b)
// vminps(b, a) (NaN and signed zeros included), the areas are ref's (NmsArea) evaluated once per box, the
// product of the intersection is kept out of an FMA with the sum of the areas, and ref's early exits become
// ordered compares (with a NaN anywhere ref's test is false, and so are the compares). The scalar variant runs
// ref's walk.
#include <immintrin.h>

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

constexpr int64_t kLanes = 16;  // the kept arrays grow by the widest variant's vector

// The kept boxes of one selection as arrays, padded to a multiple of kLanes with boxes of area 0 (never
// suppressing: ref's test is false for a zero area).
struct KeptBoxes {
  std::vector<float> x_min, y_min, x_max, y_max, area;
  int64_t count = 0;

  void Clear() {
    count = 0;
    for (auto* v : {&x_min, &y_min, &x_max, &y_max, &area}) v->clear();
  }
  void Add(const ref::NmsBox& b, float box_area) {
    if (count == static_cast<int64_t>(area.size())) {
      for (auto* v : {&x_min, &y_min, &x_max, &y_max, &area}) v->resize(v->size() + kLanes, 0.0f);
    }
    const size_t i = static_cast<size_t>(count++);
    x_min[i] = b.x_min, y_min[i] = b.y_min, x_max[i] = b.x_max, y_max[i] = b.y_max, area[i] = box_area;
  }
};

__attribute__((target("avx512f"))) bool SuppressedAvx512(const ref::NmsBox& a, float area_a, const KeptBoxes& k,
                                                         float iou_threshold) {
  const __m512 ax0 = _mm512_set1_ps(a.x_min), ay0 = _mm512_set1_ps(a.y_min);
  const __m512 ax1 = _mm512_set1_ps(a.x_max), ay1 = _mm512_set1_ps(a.y_max);
  const __m512 aa = _mm512_set1_ps(area_a), thr = _mm512_set1_ps(iou_threshold), zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < k.count; i += 16) {
    // std::max(a, b) is vmaxps(b, a), std::min(a, b) vminps(b, a); the merge-masked forms with every lane set
    // compile to the same instructions without GCC 12's -Wmaybe-uninitialized on the unmasked ones.
    const __m512 bx0 = _mm512_loadu_ps(k.x_min.data() + i), bx1 = _mm512_loadu_ps(k.x_max.data() + i);
    const __m512 by0 = _mm512_loadu_ps(k.y_min.data() + i), by1 = _mm512_loadu_ps(k.y_max.data() + i);
    const __m512 ix0 = _mm512_mask_max_ps(bx0, 0xFFFF, bx0, ax0), ix1 = _mm512_mask_min_ps(bx1, 0xFFFF, bx1, ax1);
    const __m512 iy0 = _mm512_mask_max_ps(by0, 0xFFFF, by0, ay0), iy1 = _mm512_mask_min_ps(by1, 0xFFFF, by1, ay1);
    const __m512 ab = _mm512_loadu_ps(k.area.data() + i);
    __m512 inter = _mm512_mul_ps(_mm512_sub_ps(ix1, ix0), _mm512_sub_ps(iy1, iy0));
    asm("" : "+v"(inter));  // no FMA of the product into the union below: ref rounds it first
    const __m512 uni = _mm512_sub_ps(_mm512_add_ps(aa, ab), inter);
    __mmask16 m = _mm512_cmp_ps_mask(ix1, ix0, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(iy1, iy0, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(inter, zero, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(aa, zero, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(ab, zero, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(uni, zero, _CMP_GT_OQ);
    m &= _mm512_cmp_ps_mask(_mm512_div_ps(inter, uni), thr, _CMP_GT_OQ);
    if (m) return true;
  }
  return false;
}

__attribute__((target("avx2,fma"))) bool SuppressedAvx2(const ref::NmsBox& a, float area_a, const KeptBoxes& k,
                                                        float iou_threshold) {
  const __m256 ax0 = _mm256_set1_ps(a.x_min), ay0 = _mm256_set1_ps(a.y_min);
  const __m256 ax1 = _mm256_set1_ps(a.x_max), ay1 = _mm256_set1_ps(a.y_max);
  const __m256 aa = _mm256_set1_ps(area_a), thr = _mm256_set1_ps(iou_threshold), zero = _mm256_setzero_ps();
  for (int64_t i = 0; i < k.count; i += 8) {
    const __m256 ix0 = _mm256_max_ps(_mm256_loadu_ps(k.x_min.data() + i), ax0);
    const __m256 ix1 = _mm256_min_ps(_mm256_loadu_ps(k.x_max.data() + i), ax1);
    const __m256 iy0 = _mm256_max_ps(_mm256_loadu_ps(k.y_min.data() + i), ay0);
    const __m256 iy1 = _mm256_min_ps(_mm256_loadu_ps(k.y_max.data() + i), ay1);
    const __m256 ab = _mm256_loadu_ps(k.area.data() + i);
    __m256 inter = _mm256_mul_ps(_mm256_sub_ps(ix1, ix0), _mm256_sub_ps(iy1, iy0));
    asm("" : "+x"(inter));  // as above
    const __m256 uni = _mm256_sub_ps(_mm256_add_ps(aa, ab), inter);
    __m256 m = _mm256_cmp_ps(ix1, ix0, _CMP_GT_OQ);
    m = _mm256_and_ps(m, _mm256_cmp_ps(iy1, iy0, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(inter, zero, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(aa, zero, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(ab, zero, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(uni, zero, _CMP_GT_OQ));
    m = _mm256_and_ps(m, _mm256_cmp_ps(_mm256_div_ps(inter, uni), thr, _CMP_GT_OQ));
    if (_mm256_movemask_ps(m) != 0) return true;
  }
  return false;
}

enum class Variant { kAvx512, kAvx2, kScalar };

// ref::NmsSelectClass's walk with the vectorized test.
template <bool (*Suppressed)(const ref::NmsBox&, float, const KeptBoxes&, float)>
void SelectClassVectorized(const float* scores, const ref::NmsBox* corners, int64_t num_boxes,
                           const ref::NmsParams& params, std::vector<std::pair<float, int64_t>>& candidates,
                           KeptBoxes& boxes, std::vector<int64_t>& kept) {
  kept.clear();
  boxes.Clear();
  if (params.max_per_class <= 0) return;
  ref::NmsCandidates(scores, num_boxes, params, candidates);
  for (const auto& cand : candidates) {
    if (static_cast<int64_t>(kept.size()) >= params.max_per_class) break;
    const ref::NmsBox& box = corners[cand.second];
    const float area = ref::NmsArea(box);
    if (Suppressed(box, area, boxes, params.iou_threshold)) continue;
    kept.push_back(cand.second);
    boxes.Add(box, area);
  }
}

class NonMaxSuppression : public OpKernel {
 public:
  NonMaxSuppression(const ir::Node& node, Variant variant) : center_(ref::NmsCenterPointBox(node)), variant_(variant) {}

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
      KeptBoxes kept_boxes;
      for (int64_t p = begin; p < end; ++p) {
        const int64_t b = p / num_classes;
        const float* s = score_data + p * num_boxes;
        const ref::NmsBox* c = corners.data() + b * num_boxes;
        std::vector<int64_t>& out = kept[static_cast<size_t>(p)];
        switch (variant_) {
          case Variant::kAvx512:
            SelectClassVectorized<SuppressedAvx512>(s, c, num_boxes, params, candidates, kept_boxes, out);
            break;
          case Variant::kAvx2:
            SelectClassVectorized<SuppressedAvx2>(s, c, num_boxes, params, candidates, kept_boxes, out);
            break;
          case Variant::kScalar: ref::NmsSelectClass(s, c, num_boxes, params, candidates, out); break;
        }
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
  Variant variant_;
};

}  // namespace

void RegisterNonMaxSuppressionKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    Variant variant;
  } variants[] = {{"avx512", {Isa::kAvx512f}, Variant::kAvx512},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, Variant::kAvx2},
                  {"parallel", {}, Variant::kScalar}};
  for (const auto& v : variants) {
    for (int since : {10, 11}) {
      const Variant variant = v.variant;
      r.Add({.op = "NonMaxSuppression",
             .since = since,
             .until = since == 10 ? 10 : kOpsetOpen,
             .create = [variant](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<NonMaxSuppression>(node, variant);
             },
             .host_inputs = {2, 3, 4},
             .isa = v.isa,
             .name = std::string("cpu.f32_nonmaxsuppression__") + v.impl + "." + std::to_string(since)});
    }
  }
}

}  // namespace ferry::cpu
