// The cpu PRelu kernels against ref, bit for bit: float32 (edge values: NaN, ±0, ±inf), int32 and int64, with the
// slope a scalar, per channel [C,1,1], a row, the same shape, a 1-D per-channel slope (ref's fallback rule), and
// empty tensors, threads 1 and 2, opsets 7, 9 and 16; a slope that does not broadcast named after the node; types
// and opsets cpu leaves to ref.
#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

struct Typed {
  DataType dt;
  const char* tag;
};
const Typed kTypes[] = {{DataType::kFloat, "f32"}, {DataType::kInt32, "i32"}, {DataType::kInt64, "i64"}};

// X and the slope: every slope broadcasts unidirectionally to X, or is 1-D of X's channel count.
const MapShapes kSlopes[] = {
    {{2, 3, 4, 5}, {}, "scalar slope"},
    {{2, 3, 4, 5}, {1}, "one-element slope"},
    {{2, 3, 4, 5}, {3, 1, 1}, "per channel"},
    {{2, 3, 4, 5}, {5}, "row"},
    {{2, 3, 4, 5}, {2, 3, 4, 5}, "same shape"},
    {{2, 3, 4, 5}, {3}, "1-D per channel (fallback rule)"},
    {{6, 7}, {6, 1}, "column"},
    {{0, 3, 2}, {3, 1}, "empty"},
    {{1, 64, 40, 40}, {64, 1, 1}, "large per channel"},
    {{70001}, {1}, "large scalar slope"},
};

TEST(CpuPRelu, MatchesRef) {
  std::mt19937 rng(41);
  for (const Typed& type : kTypes) {
    for (const MapShapes& s : kSlopes) {
      for (int threads : {1, 2}) {
        Tensor slope = MapRandom(type.dt, s.b, rng, -2, 2);
        OpTest t{.op = "PRelu",
                 .opset = type.dt == DataType::kFloat && EwPick(rng, 0, 1) ? 7 : EwPick(rng, 0, 1) ? 9 : 16,
                 .inputs = {In("x", MapRandom(type.dt, s.a, rng)),
                            EwPick(rng, 0, 2) ? Const("slope", slope) : In("slope", slope)},
                 .rtol = 0,
                 .atol = 0,
                 .threads = threads};
        EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu." + std::string(type.tag) + "_prelu", ".7"))
            << DataTypeName(type.dt) << " " << s.what << ", threads " << threads << ", opset " << t.opset;
      }
    }
  }
}

TEST(CpuPRelu, KnownValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  OpTest t{.op = "PRelu",
           .inputs = {In("x", Tensor::FromVector<float>(DataType::kFloat, {6}, {-2, 3, -0.0f, nan, -inf, inf})),
                      In("slope", Tensor::FromVector<float>(DataType::kFloat, {1}, {0.25f}))}};
  const auto out = EwSession(t, {"cpu"}, true, 1)->Run(Feeds(t));
  const float* y = out[0].second.data<float>();
  EXPECT_EQ(y[0], -0.5f);
  EXPECT_EQ(y[1], 3.0f);
  EXPECT_TRUE(std::signbit(y[2]));  // -0 is not below 0: passes through
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], -inf);
  EXPECT_EQ(y[5], inf);
}

TEST(CpuPRelu, SlopeThatDoesNotBroadcastNamesTheNode) {
  std::mt19937 rng(42);
  std::vector<NodeInput> decl = {{"x", DataType::kFloat}, {"slope", DataType::kFloat}};
  auto session = OneNodeSession("PRelu", decl, {"y"}, 16, nullptr, OnlyBackend("cpu", 1));
  try {
    session->Run({{"x", MapRandom(DataType::kFloat, {2, 3, 4}, rng)},
                  {"slope", MapRandom(DataType::kFloat, {4, 1}, rng)}});
    ADD_FAILURE() << "expected an InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 'n0' (PRelu)"), std::string::npos) << what;
    EXPECT_NE(what.find("cannot be broadcast to X"), std::string::npos) << what;
  }
}

TEST(CpuPRelu, OtherTypesAndLegacyOpsetsFallBackToRef) {
  std::mt19937 rng(43);
  OpTest f64{.op = "PRelu",
             .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng)),
                        In("slope", RandomTensor(DataType::kDouble, {1}, rng))}};
  ExpectRefusedAndFallsBack(f64, "float64");
  OpTest legacy{.op = "PRelu",
                .opset = 6,
                .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3}, rng)),
                           In("slope", RandomTensor(DataType::kFloat, {3}, rng))}};
  ExpectRefusedAndFallsBack(legacy, "not opset 6");
}

}  // namespace
}  // namespace ferry::testing
