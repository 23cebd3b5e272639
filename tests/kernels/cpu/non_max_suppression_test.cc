// The cpu NonMaxSuppression kernel (non_max_suppression.cc), each variant (AVX-512F, AVX2, scalar) against ref,
// exactly: center_point_box 0 / 1,
// max_output_boxes_per_class 0 / small / past the box count / absent, iou_threshold and score_threshold given or
// not, flipped corners, tied and NaN scores, many batches and classes over two threads, opsets 10 and 11; boxes
// given but no scores above the threshold; hundreds kept among special boxes (ties, NaN, inf, empty, inverted);
// and mismatched scores, whose Prepare error names the node.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

// [batches, n, 4] boxes over a 10 x 10 field, as corners (some flipped) or center / size.
Tensor RandomBoxes(std::mt19937& rng, int64_t batches, int64_t n, bool center) {
  Tensor t(DataType::kFloat, {batches, n, 4});
  std::uniform_real_distribution<float> pos(0, 10), size(0.5f, 4);
  for (int64_t i = 0; i < batches * n; ++i) {
    float* b = t.data<float>() + i * 4;
    const float a = pos(rng), c = pos(rng), w = size(rng), h = size(rng);
    if (center) {
      b[0] = a, b[1] = c, b[2] = w, b[3] = h;
    } else if (i % 5 == 2) {  // flipped corners
      b[0] = c + h, b[1] = a + w, b[2] = c, b[3] = a;
    } else {
      b[0] = c, b[1] = a, b[2] = c + h, b[3] = a + w;
    }
  }
  return t;
}

// Scores in [0, 1) rounded to tenths (many ties), a few NaN.
Tensor RandomScores(std::mt19937& rng, int64_t batches, int64_t classes, int64_t n) {
  Tensor t(DataType::kFloat, {batches, classes, n});
  std::uniform_int_distribution<int> tenth(0, 9), nan(0, 40);
  for (int64_t i = 0; i < t.size(); ++i) {
    t.data<float>()[i] = nan(rng) == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(tenth(rng)) / 10;
  }
  return t;
}

Tensor I64(int64_t v) {
  Tensor t(DataType::kInt64, {1});
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor F32(float v) {
  Tensor t(DataType::kFloat, {1});
  t.data<float>()[0] = v;
  return t;
}

// max_out < 0: input absent; iou / score < 0: absent.
OpTest NmsTest(const Tensor& boxes, const Tensor& scores, bool center, int64_t max_out, float iou, float score,
               int64_t opset, int threads) {
  OpTest t{.op = "NonMaxSuppression", .opset = opset, .threads = threads};
  t.inputs = {In("boxes", boxes), In("scores", scores)};
  const bool any_scalar = max_out >= 0 || iou >= 0 || score >= 0;
  if (any_scalar) t.inputs.push_back(max_out >= 0 ? Const("max_out", I64(max_out)) : Omitted());
  if (iou >= 0 || score >= 0) t.inputs.push_back(iou >= 0 ? Const("iou", F32(iou)) : Omitted());
  if (score >= 0) t.inputs.push_back(Const("score", F32(score)));
  t.attributes = {Int("center_point_box", center ? 1 : 0)};
  t.rtol = t.atol = 0;
  return t;
}

std::string KernelFor(const EwVariant& v, int64_t opset) {
  const std::string impl = std::string(v.impl) == "scalar" ? "parallel" : v.impl;
  return "cpu.f32_nonmaxsuppression__" + impl + "." + std::to_string(opset);
}

// The variants this host runs: AVX-512F, AVX2+FMA (the vectorized IoU walk) and the scalar one (ref's walk).
std::vector<EwVariant> Variants() {
  std::vector<EwVariant> v;
  for (const EwVariant& e : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (EwHostHas(e)) v.push_back(e);
  }
  return v;
}

TEST(CpuNonMaxSuppression, EveryBoxFormatAndThreshold) {
  std::mt19937 rng(4001);
  for (bool center : {false, true}) {
    for (int64_t max_out : {-1, 0, 3, 100}) {
      for (float iou : {-1.0f, 0.3f, 0.7f}) {
        for (float score : {-1.0f, 0.45f}) {
          const Tensor boxes = RandomBoxes(rng, 2, 40, center);
          const Tensor scores = RandomScores(rng, 2, 3, 40);
          const OpTest t = NmsTest(boxes, scores, center, max_out, iou, score, 11, 1);
          for (const EwVariant& v : Variants()) {
            EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelFor(v, 11)))
                << v.impl << " center=" << center << " max=" << max_out << " iou=" << iou << " score=" << score;
          }
        }
      }
    }
  }
}

TEST(CpuNonMaxSuppression, ManyBatchesAndClassesOverTwoThreads) {
  std::mt19937 rng(4002);
  for (int64_t opset : {10, 11}) {
    const Tensor boxes = RandomBoxes(rng, 5, 300, false);
    const Tensor scores = RandomScores(rng, 5, 20, 300);
    for (const EwVariant& v : Variants()) {
      EXPECT_TRUE(
          MatchesRefWithKernel(NmsTest(boxes, scores, false, 50, 0.5f, 0.2f, opset, 2), v.isa, KernelFor(v, opset)))
          << v.impl;
    }
  }
}

TEST(CpuNonMaxSuppression, NothingAboveTheScoreThreshold) {
  std::mt19937 rng(4003);
  const Tensor boxes = RandomBoxes(rng, 2, 10, false);
  const Tensor scores = RandomScores(rng, 2, 2, 10);
  for (const EwVariant& v : Variants()) {
    EXPECT_TRUE(MatchesRefWithKernel(NmsTest(boxes, scores, false, 5, 0.5f, 2.0f, 11, 2), v.isa, KernelFor(v, 11)))
        << v.impl;
  }
}

// Thousands of candidates, hundreds kept (the kept arrays past many vectors, their padding), boxes on a grid of
// repeated coordinates (exact ties of max/min, shared edges: IoU exactly at thresholds like 1/3 and 1/2),
// zero-size and inverted boxes, infinite and NaN coordinates: the same selection as ref, bit for bit.
TEST(CpuNonMaxSuppression, ManyKeptAndSpecialBoxesSelectAsRefDoes) {
  std::mt19937 rng(4004);
  const int64_t n = 3000;
  Tensor boxes(DataType::kFloat, {1, n, 4});
  std::uniform_int_distribution<int> cell(0, 40), extent(0, 6), special(0, 60);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i) {
    float* b = boxes.data<float>() + i * 4;
    const float y = static_cast<float>(cell(rng)) * 0.5f, x = static_cast<float>(cell(rng)) * 0.5f;
    b[0] = y, b[1] = x, b[2] = y + static_cast<float>(extent(rng)), b[3] = x + static_cast<float>(extent(rng));
    switch (special(rng)) {
      case 0: b[2] = nan; break;
      case 1: b[3] = inf; break;
      case 2: b[0] = -inf; break;
      case 3: b[2] = b[0]; break;            // zero height
      case 4: std::swap(b[1], b[3]); break;  // inverted corners
      case 5: b[1] = -0.0f, b[3] = 0.0f; break;
      default: break;
    }
  }
  const Tensor scores = RandomScores(rng, 1, 2, n);
  for (float iou : {0.0f, 1.0f / 3.0f, 0.5f, 0.9f}) {
    for (const EwVariant& v : Variants()) {
      EXPECT_TRUE(MatchesRefWithKernel(NmsTest(boxes, scores, false, n, iou, -1.0f, 11, 1), v.isa, KernelFor(v, 11)))
          << v.impl << " iou=" << iou;
    }
  }
}

TEST(CpuNonMaxSuppression, MismatchedScoresIsAPrepareErrorNamingTheNode) {
  std::mt19937 rng(4004);
  auto session = OneNodeSession("NonMaxSuppression", {{"boxes", DataType::kFloat}, {"scores", DataType::kFloat}}, {"y"},
                                11, nullptr, OnlyBackend("cpu", 1));
  try {
    session->Run({{"boxes", RandomBoxes(rng, 1, 6, false)}, {"scores", RandomScores(rng, 1, 2, 5)}});
    ADD_FAILURE() << "expected a Prepare error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'n0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scores"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
