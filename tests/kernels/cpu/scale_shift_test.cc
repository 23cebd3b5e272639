// The cpu ScaleShift kernels (ai.ferry) against ref: the layouts the passes produce (per channel on NCHW, on
// nChw16c / nChw8c blocks, channels-last, a scalar, a full tensor, a mixed broadcast), every activation of the
// fused-activation table, on every ISA variant (the vector ones within the harness tolerance, the scalar one bit for
// bit), threads 1 and 2, sizes that leave SIMD tails and cross the threading grain; edge values; shapes that do not
// broadcast are refused, naming the input and the shapes.
#include <limits>

#include "kernels/cpu/binary_elementwise_map_test_util.h"

namespace ferry::testing {
namespace {

const std::string kFerry = "ai.ferry";

OpTest ScaleShiftTest(const Shape& x, const Shape& s, const Shape& t, const std::string& act, int threads,
                      std::mt19937& rng) {
  OpTest op{.op = "ScaleShift",
            .domain = kFerry,
            .opset = 1,
            .inputs = {In("x", MapRandom(DataType::kFloat, x, rng, -6, 6)),
                       In("scale", MapRandom(DataType::kFloat, s, rng, -2, 2)),
                       In("shift", MapRandom(DataType::kFloat, t, rng, -1, 1))},
            .threads = threads};
  op.attributes = {Str("activation", act)};
  if (act == "LeakyRelu") op.attributes.push_back(Floats("activation_params", {0.1f}));
  if (act == "Clip") op.attributes.push_back(Floats("activation_params", {-0.5f, 2.0f}));
  return op;
}

struct Layout {
  Shape x, s, t;
};

TEST(CpuScaleShift, MatchesRefOnEveryLayoutAndActivation) {
  std::mt19937 rng(71);
  const Layout layouts[] = {
      {{2, 5, 7, 3}, {5, 1, 1}, {5, 1, 1}},                    // per channel, NCHW (a scalar per row of 21)
      {{1, 3, 4, 4, 16}, {1, 3, 1, 1, 16}, {1, 3, 1, 1, 16}},  // nChw16c
      {{2, 3, 5, 5, 8}, {1, 3, 1, 1, 8}, {1, 3, 1, 1, 8}},     // nChw8c
      {{2, 6, 6, 5}, {5}, {5}},                                // channels-last, a tail in every row
      {{37}, {}, {1}},                                         // scalars
      {{3, 33}, {3, 33}, {3, 33}},                             // full tensors
      {{4, 3, 9}, {3, 1}, {9}},                                // scale per row, shift per column
      {{1, 64, 56, 56}, {64, 1, 1}, {64, 1, 1}},               // past the threading grain
      {{0, 3, 4}, {3, 1}, {3, 1}},                             // empty
  };
  const char* acts[] = {"",          "Relu", "LeakyRelu", "Clip",     "Sigmoid", "Tanh", "HardSigmoid",
                        "HardSwish", "Silu", "Gelu",      "GeluTanh", "Mish"};
  int i = 0;
  for (const Layout& l : layouts) {
    for (const char* act : acts) {
      const OpTest t = ScaleShiftTest(l.x, l.s, l.t, act, 1 + i++ % 2, rng);
      EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_scale_shift", ".1"))
          << ShapeToString(l.x) << " " << ShapeToString(l.s) << " " << ShapeToString(l.t) << " '" << act << "'";
    }
    OpTest exact = ScaleShiftTest(l.x, l.s, l.t, "Relu", 2, rng);
    exact.rtol = 0;
    exact.atol = 0;
    EXPECT_TRUE(MatchesRefWithKernel(exact, kEwScalar.isa, "cpu.f32_scale_shift__scalar.1")) << "scalar, exactly";
  }
}

TEST(CpuScaleShift, EdgeValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* act : {"", "Relu", "Sigmoid"}) {
    OpTest t{.op = "ScaleShift",
             .domain = kFerry,
             .opset = 1,
             .inputs = {In("x", Tensor::FromVector<float>(DataType::kFloat, {6}, {0.0f, -0.0f, inf, nan, -inf, 1e30f})),
                        In("scale", Tensor::FromVector<float>(DataType::kFloat, {1}, {2.0f})),
                        In("shift", Tensor::FromVector<float>(DataType::kFloat, {6}, {0, 0, 0, 0, 0, 1}))}};
    t.attributes = {Str("activation", act)};
    EXPECT_TRUE(MatchesRefOnEveryIsa(t, "cpu.f32_scale_shift", ".1")) << act;
  }
}

TEST(CpuScaleShift, ShapesThatDoNotBroadcastAreRefused) {
  std::mt19937 rng(72);
  // scale would grow X: refused (by shape inference, before any kernel), naming the input and both shapes.
  const OpTest t = ScaleShiftTest({2, 3}, {4, 2, 3}, {3}, "", 1, rng);
  const auto r = MatchesRefWithKernel(t, kEwScalar.isa, "cpu.f32_scale_shift__scalar.1");
  ASSERT_FALSE(r);
  const std::string message = r.message();
  for (const char* part : {"ScaleShift", "does not broadcast", "[4,2,3]", "[2,3]"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
  }
}

}  // namespace
}  // namespace ferry::testing
