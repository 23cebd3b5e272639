// The cpu AffineGrid kernel (affine_grid.cc: ref's kernel, registered for cpu) against ref, bit for bit: 2-D and
// 3-D grids, align_corners 0 / 1, sizes of 1 (align_corners' single point), the size a constant or a run-time
// input, float32 and float64 theta, two threads; and a theta that does not match the size, whose error names the
// node.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

Tensor Sizes(const std::vector<int64_t>& v) {
  Tensor t(DataType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

OpTest AgTest(const Tensor& theta, const std::vector<int64_t>& size, int64_t align, bool constant, int threads) {
  OpTest t{.op = "AffineGrid", .opset = 20, .threads = threads};
  t.inputs = {In("theta", theta), constant ? Const("size", Sizes(size)) : In("size", Sizes(size))};
  t.attributes = {Int("align_corners", align)};
  t.rtol = t.atol = 0;
  return t;
}

TEST(CpuAffineGrid, TwoAndThreeDimsEachAlignment) {
  std::mt19937 rng(5001);
  const std::vector<std::vector<int64_t>> sizes = {
      {2, 3, 5, 7}, {1, 1, 1, 4}, {3, 2, 16, 1}, {2, 1, 3, 4, 5}, {1, 2, 1, 1, 6}};
  for (const auto& size : sizes) {
    const int64_t r = static_cast<int64_t>(size.size()) - 2;
    for (DataType dt : {DataType::kFloat, DataType::kDouble}) {
      for (int64_t align : {0, 1}) {
        for (bool constant : {true, false}) {
          const Tensor theta = RandomTensor(dt, {size[0], r, r + 1}, rng, -2, 2);
          EXPECT_TRUE(MatchesRefWithKernel(AgTest(theta, size, align, constant, 2), "", "cpu.any_affinegrid__ref.20"))
              << ShapeToString(size) << " align=" << align << " constant=" << constant;
        }
      }
    }
  }
}

TEST(CpuAffineGrid, ThetaNotMatchingTheSizeIsAnErrorNamingTheNode) {
  std::mt19937 rng(5002);
  const OpTest t = AgTest(RandomTensor(DataType::kFloat, {2, 3, 4}, rng), {2, 3, 5, 7}, 0, false, 1);
  try {
    RunOn(t, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected a 2-D size with a 3-D theta to fail";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'node'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("theta"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
