// The cpu Equal/Less/Greater/LessOrEqual/GreaterOrEqual kernels against ref, bit for bit (bool outputs): float32
// and float64 with edge values (NaN compares false, ±0 equal, ±inf), every integer type (int8..int64,
// uint8..uint64) with its extremes, bool and string for Equal, on every broadcast path
// (binary_elementwise_map_test_util.h), threads 1 and 2; a shape mismatch named after the node; the legacy opsets
// left to ref (float16/bfloat16 reach the float32 kernels through the ComputeInFloat32 pass's casts).
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct CompareOp {
  const char* op;
  const char* lower;
  int since;
};
const CompareOp kOps[] = {{"Equal", "equal", 7},
                          {"Less", "less", 7},
                          {"Greater", "greater", 7},
                          {"LessOrEqual", "less_or_equal", 12},
                          {"GreaterOrEqual", "greater_or_equal", 12}};

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kFloat, "f32"}, {DataType::kInt32, "i32"},  {DataType::kInt64, "i64"},
                        {DataType::kDouble, "f64"}, {DataType::kInt8, "i8"},    {DataType::kInt16, "i16"},
                        {DataType::kUint8, "u8"},   {DataType::kUint16, "u16"}, {DataType::kUint32, "u32"},
                        {DataType::kUint64, "u64"}};

void CheckAll(const CompareOp& op, const Typed& type, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::string stem = "cpu." + std::string(type.tag) + "_" + op.lower, suffix = "." + std::to_string(op.since);
  for (const MapShapes& s : MapShapeCases()) {
    for (int threads : {1, 2}) {
      // Small integer ranges so that equal values are common.
      Tensor a = MapRandom(type.dt, s.a, rng, -3, 3), b = MapRandom(type.dt, s.b, rng, -3, 3);
      OpTest t{.op = op.op,
               .opset = EwPick(rng, 0, 1) ? 13 : 17,  // every type here is allowed from 13
               .inputs = {In("a", a), EwPick(rng, 0, 2) ? In("b", b) : Const("b", b)},
               .rtol = 0,
               .atol = 0,
               .threads = threads};
      EXPECT_TRUE(MatchesRefOnEveryIsa(t, stem, suffix))
          << op.op << " " << s.what << ": " << ShapeToString(s.a) << " and " << ShapeToString(s.b) << ", threads "
          << threads;
    }
  }
}

TEST(CpuCompare, Float32MatchesRef) {
  for (const CompareOp& op : kOps) CheckAll(op, kTypes[0], 11);
}
TEST(CpuCompare, Int32MatchesRef) {
  for (const CompareOp& op : kOps) CheckAll(op, kTypes[1], 12);
}
TEST(CpuCompare, Int64MatchesRef) {
  for (const CompareOp& op : kOps) CheckAll(op, kTypes[2], 13);
}

TEST(CpuCompare, Float64AndNarrowAndUnsignedIntegersMatchRef) {
  for (size_t k = 3; k < std::size(kTypes); ++k) {
    for (const CompareOp& op : kOps) CheckAll(op, kTypes[k], static_cast<uint32_t>(20 + k));
  }
}

TEST(CpuCompare, UnsignedExtremesCompareAsUnsigned) {
  // 0 < UINT64_MAX (a signed compare would say otherwise).
  OpTest t{.op = "Less",
           .opset = 13,
           .inputs = {In("a", Tensor::FromVector<uint64_t>(DataType::kUint64, {3}, {0, UINT64_MAX, 5})),
                      In("b", Tensor::FromVector<uint64_t>(DataType::kUint64, {3}, {UINT64_MAX, 0, 5}))},
           .rtol = 0,
           .atol = 0};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const bool want[] = {true, false, false};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out[0].second.data<bool>()[i], want[i]) << i;
  EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.u64_less", ".7"));
}

TEST(CpuCompare, EqualOnStringsMatchesRef) {
  std::mt19937 rng(17);
  const char* const words[] = {"", "a", "b", "ab", "a b", "longer than the small-string buffer of std::string"};
  auto strings = [&](const Shape& shape) {
    Tensor t(DataType::kString, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.strings()[i] = words[EwPick(rng, 0, 5)];
    return t;
  };
  for (const MapShapes& s : MapShapeCases(false)) {
    OpTest t{.op = "Equal",
             .opset = 19,
             .inputs = {In("a", strings(s.a)), EwPick(rng, 0, 1) ? In("b", strings(s.b)) : Const("b", strings(s.b))},
             .rtol = 0,
             .atol = 0,
             .threads = static_cast<int>(EwPick(rng, 1, 2))};
    EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.string_equal__scalar.19")) << s.what;
  }
}

TEST(CpuCompare, EqualOnBoolMatchesRef) {
  std::mt19937 rng(14);
  for (const MapShapes& s : MapShapeCases()) {
    for (int threads : {1, 2}) {
      OpTest t{.op = "Equal",
               .opset = 11,
               .inputs = {In("a", MapRandom(DataType::kBool, s.a, rng)), In("b", MapRandom(DataType::kBool, s.b, rng))},
               .rtol = 0,
               .atol = 0,
               .threads = threads};
      EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.bool_equal", ".7")) << s.what;
    }
  }
}

TEST(CpuCompare, NaNAndSignedZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> a = {nan, 1, nan, 0.0f, -0.0f, inf, -inf, 2};
  const std::vector<float> b = {nan, nan, 1, -0.0f, 0.0f, inf, inf, 2};
  for (const CompareOp& op : kOps) {
    OpTest t{.op = op.op,
             .inputs = {In("a", Tensor::FromVector<float>(DataType::kFloat, {8}, a)),
                        In("b", Tensor::FromVector<float>(DataType::kFloat, {8}, b))},
             .rtol = 0,
             .atol = 0};
    EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_" + std::string(op.lower), "." + std::to_string(op.since)));
  }
  // Equal: NaN never equals, ±0 do.
  OpTest eq{.op = "Equal",
            .inputs = {In("a", Tensor::FromVector<float>(DataType::kFloat, {8}, a)),
                       In("b", Tensor::FromVector<float>(DataType::kFloat, {8}, b))}};
  const auto out = EwSession(eq, {"cpu"}, true, 1)->Run(Feeds(eq));
  const bool want[] = {false, false, false, true, true, true, false, true};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[0].second.data<bool>()[i], want[i]) << i;
}

TEST(CpuCompare, MismatchedShapesNameTheNode) {
  std::mt19937 rng(15);
  ExpectBroadcastErrorNamesNode("Less", 13,
                                {MapRandom(DataType::kFloat, {2, 3}, rng), MapRandom(DataType::kFloat, {4}, rng)},
                                "[2,3] and [4] cannot be broadcast");
  ExpectBroadcastErrorNamesNode("Equal", 13,
                                {MapRandom(DataType::kBool, {5}, rng), MapRandom(DataType::kBool, {2, 3}, rng)},
                                "[5] and [2,3] cannot be broadcast");
}

TEST(CpuCompare, LegacyOpsetsFallBackToRef) {
  std::mt19937 rng(16);
  OpTest legacy{.op = "Less",
                .opset = 6,
                .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 3}, rng)),
                           In("b", RandomTensor(DataType::kFloat, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(legacy, "not opset 6");
}

}  // namespace
}  // namespace ferry::testing
