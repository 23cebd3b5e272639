// The cpu Sum/Mean/Max/Min kernels against ref, bit for bit: one to four inputs broadcast together (each pair of
// binary_elementwise_map_test_util.h's shapes, plus a third input widening the output so the first step fills
// rows from two broadcast inputs), float32, float64 and float16 with edge values (NaN propagation, ±0 ties) for all
// four, every integer type (int8..int64, uint8..uint64) for Max and Min, threads 1 and 2, opsets 6 (equal shapes),
// 8 and 13; a shape mismatch named after the node; the opsets cpu leaves to ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Case {
  const char* op;
  const char* lower;
  DataType dt;
  const char* tag;
  int since;
};
const Case kCases[] = {{"Sum", "sum", DataType::kFloat, "f32", 6},     {"Mean", "mean", DataType::kFloat, "f32", 6},
                       {"Max", "max", DataType::kFloat, "f32", 6},     {"Min", "min", DataType::kFloat, "f32", 6},
                       {"Max", "max", DataType::kInt32, "i32", 12},    {"Min", "min", DataType::kInt32, "i32", 12},
                       {"Max", "max", DataType::kInt64, "i64", 12},    {"Min", "min", DataType::kInt64, "i64", 12},
                       {"Sum", "sum", DataType::kDouble, "f64", 6},    {"Mean", "mean", DataType::kDouble, "f64", 6},
                       {"Max", "max", DataType::kDouble, "f64", 6},    {"Min", "min", DataType::kDouble, "f64", 6},
                       {"Sum", "sum", DataType::kFloat16, "f16", 6},   {"Mean", "mean", DataType::kFloat16, "f16", 6},
                       {"Max", "max", DataType::kFloat16, "f16", 6},   {"Min", "min", DataType::kFloat16, "f16", 6},
                       {"Max", "max", DataType::kInt8, "i8", 12},      {"Min", "min", DataType::kInt16, "i16", 12},
                       {"Max", "max", DataType::kUint8, "u8", 12},     {"Min", "min", DataType::kUint16, "u16", 12},
                       {"Max", "max", DataType::kUint32, "u32", 12},   {"Min", "min", DataType::kUint64, "u64", 12},
                       {"Min", "min", DataType::kInt8, "i8", 12},      {"Max", "max", DataType::kUint64, "u64", 12}};

// The kernel name around its ISA tag: cpu.f32_sum + __avx2 + .6.
std::string Stem(const Case& c) { return "cpu." + std::string(c.tag) + "_" + c.lower; }
std::string Suffix(const Case& c) { return "." + std::to_string(c.since); }

// `t` against ref on every ISA variant of the case's kernel (float16 has the scalar one only).
::testing::AssertionResult Matches(const OpTest& t, const Case& c) {
  if (c.dt == DataType::kFloat16) return MatchesRefWithKernel(t, "", Stem(c) + "__scalar" + Suffix(c));
  return MatchesRefOnEveryIsa(t, Stem(c), Suffix(c));
}

OpTest VariadicTest(const Case& c, const std::vector<Shape>& shapes, int threads, std::mt19937& rng) {
  // Opset 8 (broadcasting) for the float types; integers are allowed from 12.
  const int64_t opset = EwPick(rng, 0, 1) ? 13 : c.since == 6 ? 8 : 12;
  OpTest t{.op = c.op, .opset = opset, .rtol = 0, .atol = 0, .threads = threads};
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor v = MapRandom(c.dt, shapes[i], rng, -3, 3);  // small ranges: ties are common
    // Input 0 is always fed: a node of constants only would be folded away before placement.
    const bool fed = i == 0 || EwPick(rng, 0, 3) != 0;
    t.inputs.push_back(fed ? In("x" + std::to_string(i), v) : Const("x" + std::to_string(i), v));
  }
  return t;
}

TEST(CpuVariadicElementwise, TwoInputsMatchRef) {
  std::mt19937 rng(61);
  for (const Case& c : kCases) {
    for (const MapShapes& s : MapShapeCases()) {
      for (int threads : {1, 2}) {
        EXPECT_TRUE(Matches(VariadicTest(c, {s.a, s.b}, threads, rng), c))
            << c.op << " " << DataTypeName(c.dt) << " " << s.what << ", threads " << threads;
      }
    }
  }
}

TEST(CpuVariadicElementwise, OneThreeAndFourInputsMatchRef) {
  std::mt19937 rng(62);
  const std::vector<std::vector<Shape>> cases = {
      {{7}},
      {{2, 0}},
      {{3, 5}, {3, 5}, {3, 5}},
      {{3, 1}, {3, 1}, {1, 4}},  // step 0 fills whole rows from two inputs broadcast along them
      {{}, {1}, {2, 3}},
      {{4, 1, 6}, {5, 1}, {6}, {1, 1, 1}},
      {{2, 1, 9}, {1, 3, 1}, {2, 3, 9}, {9}},
      {{1, 300}, {400, 1}, {1}},  // over the threading threshold
  };
  for (const Case& c : kCases) {
    for (const auto& shapes : cases) {
      for (int threads : {1, 2}) {
        std::string text;
        for (const Shape& s : shapes) text += ShapeToString(s) + " ";
        EXPECT_TRUE(Matches(VariadicTest(c, shapes, threads, rng), c))
            << c.op << " " << DataTypeName(c.dt) << " " << text << "threads " << threads;
      }
    }
  }
}

TEST(CpuVariadicElementwise, Opset6EqualShapes) {
  std::mt19937 rng(63);
  for (const Case& c : kCases) {
    if (c.since != 6) continue;
    OpTest t = VariadicTest(c, {{4, 5}, {4, 5}, {4, 5}}, 1, rng);
    t.opset = 6;
    EXPECT_TRUE(Matches(t, c)) << c.op;
  }
}

TEST(CpuVariadicElementwise, NaNPropagatesAndTiesKeepTheFirst) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpTest t{.op = "Max",
           .inputs = {In("a", Tensor::FromVector<float>(DataType::kFloat, {4}, {nan, 1, 0.0f, -0.0f})),
                      In("b", Tensor::FromVector<float>(DataType::kFloat, {4}, {1, nan, -0.0f, 0.0f}))}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const float* y = out[0].second.data<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_FALSE(std::signbit(y[2]));  // Max(+0, -0) = +0
  EXPECT_TRUE(std::signbit(y[3]));   // Max(-0, +0) = -0, as ref
  EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_max", ".6"));
}

TEST(CpuVariadicElementwise, MismatchedShapesNameTheNode) {
  std::mt19937 rng(64);
  ExpectBroadcastErrorNamesNode("Sum", 13,
                                {MapRandom(DataType::kFloat, {2, 3}, rng), MapRandom(DataType::kFloat, {3}, rng),
                                 MapRandom(DataType::kFloat, {4}, rng)},
                                "[2,3] and [3] and [4] cannot be broadcast");
}

TEST(CpuVariadicElementwise, Opset5FallsBackToRef) {
  std::mt19937 rng(65);
  OpTest legacy{.op = "Sum",
                .opset = 5,
                .inputs = {In("a", RandomTensor(DataType::kFloat, {4}, rng)),
                           In("b", RandomTensor(DataType::kFloat, {4}, rng))}};
  ExpectRefusedAndFallsBack(legacy, "not opset 5");
}

}  // namespace
}  // namespace ferry::testing
