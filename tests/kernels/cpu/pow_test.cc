// The cpu Pow kernels against ref: a float32 base with a float32, int32, int64, uint32 or uint64 exponent, and an
// int32 or int64 base with an int32, int64 or float32 exponent, on every broadcast path
// (binary_elementwise_map_test_util.h), threads 1 and 2, opsets 7 (float exponent only), 12 and 15; the fast paths
// for a single exponent of 2, 3, 1 and 0.5 (and their edge values: NaN, ±0, ±inf, negative bases, overflow) against
// ref within the harness tolerance, 2, 1 and 0.5 bit for bit; integer powers exact with wrapping and negative
// exponents; a shape mismatch named after the node; float64 bases left to ref.
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

// Small unsigned exponents (uint32/uint64 have no RandomTensor range of their own).
Tensor SmallUnsigned(DataType dt, const Shape& shape, std::mt19937& rng) {
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const auto v = EwPick(rng, 0, 6);
    if (dt == DataType::kUint32) t.data<uint32_t>()[i] = static_cast<uint32_t>(v);
    if (dt == DataType::kUint64) t.data<uint64_t>()[i] = static_cast<uint64_t>(v);
  }
  return t;
}

TEST(CpuPow, UnsignedExponentsMatchRef) {
  std::mt19937 rng(55);
  for (const Typed& type : {Typed{DataType::kUint32, "u32"}, Typed{DataType::kUint64, "u64"}}) {
    for (const MapShapes& s : MapShapeCases(false)) {
      OpTest t{.op = "Pow",
               .opset = EwPick(rng, 0, 1) ? 12 : 15,
               .inputs = {In("x", MapRandom(DataType::kFloat, s.a, rng, -3, 3)),
                          In("y", SmallUnsigned(type.dt, s.b, rng))},
               .threads = static_cast<int>(EwPick(rng, 1, 2))};
      EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_pow_" + std::string(type.tag), ".12")) << type.tag << " " << s.what;
    }
  }
}

TEST(CpuPow, IntegerBasesMatchRef) {
  std::mt19937 rng(56);
  const Typed bases[] = {{DataType::kInt32, "i32"}, {DataType::kInt64, "i64"}};
  for (const Typed& base : bases) {
    for (const Typed& exp : kExpTypes) {
      for (const MapShapes& s : MapShapeCases(false)) {
        // Exponents from -3 to 12: negative ones (1 and -1 have integral reciprocals), and powers that wrap.
        Tensor y = RandomTensor(exp.dt, s.b, rng, -3, 12);
        OpTest t{.op = "Pow",
                 .opset = EwPick(rng, 0, 1) ? 12 : 15,
                 .inputs = {In("x", MapRandom(base.dt, s.a, rng)), EwPick(rng, 0, 2) ? In("y", y) : Const("y", y)},
                 .rtol = 0,
                 .atol = 0,
                 .threads = static_cast<int>(EwPick(rng, 1, 2))};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(base.tag) + "_pow_" + exp.tag, ".12"))
            << base.tag << " ^ " << exp.tag << " " << s.what;
      }
    }
  }
}

TEST(CpuPow, IntegerPowersAreExact) {
  OpTest t{.op = "Pow",
           .opset = 15,
           .inputs = {In("x", Tensor::FromVector<int64_t>(DataType::kInt64, {6}, {3, -1, -1, 2, 5, 3})),
                      In("y", Tensor::FromVector<int64_t>(DataType::kInt64, {6}, {39, 3, -2, -1, 0, 40}))}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const int64_t* z = out[0].second.data<int64_t>();
  EXPECT_EQ(z[0], 4052555153018976267);  // 3^39, beyond double's exact integers
  EXPECT_EQ(z[1], -1);
  EXPECT_EQ(z[2], 1);
  EXPECT_EQ(z[3], 0);  // 2^-1 has no integral value
  EXPECT_EQ(z[4], 1);
  EXPECT_EQ(static_cast<uint64_t>(z[5]), 12157665459056928801u);  // 3^40 wraps
}

TEST(CpuPow, Float64BasesFallBackToRef) {
  std::mt19937 rng(54);
  OpTest f64{.op = "Pow",
             .opset = 15,
             .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng, -5, 5)),
                        In("y", RandomTensor(DataType::kInt32, {4}, rng, 0, 4))}};
  ExpectRefusedAndFallsBack(f64, "float64");
}

}  // namespace
}  // namespace ferry::testing
