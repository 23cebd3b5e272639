// The cross-backend harness itself: it passes ref against ref, and it can fail (a harness that cannot fail
// proves nothing).
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

TEST(OpHarness, RefMatchesItselfWithEdgeValuesAndConstants) {
  std::mt19937 rng(1);
  OpTest t{.op = "Add",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 3}, rng, -1, 1, true)),
                      Const("b", RandomTensor(DataType::kFloat, {3}, rng))}};
  EXPECT_TRUE(MatchesRef(t, "ref"));
}

TEST(OpHarness, TensorsCloseDetectsEveryKindOfMismatch) {
  auto f = [](std::vector<float> v) { return Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(v.size())}, v); };
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(TensorsClose(f({1, nan, inf}), f({1, nan, inf}), 0, 0));
  EXPECT_TRUE(TensorsClose(f({1.00001f}), f({1}), 1e-4, 0));
  EXPECT_FALSE(TensorsClose(f({1.1f}), f({1}), 1e-4, 0));
  EXPECT_FALSE(TensorsClose(f({0}), f({nan}), 1, 1));
  EXPECT_FALSE(TensorsClose(f({nan}), f({0}), 1, 1));
  EXPECT_FALSE(TensorsClose(f({inf}), f({-inf}), 1, 1));
  EXPECT_FALSE(TensorsClose(f({1, 2}), f({1}), 1, 1));
  EXPECT_FALSE(TensorsClose(Tensor::FromVector<double>(DataType::kDouble, {1}, {1.0}), f({1}), 1, 1));
}

TEST(OpHarness, AnUnplaceableOpFailsTheCheck) {
  std::mt19937 rng(2);
  OpTest t{.op = "Relu", .inputs = {In("x", RandomTensor(DataType::kFloat, {4}, rng))}};
  EXPECT_FALSE(MatchesRef(t, "no_such_backend"));
}

}  // namespace
}  // namespace ferry::testing
