// The cpu Mod kernels against ref, bit for bit: fmod 0 and 1, float32 (edge values, zero divisors), int32 and int64
// (zero and -1 divisors, the extremes, both signs) on every broadcast path (binary_elementwise_map_test_util.h),
// threads 1 and 2, opsets 10 and 13; known results for both sign rules; a shape mismatch named after the node;
// types cpu leaves to ref.
#include <climits>

#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kFloat, "f32"}, {DataType::kInt32, "i32"}, {DataType::kInt64, "i64"}};

TEST(CpuMod, MatchesRef) {
  std::mt19937 rng(31);
  for (const Typed& type : kTypes) {
    for (int fmod : {0, 1}) {
      for (const MapShapes& s : MapShapeCases()) {
        for (int threads : {1, 2}) {
          Tensor b = MapRandom(type.dt, s.b, rng);
          OpTest t{.op = "Mod",
                   .opset = EwPick(rng, 0, 1) ? 13 : 10,
                   .inputs = {In("a", MapRandom(type.dt, s.a, rng)), EwPick(rng, 0, 2) ? In("b", b) : Const("b", b)},
                   .attributes = {Int("fmod", fmod)},
                   .rtol = 0,
                   .atol = 0,
                   .threads = threads};
          EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu." + std::string(type.tag) + "_mod.10"))
              << DataTypeName(type.dt) << " fmod " << fmod << " " << s.what << ", threads " << threads;
        }
      }
    }
  }
}

TEST(CpuMod, SignRules) {
  const std::vector<int32_t> a = {7, -7, 7, -7, 5, INT_MIN, INT_MIN, 0};
  const std::vector<int32_t> b = {3, 3, -3, -3, 0, -1, 7, 5};
  const std::vector<int32_t> python = {1, 2, -2, -1, 0, 0, 5, 0};  // the divisor's sign
  const std::vector<int32_t> c_fmod = {1, -1, 1, -1, 0, 0, -2, 0};  // the dividend's sign
  for (int fmod : {0, 1}) {
    OpTest t{.op = "Mod",
             .inputs = {In("a", Tensor::FromVector<int32_t>(DataType::kInt32, {8}, a)),
                        In("b", Tensor::FromVector<int32_t>(DataType::kInt32, {8}, b))},
             .attributes = {Int("fmod", fmod)},
             .rtol = 0,
             .atol = 0};
    EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.i32_mod.10"));
    const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    const std::vector<int32_t>& want = fmod ? c_fmod : python;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[0].second.data<int32_t>()[i], want[i]) << fmod << " " << i;
  }
}

TEST(CpuMod, MismatchedShapesNameTheNode) {
  std::mt19937 rng(32);
  ExpectBroadcastErrorNamesNode("Mod", 13,
                                {MapRandom(DataType::kInt64, {2, 3}, rng), MapRandom(DataType::kInt64, {2}, rng)},
                                "[2,3] and [2] cannot be broadcast");
}

TEST(CpuMod, OtherTypesFallBackToRef) {
  std::mt19937 rng(33);
  OpTest f64{.op = "Mod",
             .inputs = {In("a", RandomTensor(DataType::kDouble, {4}, rng)),
                        In("b", RandomTensor(DataType::kDouble, {4}, rng))},
             .attributes = {Int("fmod", 1)}};
  ExpectRefusedAndFallsBack(f64, "float64");
}

}  // namespace
}  // namespace ferry::testing
