// The cpu Add/Sub/Mul/Div kernels against ref: every ISA variant (chosen with --isa and proven by the placed kernel's
// name), every path (same shape, scalar operand on either side, channel bias, trailing-dims broadcast, the general
// odometer, tiles of short rows with one input's row repeated, empty outputs), sizes that leave SIMD tails, edge
// values, threads 1 and 2, int32/int64. Float results must be bit-identical to ref's (one IEEE operation per element),
// so the tolerance is zero.
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
  const T pool[] = {0, 1, -1, 2, -2, 3, -7, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                    std::numeric_limits<T>::min() + 1};
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    t.data<T>()[i] = EwPick(rng, 0, 2) ? static_cast<T>(EwPick(rng, -1000, 1000)) : pool[EwPick(rng, 0, 9)];
  }
  return t;
}

template <typename T>
void CheckInts(DataType dt, const std::string& tag, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const char* op : kOps) {
    for (int i = 0; i < 21; ++i) {
      const ShapePair s = RandomShapes(rng, i % 7);
      OpTest t{.op = op,
               .opset = EwPick(rng, 0, 1) ? 14 : 7,
               .inputs = {In("a", RandomInts<T>(dt, s.a, rng)), In("b", RandomInts<T>(dt, s.b, rng))},
               .rtol = 0,
               .atol = 0,
               .threads = 1 + i % 2};
      SCOPED_TRACE(std::string(op) + " " + s.path + ": " + ShapeToString(s.a) + " and " + ShapeToString(s.b));
      EXPECT_TRUE(MatchesRefWithKernel(t, "", KernelName(tag, op, "scalar")));
    }
  }
}

TEST(CpuBinaryElementwise, Int32MatchesRef) { CheckInts<int32_t>(DataType::kInt32, "i32", 5); }
TEST(CpuBinaryElementwise, Int64MatchesRef) { CheckInts<int64_t>(DataType::kInt64, "i64", 6); }

TEST(CpuBinaryElementwise, IntegerDivisionEdgeCases) {
  // Truncation toward zero, x / 0 = 0, INT_MIN / -1 = INT_MIN (wraps), as ref.
  const std::vector<int32_t> a = {7, -7, 7, -7, 5, INT_MIN, INT_MIN, INT_MAX, 0};
  const std::vector<int32_t> b = {2, 2, -2, -2, 0, -1, 1, -1, 0};
  OpTest t{.op = "Div",
           .inputs = {In("a", Tensor::FromVector<int32_t>(DataType::kInt32, {9}, a)),
                      In("b", Tensor::FromVector<int32_t>(DataType::kInt32, {9}, b))},
           .rtol = 0,
           .atol = 0};
  EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.i32_div__scalar.7"));
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
  // float64 is not implemented.
  OpTest f64{.op = "Sub",
             .inputs = {In("a", RandomTensor(DataType::kDouble, {4}, rng)),
                        In("b", RandomTensor(DataType::kDouble, {4}, rng))}};
  ExpectRefusedAndFallsBack(f64, "float64");
}

}  // namespace
}  // namespace ferry::testing
