// The cpu Add/Sub/Mul/Div kernels against ref: every ISA variant (chosen with --isa and proven by the placed kernel's
// name), every path (same shape, scalar operand on either side, channel bias, trailing-dims broadcast, the general
// odometer, tiles of short rows with one input's row repeated, empty outputs), sizes that leave SIMD tails, edge
// values, threads 1 and 2; every integer type (int8..int64, uint8..uint64) and float64 on each ISA variant, float16
// and bfloat16 (through float32). Results must be bit-identical to ref's (one IEEE operation per element, rounded
// once for the half types), so the tolerance is zero.
#include <climits>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

const char* const kOps[] = {"Add", "Sub", "Mul", "Div"};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string KernelName(const std::string& dtype, const std::string& op, const std::string& impl) {
  return "cpu." + dtype + "_" + Lower(op) + "__" + impl + ".7";
}

struct ShapePair {
  Shape a, b;
  std::string path;
};

// SIMD-tail-leaving sizes for the innermost dims.
int64_t TailSize(std::mt19937& rng) {
  static const int64_t kSizes[] = {1, 2, 7, 8, 15, 16, 17, 33, 1023};
  return kSizes[EwPick(rng, 0, 8)];
}

// Random input shapes for path `path` (0-6).
ShapePair RandomShapes(std::mt19937& rng, int path) {
  switch (path) {
    case 0: {  // same shape
      Shape s(static_cast<size_t>(EwPick(rng, 0, 4)));
      for (auto& d : s) d = EwPick(rng, 1, 4);
      if (!s.empty()) s.back() = TailSize(rng);
      return {s, s, "same shape"};
    }
    case 1: {  // one side has one element (a scalar, [1] or [1,1])
      Shape s = {EwPick(rng, 1, 3), TailSize(rng)};
      Shape one(static_cast<size_t>(EwPick(rng, 0, 2)), 1);
      if (EwPick(rng, 0, 1)) return {s, one, "vector-scalar"};
      return {one, s, "scalar-vector"};
    }
    case 2: {  // channel bias [N,C,H,W] + [C,1,1] (or [1,C,1,1]), either side
      const int64_t c = EwPick(rng, 1, 5);
      Shape x = {EwPick(rng, 1, 2), c, EwPick(rng, 1, 5), TailSize(rng)};
      Shape bias = EwPick(rng, 0, 1) ? Shape{c, 1, 1} : Shape{1, c, 1, 1};
      if (EwPick(rng, 0, 1)) return {x, bias, "channel bias"};
      return {bias, x, "channel bias (reversed)"};
    }
    case 3: {  // [B,S,D] + [D], either side
      const int64_t d = TailSize(rng);
      Shape x = {EwPick(rng, 1, 3), EwPick(rng, 1, 4), d};
      if (EwPick(rng, 0, 1)) return {x, {d}, "trailing dims"};
      return {{d}, x, "trailing dims (reversed)"};
    }
    case 4:
    case 5: {  // general: each input keeps or drops (to 1) each dim, and may lack leading dims
      Shape out(static_cast<size_t>(EwPick(rng, 1, 4)));
      for (auto& d : out) d = EwPick(rng, 2, 4);
      out.back() = TailSize(rng);
      auto side = [&] {
        Shape s = out;
        for (auto& d : s) {
          if (EwPick(rng, 0, 2) == 0) d = 1;
        }
        const int64_t drop = EwPick(rng, 0, static_cast<int64_t>(s.size()) - 1);
        bool all_one = true;
        for (int64_t i = 0; i < drop; ++i) all_one = all_one && s[static_cast<size_t>(i)] == 1;
        if (all_one) s.erase(s.begin(), s.begin() + drop);
        return s;
      };
      return {side(), side(), "general"};
    }
    default: {  // empty output
      Shape a = {EwPick(rng, 0, 2), 0, TailSize(rng)};
      Shape b = EwPick(rng, 0, 1) ? Shape{a.back()} : Shape{1, 1, 1};
      return {a, b, "empty"};
    }
  }
}

// Float inputs with edge values; Div's divisors include zeros, ±inf, NaN and denormals from the edges.
OpTest RandomFloatTest(std::mt19937& rng, const std::string& op, const ShapePair& s, int threads) {
  OpTest t{.op = op,
           .opset = EwPick(rng, 0, 1) ? 14 : 7,
           .inputs = {In("a", RandomTensor(DataType::kFloat, s.a, rng, -10, 10, true)),
                      In("b", RandomTensor(DataType::kFloat, s.b, rng, -10, 10, true))},
           .rtol = 0,
           .atol = 0,
           .threads = threads};
  if (EwPick(rng, 0, 2) == 0) t.inputs[1].constant = true;
  return t;
}

void CheckRandomFloat(const EwVariant& v, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const char* op : kOps) {
    for (int i = 0; i < 42; ++i) {
      const ShapePair s = RandomShapes(rng, i % 7);
      const OpTest t = RandomFloatTest(rng, op, s, 1 + i % 2);
      SCOPED_TRACE(std::string(op) + " " + s.path + ": " + ShapeToString(s.a) + " and " + ShapeToString(s.b) +
                   ", threads " + std::to_string(t.threads));
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelName("f32", op, v.impl)));
    }
  }
}

// Outputs over the 64K-element threading threshold, on every path, with 2 threads.
void CheckLargeFloat(const EwVariant& v) {
  std::mt19937 rng(7);
  const ShapePair cases[] = {
      {{300, 257}, {300, 257}, "same shape"},
      {{70001}, {}, "vector-scalar"},
      {{1}, {3, 23457}, "scalar-vector"},
      {{2, 32, 33, 33}, {32, 1, 1}, "channel bias"},
      {{4, 129, 129}, {129}, "trailing dims"},
      {{16, 1, 1030}, {1, 9, 1}, "general"},
      {{700, 1, 3}, {1, 50, 3}, "general, short rows"},
      {{1, 9, 56, 56, 16}, {1, 9, 1, 1, 16}, "tiles: blocked times a per-channel scale"},
      {{2, 5, 1, 1, 8}, {2, 5, 33, 35, 8}, "tiles: the scale first, block 8"},
      {{2, 40000, 5}, {5}, "tiles: one row down 80000, split mid-tile"},
  };
  for (const char* op : kOps) {
    for (const ShapePair& s : cases) {
      const OpTest t = RandomFloatTest(rng, op, s, 2);
      SCOPED_TRACE(std::string(op) + " " + s.path + ": " + ShapeToString(s.a) + " and " + ShapeToString(s.b));
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelName("f32", op, v.impl)));
    }
  }
}

TEST(CpuBinaryElementwise, Avx512MatchesRef) {
  if (!EwHostHas(kEwAvx512)) GTEST_SKIP() << "this CPU lacks avx512f";
  CheckRandomFloat(kEwAvx512, 1);
  CheckLargeFloat(kEwAvx512);
}

TEST(CpuBinaryElementwise, Avx2MatchesRef) {
  if (!EwHostHas(kEwAvx2)) GTEST_SKIP() << "this CPU lacks avx2,fma";
  CheckRandomFloat(kEwAvx2, 2);
  CheckLargeFloat(kEwAvx2);
}

TEST(CpuBinaryElementwise, ScalarMatchesRef) {
  CheckRandomFloat(kEwScalar, 3);
  CheckLargeFloat(kEwScalar);
}

TEST(CpuBinaryElementwise, BestVariantIsTheDefault) {
  const EwVariant best = EwHostHas(kEwAvx512) ? kEwAvx512 : EwHostHas(kEwAvx2) ? kEwAvx2 : kEwScalar;
  std::mt19937 rng(4);
  OpTest t{.op = "Mul",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {3, 5}, rng)),
                      In("b", RandomTensor(DataType::kFloat, {5}, rng))},
           .rtol = 0,
           .atol = 0};
  EXPECT_TRUE(MatchesRefWithKernel(t, "", KernelName("f32", "Mul", best.impl)));
}

// Integers: values around 0 (Div by 0 and by -1), and the extremes (wrapping, INT_MIN / -1).
template <typename T>
Tensor RandomInts(DataType dt, const Shape& shape, std::mt19937& rng) {
  const T pool[] = {0, 1, static_cast<T>(-1), 2, static_cast<T>(-2), 3, static_cast<T>(-7),
                    std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                    static_cast<T>(std::numeric_limits<T>::min() + 1)};
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    t.data<T>()[i] = EwPick(rng, 0, 2) ? static_cast<T>(EwPick(rng, -1000, 1000)) : pool[EwPick(rng, 0, 9)];
  }
  return t;
}

// The ISA variants this CPU has, best first.
std::vector<EwVariant> HostVariants() {
  std::vector<EwVariant> v;
  for (const EwVariant& e : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (EwHostHas(e)) v.push_back(e);
  }
  return v;
}

// One type against ref on every path: on every ISA variant of the plain loops (integers, float64), or with
// !every_isa on the scalar one only (the half types have no other).
void CheckTyped(DataType dt, const std::string& tag, uint32_t seed, bool every_isa,
                Tensor (*random)(DataType, const Shape&, std::mt19937&)) {
  std::mt19937 rng(seed);
  const std::vector<EwVariant> variants = every_isa ? HostVariants() : std::vector<EwVariant>{kEwScalar};
  for (const EwVariant& v : variants) {
    for (const char* op : kOps) {
      for (int i = 0; i < 14; ++i) {
        const ShapePair s = RandomShapes(rng, i % 7);
        OpTest t{.op = op,
                 .opset = EwPick(rng, 0, 1) ? 14 : 13,
                 .inputs = {In("a", random(dt, s.a, rng)), In("b", random(dt, s.b, rng))},
                 .rtol = 0,
                 .atol = 0,
                 .threads = 1 + i % 2};
        SCOPED_TRACE(std::string(op) + " " + s.path + ": " + ShapeToString(s.a) + " and " + ShapeToString(s.b));
        EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelName(tag, op, v.impl)));
      }
    }
  }
}

template <typename T>
Tensor Ints(DataType dt, const Shape& shape, std::mt19937& rng) {
  return RandomInts<T>(dt, shape, rng);
}
Tensor Floats(DataType dt, const Shape& shape, std::mt19937& rng) {
  return RandomTensor(dt, shape, rng, -10, 10, true);
}

TEST(CpuBinaryElementwise, Int8MatchesRef) { CheckTyped(DataType::kInt8, "i8", 21, true, &Ints<int8_t>); }
TEST(CpuBinaryElementwise, Int16MatchesRef) { CheckTyped(DataType::kInt16, "i16", 22, true, &Ints<int16_t>); }
TEST(CpuBinaryElementwise, Int32MatchesRef) { CheckTyped(DataType::kInt32, "i32", 5, true, &Ints<int32_t>); }
TEST(CpuBinaryElementwise, Int64MatchesRef) { CheckTyped(DataType::kInt64, "i64", 6, true, &Ints<int64_t>); }
TEST(CpuBinaryElementwise, Uint8MatchesRef) { CheckTyped(DataType::kUint8, "u8", 23, true, &Ints<uint8_t>); }
TEST(CpuBinaryElementwise, Uint16MatchesRef) { CheckTyped(DataType::kUint16, "u16", 24, true, &Ints<uint16_t>); }
TEST(CpuBinaryElementwise, Uint32MatchesRef) { CheckTyped(DataType::kUint32, "u32", 25, true, &Ints<uint32_t>); }
TEST(CpuBinaryElementwise, Uint64MatchesRef) { CheckTyped(DataType::kUint64, "u64", 26, true, &Ints<uint64_t>); }
TEST(CpuBinaryElementwise, Float64MatchesRef) { CheckTyped(DataType::kDouble, "f64", 27, true, &Floats); }
TEST(CpuBinaryElementwise, Float16MatchesRef) { CheckTyped(DataType::kFloat16, "f16", 28, false, &Floats); }
TEST(CpuBinaryElementwise, BFloat16MatchesRef) { CheckTyped(DataType::kBFloat16, "bf16", 29, false, &Floats); }

TEST(CpuBinaryElementwise, UnsignedDivisionAndWrapping) {
  // uint16 products wrap in 16 bits (no promotion to an overflowing int); unsigned division by the type's maximum
  // is 0 or 1 (no signed -1 rule); x / 0 = 0.
  const std::vector<uint16_t> a = {65535, 65535, 40000, 7, 65535, 3};
  const std::vector<uint16_t> b = {65535, 2, 3, 65535, 65535, 0};
  for (const char* op : {"Mul", "Div"}) {
    OpTest t{.op = op,
             .opset = 14,
             .inputs = {In("a", Tensor::FromVector<uint16_t>(DataType::kUint16, {6}, a)),
                        In("b", Tensor::FromVector<uint16_t>(DataType::kUint16, {6}, b))},
             .rtol = 0,
             .atol = 0};
    auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
    for (size_t i = 0; i < a.size(); ++i) {
      const uint32_t want = std::string(op) == "Mul" ? (uint32_t{a[i]} * b[i]) & 0xffff : b[i] ? a[i] / b[i] : 0;
      EXPECT_EQ(out[0].second.data<uint16_t>()[i], want) << op << " " << i;
    }
  }
}

TEST(CpuBinaryElementwise, IntegerDivisionEdgeCases) {
  // Truncation toward zero, x / 0 = 0, INT_MIN / -1 = INT_MIN (wraps), as ref.
  const std::vector<int32_t> a = {7, -7, 7, -7, 5, INT_MIN, INT_MIN, INT_MAX, 0};
  const std::vector<int32_t> b = {2, 2, -2, -2, 0, -1, 1, -1, 0};
  OpTest t{.op = "Div",
           .inputs = {In("a", Tensor::FromVector<int32_t>(DataType::kInt32, {9}, a)),
                      In("b", Tensor::FromVector<int32_t>(DataType::kInt32, {9}, b))},
           .rtol = 0,
           .atol = 0};
  const EwVariant best = HostVariants().front();
  EXPECT_TRUE(MatchesRefWithKernel(t, "", KernelName("i32", "Div", best.impl)));
  auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const std::vector<int32_t> want = {3, -3, -3, 3, 0, INT_MIN, INT_MIN, -INT_MAX, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[0].second.data<int32_t>()[i], want[i]) << i;
}

TEST(CpuBinaryElementwise, RefusesWhatItDoesNotImplement) {
  std::mt19937 rng(8);
  // Opset 6 and below (the legacy broadcast/axis attributes) are left to ref.
  OpTest legacy{.op = "Add",
                .opset = 6,
                .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 3}, rng)),
                           In("b", RandomTensor(DataType::kFloat, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(legacy, "not opset 6");
}

TEST(CpuBinaryElementwise, MismatchedTypesNameTheNode) {
  std::vector<NodeInput> decl = {{"a", DataType::kInt8}, {"b", DataType::kInt8}};
  auto session = OneNodeSession("Add", decl, {"y"}, 14, nullptr, OnlyBackend("cpu", 1));
  std::mt19937 rng(9);
  try {
    session->Run({{"a", RandomInts<int8_t>(DataType::kInt8, {2, 3}, rng)},
                  {"b", RandomInts<int8_t>(DataType::kInt8, {4}, rng)}});
    ADD_FAILURE() << "expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'n0' (Add)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
