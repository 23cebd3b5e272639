// The cpu GridSample kernel (grid_sample.cc, AVX2+FMA / scalar) against ref: every mode x padding_mode x
// align_corners on 2-D data at opsets 16 (bilinear / bicubic names) and 20 / 22 (linear / cubic), 1-D and 3-D data
// at opset 20, 8 channels or more (the AVX2 variant's channels-last path), grids reaching past the borders
// (padding) and holding NaN / +-inf, X with edge values, output rows wider than one tap table and two threads,
// every ISA variant the host has (proven by the kernel that ran); nearest bit for bit, linear / cubic within
// 1e-6; an empty output; and a bad grid shape, whose Prepare error names the node.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

struct GsCase {
  std::string mode;  // at opset 20+ spelling: linear, nearest, cubic
  std::string padding;
  int64_t align = 0;
};

std::vector<GsCase> AllCases() {
  std::vector<GsCase> cases;
  for (const char *mode : {"linear", "nearest", "cubic"}) {
    for (const char *padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) cases.push_back({mode, padding, align});
    }
  }
  return cases;
}

// GridSample-`opset` of x at the grid's points; opset 16 spells linear / cubic as bilinear / bicubic.
OpTest GsTest(const Tensor &x, const Tensor &grid, const GsCase &c, int64_t opset, int threads) {
  std::string mode = c.mode;
  if (opset < 20 && mode != "nearest") mode = mode == "linear" ? "bilinear" : "bicubic";
  OpTest t{.op = "GridSample", .opset = opset, .threads = threads};
  t.inputs = {In("x", x), In("grid", grid)};
  t.attributes = {Str("mode", mode), Str("padding_mode", c.padding), Int("align_corners", c.align)};
  if (c.mode == "nearest") {
    t.rtol = t.atol = 0;
  } else {
    t.rtol = 1e-6;  // ref's double sum, but fused multiply-adds
    t.atol = 1e-7;
  }
  return t;
}

std::string Describe(const GsCase &c, int64_t opset) {
  return c.mode + "/" + c.padding + "/align=" + std::to_string(c.align) + " opset " + std::to_string(opset);
}

// MatchesRef, and with every ISA variant the host has, the kernel cpu.f32_gridsample__impl.<since>.
void ExpectVariantsMatchRef(const OpTest &t, const std::string &what) {
  const int64_t since = t.opset >= 22 ? 22 : t.opset >= 20 ? 20 : 16;
  EXPECT_TRUE(MatchesRef(t, "cpu")) << what;
  for (const EwVariant &v : {kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    EXPECT_TRUE(
        MatchesRefWithKernel(t, v.isa, "cpu.f32_gridsample__" + std::string(v.impl) + "." + std::to_string(since)))
        << v.impl << " " << what;
  }
}

TEST(CpuGridSample, EveryModeAndPaddingOn2DAtEachOpset) {
  std::mt19937 rng(2001);
  for (int64_t opset : {16, 20, 22}) {
    for (const GsCase &c : AllCases()) {
      const Tensor x = RandomTensor(DataType::kFloat, {2, 3, 5, 7}, rng);
      const Tensor grid = RandomTensor(DataType::kFloat, {2, 4, 6, 2}, rng, -1.4, 1.4);
      ExpectVariantsMatchRef(GsTest(x, grid, c, opset, 1), Describe(c, opset));
    }
  }
}

TEST(CpuGridSample, OneAndThreeSpatialDims) {
  std::mt19937 rng(2002);
  for (const GsCase &c : AllCases()) {
    const Tensor x1 = RandomTensor(DataType::kFloat, {2, 3, 9}, rng);
    const Tensor g1 = RandomTensor(DataType::kFloat, {2, 11, 1}, rng, -1.3, 1.3);
    ExpectVariantsMatchRef(GsTest(x1, g1, c, 20, 1), "1-D " + Describe(c, 20));
    const Tensor x3 = RandomTensor(DataType::kFloat, {1, 2, 4, 5, 6}, rng);
    const Tensor g3 = RandomTensor(DataType::kFloat, {1, 3, 4, 5, 3}, rng, -1.3, 1.3);
    ExpectVariantsMatchRef(GsTest(x3, g3, c, 22, 2), "3-D " + Describe(c, 22));
  }
}

TEST(CpuGridSample, ChannelsLastWithEightChannelsOrMore) {
  std::mt19937 rng(2007);
  for (const GsCase &c : AllCases()) {
    // 11 channels: one block of 8 and 3 one by one; 2-D at opset 16, 3-D at 22.
    const Tensor x2 = RandomTensor(DataType::kFloat, {2, 11, 5, 7}, rng, -1, 1,
                                   /*edges=*/true);
    const Tensor g2 = RandomTensor(DataType::kFloat, {2, 4, 6, 2}, rng, -1.4, 1.4, /*edges=*/true);
    ExpectVariantsMatchRef(GsTest(x2, g2, c, 16, 1), "11 channels " + Describe(c, 16));
    const Tensor x3 = RandomTensor(DataType::kFloat, {1, 8, 3, 4, 5}, rng);
    const Tensor g3 = RandomTensor(DataType::kFloat, {1, 2, 3, 4, 3}, rng, -1.3, 1.3);
    ExpectVariantsMatchRef(GsTest(x3, g3, c, 22, 2), "8 channels 3-D " + Describe(c, 22));
  }
}

TEST(CpuGridSample, EdgeValuesInGridAndX) {
  std::mt19937 rng(2003);
  for (const GsCase &c : AllCases()) {
    // NaN / inf grid coordinates sample nothing (0); NaN / inf / 1e30 pixels propagate as in ref.
    const Tensor x = RandomTensor(DataType::kFloat, {1, 2, 6, 6}, rng, -1, 1,
                                  /*edges=*/true);
    const Tensor grid = RandomTensor(DataType::kFloat, {1, 5, 7, 2}, rng, -1.2, 1.2, /*edges=*/true);
    ExpectVariantsMatchRef(GsTest(x, grid, c, 20, 1), "edges " + Describe(c, 20));
  }
}

TEST(CpuGridSample, WideRowsOverTwoThreads) {
  std::mt19937 rng(2004);
  for (const GsCase &c :
       {GsCase{"linear", "zeros", 0}, GsCase{"cubic", "reflection", 1}, GsCase{"nearest", "border", 0}}) {
    // 300 pixels per output row: two tap tables, the second with a partial vector.
    for (int64_t channels : {5, 16}) {  // per plane; channels-last
      const Tensor x = RandomTensor(DataType::kFloat, {2, channels, 12, 16}, rng);
      const Tensor grid = RandomTensor(DataType::kFloat, {2, 3, 300, 2}, rng, -1.1, 1.1);
      ExpectVariantsMatchRef(GsTest(x, grid, c, 22, 2), "wide " + Describe(c, 22));
    }
  }
}

TEST(CpuGridSample, EmptyOutput) {
  std::mt19937 rng(2005);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 2, 4, 4}, rng);
  const Tensor grid = RandomTensor(DataType::kFloat, {1, 0, 3, 2}, rng);
  EXPECT_TRUE(MatchesRef(GsTest(x, grid, {"linear", "zeros", 0}, 20, 1), "cpu"));
}

TEST(CpuGridSample, BadGridShapeIsAPrepareErrorNamingTheNode) {
  std::mt19937 rng(2006);
  // Unranked graph inputs: shape inference cannot check the grid, so the kernel's Prepare (first run) does.
  auto session = OneNodeSession("GridSample", {{"x", DataType::kFloat}, {"grid", DataType::kFloat}}, {"y"}, 20, nullptr,
                                OnlyBackend("cpu", 1));
  try {
    session->Run({{"x", RandomTensor(DataType::kFloat, {1, 2, 4, 4}, rng)},
                  {"grid", RandomTensor(DataType::kFloat, {1, 3, 3, 3}, rng)}});
    ADD_FAILURE() << "expected a Prepare error";
  } catch (const InvalidArgumentError &e) {
    EXPECT_NE(std::string(e.what()).find("'n0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("grid"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
