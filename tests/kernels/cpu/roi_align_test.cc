// The cpu RoiAlign kernel (roi_align.cc, AVX2+FMA) against ref, bit for bit: modes avg / max x
// coordinate_transformation_mode half_pixel / output_half_pixel x sampling_ratio adaptive / fixed at opsets 10, 16
// and 22, rois inside, across and outside the map, flipped and degenerate, spatial_scale, X with
// edge values, many rois over two threads (the AVX2 kernel proven to run); ref's kernel without AVX2; no rois; a
// batch index out of range (a run error) and bad rois, whose Prepare error names the node.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

// `n` rois over an h x w map (in input coordinates, before spatial_scale): mostly inside, some across the border
// or outside, some flipped (x2 < x1) or a single point.
Tensor RandomRois(std::mt19937& rng, int64_t n, double h, double w) {
  Tensor t(DataType::kFloat, {n, 4});
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < n; ++i) {
    float* r = t.data<float>() + i * 4;
    const double x1 = -0.2 * w + 1.3 * w * u(rng), y1 = -0.2 * h + 1.3 * h * u(rng);
    double bw = 0.05 * w + 0.6 * w * u(rng), bh = 0.05 * h + 0.6 * h * u(rng);
    if (i % 7 == 3) bw = -bw;  // flipped
    if (i % 11 == 5) bw = bh = 0;
    r[0] = static_cast<float>(x1);
    r[1] = static_cast<float>(y1);
    r[2] = static_cast<float>(x1 + bw);
    r[3] = static_cast<float>(y1 + bh);
  }
  return t;
}

Tensor BatchIndices(std::mt19937& rng, int64_t n, int64_t batches, DataType dt) {
  Tensor t(dt, {n});
  std::uniform_int_distribution<int64_t> pick(0, batches - 1);
  for (int64_t i = 0; i < n; ++i) {
    if (dt == DataType::kInt64) t.data<int64_t>()[i] = pick(rng);
    else t.data<int32_t>()[i] = static_cast<int32_t>(pick(rng));
  }
  return t;
}

OpTest RoiTest(const Tensor& x, const Tensor& rois, const Tensor& batch, int64_t opset, const std::string& mode,
               const std::string& coord, int64_t ratio, int64_t oh, int64_t ow, float scale, int threads) {
  OpTest t{.op = "RoiAlign", .opset = opset, .threads = threads};
  t.inputs = {In("x", x), In("rois", rois), In("batch_indices", batch)};
  t.attributes = {Str("mode", mode), Int("sampling_ratio", ratio), Int("output_height", oh), Int("output_width", ow),
                  Float("spatial_scale", scale)};
  if (opset >= 16) t.attributes.push_back(Str("coordinate_transformation_mode", coord));
  t.rtol = t.atol = 0;  // the cpu kernel does ref's double operations in ref's order
  return t;
}

// MatchesRef, and where the host has AVX2+FMA, the kernel cpu.f32_roialign__avx2.<since> (proven to run).
void ExpectVariantsMatchRef(const OpTest& t, const std::string& what) {
  const int64_t since = t.opset >= 22 ? 22 : t.opset >= 16 ? 16 : 10;
  EXPECT_TRUE(MatchesRef(t, "cpu")) << what;
  if (!EwHostHas(kEwAvx2)) return;
  EXPECT_TRUE(MatchesRefWithKernel(t, kEwAvx2.isa, "cpu.f32_roialign__avx2." + std::to_string(since))) << what;
}

TEST(CpuRoiAlign, EveryModeCoordinateModeAndSamplingRatio) {
  std::mt19937 rng(3001);
  for (int64_t opset : {10, 16, 22}) {
    for (const char* mode : {"avg", "max"}) {
      for (const char* coord : {"half_pixel", "output_half_pixel"}) {
        if (opset == 10 && std::string(coord) == "half_pixel") continue;  // opset 10 is output_half_pixel
        for (int64_t ratio : {0, 2}) {
          const Tensor x = RandomTensor(DataType::kFloat, {2, 11, 12, 14}, rng);  // 8 channels + 3
          const Tensor rois = RandomRois(rng, 9, 24, 28);
          const Tensor batch = BatchIndices(rng, 9, 2, DataType::kInt64);
          const std::string what = std::string(mode) + "/" + coord + "/ratio=" + std::to_string(ratio) + " opset " +
                                   std::to_string(opset);
          ExpectVariantsMatchRef(RoiTest(x, rois, batch, opset, mode, coord, ratio, 3, 4, 0.5f, 1), what);
        }
      }
    }
  }
}

TEST(CpuRoiAlign, EdgeValuesInX) {
  std::mt19937 rng(3002);
  for (const char* mode : {"avg", "max"}) {
    const Tensor x = RandomTensor(DataType::kFloat, {3, 9, 9, 11}, rng, -2, 2, /*edges=*/true);
    const Tensor rois = RandomRois(rng, 12, 9, 11);
    const Tensor batch = BatchIndices(rng, 12, 3, DataType::kInt64);
    ExpectVariantsMatchRef(RoiTest(x, rois, batch, 22, mode, "half_pixel", 0, 5, 3, 1.0f, 1),
                           std::string("edges ") + mode);
  }
}

TEST(CpuRoiAlign, ManyRoisOverTwoThreads) {
  std::mt19937 rng(3003);
  for (const char* mode : {"avg", "max"}) {
    const Tensor x = RandomTensor(DataType::kFloat, {3, 16, 25, 25}, rng);
    const Tensor rois = RandomRois(rng, 64, 100, 100);
    Tensor batch = BatchIndices(rng, 64, 2, DataType::kInt64);
    for (int64_t i = 0; i < 64; ++i) batch.data<int64_t>()[i] += 1;  // images 1 and 2 only, in random order
    ExpectVariantsMatchRef(RoiTest(x, rois, batch, 16, mode, "half_pixel", 0, 7, 7, 0.25f, 2),
                           std::string("many ") + mode);
  }
}

TEST(CpuRoiAlign, WithoutAvx2PlacementTakesRef) {
  std::mt19937 rng(3007);
  const OpTest t = RoiTest(RandomTensor(DataType::kFloat, {1, 3, 6, 6}, rng), RandomRois(rng, 2, 6, 6),
                           Tensor(DataType::kInt64, {2}), 16, "avg", "half_pixel", 0, 2, 2, 1.0f, 1);
  auto session = SessionFor(OneNodeModel(t), {"cpu", "ref"}, false, 1, "none");
  ASSERT_EQ(session->placement().nodes.size(), 1u);
  EXPECT_EQ(session->placement().nodes[0].backend, "ref");
}

TEST(CpuRoiAlign, NoRois) {
  std::mt19937 rng(3004);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 3, 6, 6}, rng);
  EXPECT_TRUE(MatchesRef(RoiTest(x, Tensor(DataType::kFloat, {0, 4}), Tensor(DataType::kInt64, {0}), 16, "avg",
                                 "half_pixel", 0, 2, 2, 1.0f, 1),
                         "cpu"));
}

TEST(CpuRoiAlign, BatchIndexOutOfRangeIsAnErrorNamingTheNode) {
  std::mt19937 rng(3005);
  Tensor batch(DataType::kInt64, {2});
  batch.data<int64_t>()[0] = 0;
  batch.data<int64_t>()[1] = 2;
  const OpTest t = RoiTest(RandomTensor(DataType::kFloat, {2, 3, 6, 6}, rng), RandomRois(rng, 2, 6, 6), batch, 16,
                           "avg", "half_pixel", 0, 2, 2, 1.0f, 1);
  try {
    RunOn(t, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an out-of-range batch index to fail";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'node'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("batch index 2"), std::string::npos) << e.what();
  }
}

TEST(CpuRoiAlign, BadRoisShapeIsAPrepareErrorNamingTheNode) {
  std::mt19937 rng(3006);
  auto session = OneNodeSession(
      "RoiAlign", {{"x", DataType::kFloat}, {"rois", DataType::kFloat}, {"batch_indices", DataType::kInt64}}, {"y"}, 16,
      nullptr, OnlyBackend("cpu", 1));
  try {
    session->Run({{"x", RandomTensor(DataType::kFloat, {1, 2, 4, 4}, rng)},
                  {"rois", RandomTensor(DataType::kFloat, {3, 5}, rng)},
                  {"batch_indices", Tensor(DataType::kInt64, {3})}});
    ADD_FAILURE() << "expected a Prepare error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'n0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rois"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
