// The cpu Pow kernels against ref: a float32 base with a float32, int32 or int64 exponent on every broadcast path
// (binary_elementwise_map_test_util.h), threads 1 and 2, opsets 7 (float exponent only), 12 and 15; the fast paths
// for a single exponent of 2, 3, 1 and 0.5 (and their edge values: NaN, ±0, ±inf, negative bases, overflow) against
// ref within the harness tolerance, 2, 1 and 0.5 bit for bit; a shape mismatch named after the node; integer bases
// left to ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kExpTypes[] = {{DataType::kFloat, "f32"}, {DataType::kInt32, "i32"}, {DataType::kInt64, "i64"}};

TEST(CpuPow, MatchesRef) {
  std::mt19937 rng(51);
  for (const Typed& type : kExpTypes) {
    for (const MapShapes& s : MapShapeCases()) {
      for (int threads : {1, 2}) {
        // Integer exponents stay small (pow of anything to INT_MIN is 0 or inf either way, but slowly reached).
        Tensor e = type.dt == DataType::kFloat ? MapRandom(type.dt, s.b, rng, -4, 4)
                                               : RandomTensor(type.dt, s.b, rng, -6, 6);
        OpTest t{.op = "Pow",
                 .opset = type.dt == DataType::kFloat && EwPick(rng, 0, 1) ? 7 : EwPick(rng, 0, 1) ? 12 : 15,
                 .inputs = {In("x", MapRandom(DataType::kFloat, s.a, rng, -3, 3)),
                            EwPick(rng, 0, 2) ? In("y", e) : Const("y", e)},
                 .threads = threads};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_pow_" + std::string(type.tag), ".7"))
            << DataTypeName(type.dt) << " " << s.what << ", threads " << threads;
      }
    }
  }
}

// Bases with every edge value, against one exponent value as a scalar, [1] or [1,1], constant or fed.
Tensor EdgeBases(std::mt19937& rng, int64_t n) {
  Tensor x = MapRandom(DataType::kFloat, {n}, rng, -100, 100);
  const float edges[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN(), 1e-40f, -1e-40f, 3e38f, -3e38f, 1e20f, -1e13f, -1};
  for (size_t i = 0; i < std::size(edges); ++i) x.data<float>()[i] = edges[i];
  return x;
}

TEST(CpuPow, FastPathsMatchRef) {
  std::mt19937 rng(52);
  for (double e : {2.0, 3.0, 1.0, 0.5, 4.0, -1.0, 0.0}) {
    for (const Typed& type : kExpTypes) {
      if (type.dt != DataType::kFloat && e == 0.5) continue;
      for (const Shape& es : {Shape{}, Shape{1}, Shape{1, 1}}) {
        for (int threads : {1, 2}) {
          const int64_t n = threads == 2 ? 100003 : 77;
          Tensor y(type.dt, es);
          if (type.dt == DataType::kFloat) y.data<float>()[0] = static_cast<float>(e);
          if (type.dt == DataType::kInt32) y.data<int32_t>()[0] = static_cast<int32_t>(e);
          if (type.dt == DataType::kInt64) y.data<int64_t>()[0] = static_cast<int64_t>(e);
          // 2, 1 and 0.5 round exactly as ref does; 3 may differ from pow by double rounding, within tolerance.
          const double rtol = e == 3.0 || e == 4.0 || e == -1.0 ? 1e-6 : 0;
          OpTest t{.op = "Pow",
                   .opset = 15,
                   .inputs = {In("x", EdgeBases(rng, n)), EwPick(rng, 0, 1) ? In("y", y) : Const("y", y)},
                   .rtol = rtol,
                   .atol = 0,
                   .threads = threads};
          EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_pow_" + std::string(type.tag), ".7"))
              << "exponent " << e << " " << DataTypeName(type.dt) << ShapeToString(es) << ", threads " << threads;
        }
      }
    }
  }
}

TEST(CpuPow, SquareRootEdgeValuesAreThoseOfPow) {
  const float inf = std::numeric_limits<float>::infinity();
  OpTest t{.op = "Pow",
           .inputs = {In("x", Tensor::FromVector<float>(DataType::kFloat, {5}, {-0.0f, -inf, inf, 4, -4})),
                      In("y", Tensor::FromVector<float>(DataType::kFloat, {}, {0.5f}))}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const float* z = out[0].second.data<float>();
  EXPECT_EQ(z[0], 0.0f);
  EXPECT_FALSE(std::signbit(z[0]));  // pow(-0, 0.5) = +0
  EXPECT_EQ(z[1], inf);              // pow(-inf, 0.5) = +inf
  EXPECT_EQ(z[2], inf);
  EXPECT_EQ(z[3], 2.0f);
  EXPECT_TRUE(std::isnan(z[4]));
}

TEST(CpuPow, MismatchedShapesNameTheNode) {
  std::mt19937 rng(53);
  ExpectBroadcastErrorNamesNode("Pow", 15,
                                {MapRandom(DataType::kFloat, {2, 3}, rng), MapRandom(DataType::kInt64, {2}, rng)},
                                "[2,3] and [2] cannot be broadcast");
}

TEST(CpuPow, IntegerBasesFallBackToRef) {
  std::mt19937 rng(54);
  OpTest ints{.op = "Pow",
              .opset = 15,
              .inputs = {In("x", RandomTensor(DataType::kInt32, {4}, rng, -5, 5)),
                         In("y", RandomTensor(DataType::kInt32, {4}, rng, 0, 4))}};
  ExpectRefusedAndFallsBack(ints, "int32");
}

}  // namespace
}  // namespace ferry::testing
