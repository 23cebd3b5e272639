// The one fused-activation table (src/semantics/fused_activation.h): names, parameter counts and defaults, the
// refusals, and the reference formulas at their edge values.
#include "semantics/fused_activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace ferry::semantics {
namespace {

using Kind = FusedActivationKind;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

FusedActivation Parsed(std::string_view name, std::vector<float> params = {}) {
  FusedActivation a;
  EXPECT_EQ(ParseFusedActivation(name, params, &a), FusedActivationProblem::kNone) << name;
  return a;
}

TEST(SemanticsFusedActivation, TheTableIsIndexedByKindAndNamesEveryActivation) {
  for (const FusedActivationInfo& info : FusedActivations()) {
    EXPECT_EQ(&FusedActivationOf(info.kind), &info);
    EXPECT_EQ(FindFusedActivation(info.name), &info);
  }
  EXPECT_EQ(FusedActivations().size(), 12u);
  EXPECT_EQ(FindFusedActivation("Elu"), nullptr);
  EXPECT_EQ(FusedActivationNames(),
            "\"\", Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Silu, Gelu, GeluTanh or Mish");
}

TEST(SemanticsFusedActivation, EmptyParamsAreTheDefaults) {
  const FusedActivation leaky = Parsed("LeakyRelu");
  EXPECT_EQ(leaky.kind, Kind::kLeakyRelu);
  EXPECT_FLOAT_EQ(leaky.alpha, 0.01f);
  const FusedActivation hs = Parsed("HardSigmoid");
  EXPECT_FLOAT_EQ(hs.alpha, 0.2f);
  EXPECT_FLOAT_EQ(hs.beta, 0.5f);
  const FusedActivation clip = Parsed("Clip");
  EXPECT_EQ(clip.alpha, -kInf);
  EXPECT_EQ(clip.beta, kInf);
  const FusedActivation given = Parsed("Clip", {0, 6});
  EXPECT_EQ(given.alpha, 0);
  EXPECT_EQ(given.beta, 6);
  EXPECT_EQ(Parsed("").kind, Kind::kNone);
}

TEST(SemanticsFusedActivation, RefusesUnknownNamesAndWrongParameterCounts) {
  FusedActivation a;
  a.kind = Kind::kTanh;
  EXPECT_EQ(ParseFusedActivation("Elu", {}, &a), FusedActivationProblem::kUnknownName);
  const std::vector<float> one{1};
  EXPECT_EQ(ParseFusedActivation("Clip", one, &a), FusedActivationProblem::kParamCount);
  EXPECT_EQ(ParseFusedActivation("Relu", one, &a), FusedActivationProblem::kParamCount);
  EXPECT_EQ(a.kind, Kind::kTanh);  // untouched
}

TEST(SemanticsFusedActivation, TheFormulasKeepNaNAndFollowOnnx) {
  for (const FusedActivationInfo& info : FusedActivations()) {
    EXPECT_TRUE(std::isnan(ApplyFusedActivation(Parsed(info.name), kNaN))) << info.name;
  }
  EXPECT_EQ(ApplyFusedActivation(Parsed("Relu"), -2), 0);
  EXPECT_FLOAT_EQ(ApplyFusedActivation(Parsed("LeakyRelu", {0.5f}), -2), -1);
  EXPECT_EQ(ApplyFusedActivation(Parsed("Clip", {0, 6}), 7), 6);
  EXPECT_EQ(ApplyFusedActivation(Parsed("Clip", {3, 1}), 0), 1);  // min > max gives max
  EXPECT_EQ(ApplyFusedActivation(Parsed("Sigmoid"), -1000), 0);     // no overflow
  EXPECT_FLOAT_EQ(ApplyFusedActivation(Parsed("HardSigmoid"), 1), 0.7f);
  EXPECT_FLOAT_EQ(ApplyFusedActivation(Parsed("HardSwish"), 1), 1 * (1.0f / 6 + 0.5f));
  EXPECT_FLOAT_EQ(ApplyFusedActivation(Parsed("Silu"), 1), 1 / (1 + std::exp(-1.0f)));
  EXPECT_FLOAT_EQ(ApplyFusedActivation(Parsed("Gelu"), 1), 0.5f * (1 + std::erf(1 / std::sqrt(2.0f))));
  EXPECT_NEAR(ApplyFusedActivation(Parsed("GeluTanh"), 1), 0.841192f, 1e-6f);
}

// Mish is the ref Mish kernel's x * tanh(softplus(x)) (softplus without overflow), so FusedConv {Mish} equals Conv
// then Mish: bit for bit on a sweep, with the edge values of the op.
TEST(SemanticsFusedActivation, MishIsXTimesTanhOfSoftplus) {
  const FusedActivation mish = Parsed("Mish");
  EXPECT_EQ(mish.kind, Kind::kMish);
  for (float x = -30; x <= 30; x += 0.0625f) {
    const float softplus = x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    EXPECT_EQ(ApplyFusedActivation(mish, x), x * std::tanh(softplus)) << x;
    // and the function itself, in double
    const double d = x;
    EXPECT_NEAR(ApplyFusedActivation(mish, x), d * std::tanh(std::log1p(std::exp(d))), 1e-6 * (1 + std::fabs(d)))
        << x;
  }
  EXPECT_NEAR(ApplyFusedActivation(mish, 1), 0.865098f, 1e-6f);
  EXPECT_EQ(ApplyFusedActivation(mish, 0), 0);
  EXPECT_EQ(ApplyFusedActivation(mish, 100), 100);    // exp(-100) underflows harmlessly
  EXPECT_EQ(ApplyFusedActivation(mish, 1000), 1000);  // no exp(1000) = inf
  EXPECT_EQ(ApplyFusedActivation(mish, kInf), kInf);
  const float tiny = ApplyFusedActivation(mish, -100);  // -100 e^-100, a float denormal or 0, never NaN
  EXPECT_TRUE(tiny <= 0 && tiny > -1e-38f) << tiny;
  EXPECT_EQ(ApplyFusedActivation(mish, -1000), 0);
  EXPECT_TRUE(std::isnan(ApplyFusedActivation(mish, -kInf)));  // -inf * tanh(0), as the op
}

}  // namespace
}  // namespace ferry::semantics
