// The cpu Mod kernels against ref, bit for bit: fmod 0 and 1, every float type (float32, float64, float16,
// bfloat16: edge values, zero divisors) and every integer type (int8..int64, uint8..uint64: zero and -1 divisors,
// the extremes, both signs) on every broadcast path (binary_elementwise_map_test_util.h), threads 1 and 2, opsets
// 10 and 13; known results for both sign rules, signed and unsigned; a shape mismatch named after the node.
#include <climits>

#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kFloat, "f32"},   {DataType::kInt32, "i32"},  {DataType::kInt64, "i64"},
                        {DataType::kDouble, "f64"},  {DataType::kFloat16, "f16"}, {DataType::kBFloat16, "bf16"},
                        {DataType::kInt8, "i8"},     {DataType::kInt16, "i16"},  {DataType::kUint8, "u8"},
                        {DataType::kUint16, "u16"},  {DataType::kUint32, "u32"}, {DataType::kUint64, "u64"}};

TEST(CpuMod, MatchesRef) {
  std::mt19937 rng(31);
  for (const Typed& type : kTypes) {
    for (int fmod : {0, 1}) {
      for (const MapShapes& s : MapShapeCases(type.dt == DataType::kFloat)) {
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

TEST(CpuMod, UnsignedHasNoSignRule) {
  // 200 % 255 = 200 for uint8 (the divisor is not -1), 7 % 0 = 0.
  for (int fmod : {0, 1}) {
    OpTest t{.op = "Mod",
             .inputs = {In("a", Tensor::FromVector<uint8_t>(DataType::kUint8, {3}, {200, 7, 255})),
                        In("b", Tensor::FromVector<uint8_t>(DataType::kUint8, {3}, {255, 0, 16}))},
             .attributes = {Int("fmod", fmod)},
             .rtol = 0,
             .atol = 0};
    EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.u8_mod.10"));
    const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    const uint8_t want[] = {200, 0, 15};
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[0].second.data<uint8_t>()[i], want[i]) << fmod << " " << i;
  }
}

}  // namespace
}  // namespace ferry::testing
