// The cpu unary predicates against ref: IsNaN, IsInf (every detect_negative / detect_positive combination) and Not,
// every ISA variant (chosen with --isa and proven by the placed kernel's name), sizes that leave vector tails,
// empty tensors, threads 1 and 2. Inputs carry NaNs (both signs, several payloads), ±inf, ±0, denormals and the
// largest finite floats. Outputs are bool: compared exactly.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

// Random floats, a third of them replaced by edge values.
Tensor EdgeFloats(const Shape& shape, std::mt19937& rng) {
  Tensor t = RandomTensor(DataType::kFloat, shape, rng, -10, 10, true);
  const uint32_t bits[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7f800000u,
                           0xff800000u, 0x00000000u, 0x80000000u, 0x00000001u, 0x7f7fffffu, 0xff7fffffu};
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i) {
    if (EwPick(rng, 0, 2) == 0) std::memcpy(&p[i], &bits[EwPick(rng, 0, 11)], sizeof(uint32_t));
  }
  return t;
}

Tensor RandomBools(const Shape& shape, std::mt19937& rng) {
  Tensor t(DataType::kBool, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<bool>()[i] = EwPick(rng, 0, 1) != 0;
  return t;
}

const int64_t kSizes[] = {0, 1, 7, 15, 16, 17, 31, 33, 63, 64, 65, 1023};

void CheckVariant(const EwVariant& v, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int threads : {1, 2}) {
    for (int64_t n : kSizes) {
      const Shape shape = {2, n};
      SCOPED_TRACE(ShapeToString(shape) + ", threads " + std::to_string(threads));
      for (int64_t opset : {9, 13, 20}) {
        OpTest t{.op = "IsNaN", .opset = opset, .inputs = {In("x", EdgeFloats(shape, rng))}, .threads = threads};
        EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_isnan__") + v.impl + ".9"));
      }
      for (int neg = -1; neg <= 1; ++neg) {
        for (int pos = -1; pos <= 1; ++pos) {  // -1: the attribute omitted (default 1)
          OpTest t{.op = "IsInf", .opset = pos == 0 ? 10 : 20, .inputs = {In("x", EdgeFloats(shape, rng))},
                   .threads = threads};
          if (neg >= 0) t.attributes.push_back(Int("detect_negative", neg));
          if (pos >= 0) t.attributes.push_back(Int("detect_positive", pos));
          SCOPED_TRACE("IsInf neg " + std::to_string(neg) + " pos " + std::to_string(pos));
          EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_isinf__") + v.impl + ".10"));
        }
      }
      OpTest t{.op = "Not", .opset = 17, .inputs = {In("x", RandomBools(shape, rng))}, .threads = threads};
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.bool_not__") + v.impl + ".1"));
    }
  }
  // Over the threading threshold.
  OpTest big{.op = "IsNaN", .opset = 13, .inputs = {In("x", EdgeFloats({3, 70001}, rng))}, .threads = 2};
  EXPECT_TRUE(MatchesRefWithKernel(big, v.isa, std::string("cpu.f32_isnan__") + v.impl + ".9"));
  OpTest big_not{.op = "Not", .opset = 1, .inputs = {In("x", RandomBools({3, 70001}, rng))}, .threads = 2};
  EXPECT_TRUE(MatchesRefWithKernel(big_not, v.isa, std::string("cpu.bool_not__") + v.impl + ".1"));
}

TEST(CpuUnaryPredicates, Avx512MatchesRef) {
  if (!EwHostHas(kEwAvx512)) GTEST_SKIP() << "this CPU lacks avx512f";
  CheckVariant(kEwAvx512, 1);
}

TEST(CpuUnaryPredicates, Avx2MatchesRef) {
  if (!EwHostHas(kEwAvx2)) GTEST_SKIP() << "this CPU lacks avx2,fma";
  CheckVariant(kEwAvx2, 2);
}

TEST(CpuUnaryPredicates, ScalarMatchesRef) { CheckVariant(kEwScalar, 3); }

TEST(CpuUnaryPredicates, KnownValues) {
  // Independent of ref: the expected bools written out.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {6}, {nan, -nan, inf, -inf, 0.0f, -3.0f});
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    SCOPED_TRACE(v.impl);
    auto run = [&](const std::string& op, std::vector<onnx::AttributeProto> attrs) {
      OpTest t{.op = op, .opset = 20, .inputs = {In("x", x)}, .attributes = std::move(attrs)};
      const Tensor y = EwSession(t, {"cpu"}, true, 1, v.isa)->Run(Feeds(t))[0].second;
      std::string s;
      for (int64_t i = 0; i < y.size(); ++i) s += y.data<bool>()[i] ? '1' : '0';
      return s;
    };
    EXPECT_EQ(run("IsNaN", {}), "110000");
    EXPECT_EQ(run("IsInf", {}), "001100");
    EXPECT_EQ(run("IsInf", {Int("detect_negative", 0)}), "001000");
    EXPECT_EQ(run("IsInf", {Int("detect_positive", 0)}), "000100");
    EXPECT_EQ(run("IsInf", {Int("detect_negative", 0), Int("detect_positive", 0)}), "000000");
  }
}

TEST(CpuUnaryPredicates, RefusesOtherTypes) {
  std::mt19937 rng(4);
  ExpectRefusedAndFallsBack(
      {.op = "IsNaN", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}}, "float64");
  ExpectRefusedAndFallsBack(
      {.op = "IsInf", .opset = 20, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}}, "float64");
}

TEST(CpuUnaryPredicates, HalfInputsRunOnCpuInFloat32) {
  // No half kernel: the compute_in_float32 pass feeds the float32 kernel a Cast of the input (exact for IsNaN/IsInf).
  std::mt19937 rng(5);
  for (DataType dt : {DataType::kFloat16, DataType::kBFloat16}) {
    for (const char* op : {"IsNaN", "IsInf"}) {
      EXPECT_TRUE(MatchesRef({.op = op, .opset = 20, .inputs = {In("x", RandomTensor(dt, {37}, rng, -2, 2, true))}},
                             "cpu"))
          << op << " " << DataTypeName(dt);
    }
  }
}

}  // namespace
}  // namespace ferry::testing
