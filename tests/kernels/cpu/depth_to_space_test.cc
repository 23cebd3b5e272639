// The cpu kernels of DepthToSpace (DCR and CRD modes, opsets 1, 11, 13) and SpaceToDepth (strided_copy.h) against
// ref, bit for bit: random shapes and block sizes (1 to 4, channel counts that are no multiple of 16), element sizes
// of 1, 2, 4 and 8 bytes, threads 1 and 2, copies large enough to split over threads, empty tensors, and bad
// shapes, whose errors name the node.
#include <gtest/gtest.h>

#include <string>

#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

// `t` on cpu alone (its kernel `kernel` proven to run) gives ref's output bit for bit.
::testing::AssertionResult SameAsRef(const OpTest& t, const std::string& kernel) {
  const std::string bytes = OneNodeModel(t);
  const auto want = SessionFor(bytes, {"ref"}, true, 1)->Run(Feeds(t));
  auto session = SessionFor(bytes, {"cpu"}, true, t.threads);
  const std::string& ran = session->placement().nodes.at(0).kernel;
  if (ran != kernel) return ::testing::AssertionFailure() << "ran " << ran << ", want " << kernel;
  const auto got = session->Run(Feeds(t));
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "output count differs";
  return SameBits(got[0].second, want[0].second);
}

OpTest BlockTest(const std::string& op, const Tensor& x, int64_t blocksize, int64_t opset, int threads) {
  return OpTest{.op = op,
                .opset = opset,
                .inputs = {In("x", x)},
                .attributes = {Int("blocksize", blocksize)},
                .threads = threads};
}

constexpr DataType kTypes[] = {DataType::kFloat, DataType::kInt8, DataType::kFloat16, DataType::kInt64,
                               DataType::kBool};

TEST(CpuDepthToSpace, RandomShapesModesAndTypesMatchRefExactly) {
  std::mt19937 rng(701);
  for (int i = 0; i < 60; ++i) {
    const int64_t b = Pick(rng, 1, 4);
    const DataType dt = kTypes[i % 5];
    const Tensor x = RandomTensor(dt, {Pick(rng, 1, 3), b * b * Pick(rng, 1, 7), Pick(rng, 1, 13), Pick(rng, 1, 37)},
                                  rng, -100, 100);
    OpTest t = BlockTest("DepthToSpace", x, b, 13, 1 + (i / 5) % 2);
    const int mode = i % 3;  // 0: default (DCR), 1: DCR, 2: CRD
    if (mode) t.attributes.push_back(Str("mode", mode == 1 ? "DCR" : "CRD"));
    if (mode == 2 && i % 2) t.opset = 11;
    EXPECT_TRUE(SameAsRef(t, "cpu.any_depth_to_space__strided.1")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuSpaceToDepth, RandomShapesAndTypesMatchRefExactly) {
  std::mt19937 rng(702);
  for (int i = 0; i < 60; ++i) {
    const int64_t b = Pick(rng, 1, 4);
    const DataType dt = kTypes[i % 5];
    const Tensor x = RandomTensor(dt, {Pick(rng, 1, 3), Pick(rng, 1, 19), b * Pick(rng, 1, 9), b * Pick(rng, 1, 13)},
                                  rng, -100, 100);
    const OpTest t = BlockTest("SpaceToDepth", x, b, i % 2 ? 13 : 1, 1 + (i / 5) % 2);
    EXPECT_TRUE(SameAsRef(t, "cpu.any_space_to_depth__strided.1")) << "case " << i << ": " << DescribeCase(t);
  }
}

// Copies above the threading threshold (ESPCN / YOLO-like shapes), opset 1 (DCR only), and empty tensors.
TEST(CpuDepthToSpace, LargeOpsetOneAndEmptyTensorsMatchRefExactly) {
  std::mt19937 rng(703);
  for (int threads : {1, 2}) {
    for (const char* mode : {"DCR", "CRD"}) {
      OpTest t = BlockTest("DepthToSpace", RandomTensor(DataType::kFloat, {1, 36, 67, 45}, rng), 3, 13, threads);
      t.attributes.push_back(Str("mode", mode));
      EXPECT_TRUE(SameAsRef(t, "cpu.any_depth_to_space__strided.1")) << mode << " threads " << threads;
    }
    EXPECT_TRUE(SameAsRef(BlockTest("SpaceToDepth", RandomTensor(DataType::kFloat, {2, 12, 64, 66}, rng), 2, 13,
                                    threads),
                          "cpu.any_space_to_depth__strided.1"))
        << "threads " << threads;
  }
  EXPECT_TRUE(SameAsRef(BlockTest("DepthToSpace", RandomTensor(DataType::kFloat, {2, 8, 3, 5}, rng), 2, 1, 1),
                        "cpu.any_depth_to_space__strided.1"));
  EXPECT_TRUE(SameAsRef(BlockTest("DepthToSpace", RandomTensor(DataType::kFloat, {0, 8, 3, 5}, rng), 2, 13, 2),
                        "cpu.any_depth_to_space__strided.1"));
  EXPECT_TRUE(SameAsRef(BlockTest("SpaceToDepth", RandomTensor(DataType::kFloat, {2, 3, 0, 4}, rng), 2, 13, 2),
                        "cpu.any_space_to_depth__strided.1"));
}

// Shapes known only at run time: cpu and ref refuse the same shapes, naming the node.
TEST(CpuDepthToSpace, BadShapesNameTheNode) {
  std::mt19937 rng(704);
  const struct {
    const char* op;
    Shape shape;
    const char* message;
  } cases[] = {
      {"DepthToSpace", {1, 6, 2, 2}, "input must be 4-D with channels divisible by blocksize^2 = 4"},
      // Wrong ranks: shape inference refuses them before either kernel's Prepare (InvalidModelError).
      {"DepthToSpace", {4, 2, 2}, "must have rank 4"},
      {"SpaceToDepth", {1, 3, 5, 4}, "input must be 4-D with height and width divisible by blocksize 2"},
      {"SpaceToDepth", {1, 3, 4, 4, 4}, "must have rank 4"},
  };
  for (const auto& c : cases) {
    const OpTest t = BlockTest(c.op, RandomTensor(DataType::kFloat, c.shape, rng), 2, 13, 1);
    const std::string bytes = DynamicOneNodeModel(t);
    for (const char* backend : {"cpu", "ref"}) {
      try {
        SessionFor(bytes, {backend}, true, 1)->Run(Feeds(t));
        ADD_FAILURE() << backend << " " << c.op << ": expected an error for " << ShapeToString(c.shape);
      } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("node 'node' (" + std::string(c.op) + ")"), std::string::npos) << backend << ": " << what;
        EXPECT_NE(what.find(c.message), std::string::npos) << backend << ": " << what;
      }
    }
  }
}

}  // namespace
}  // namespace ferry::testing
