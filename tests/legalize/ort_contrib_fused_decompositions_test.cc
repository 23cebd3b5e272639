// The decompositions of ONNX Runtime's fusions and Gelus (com.microsoft, group "fused"; decompose_ort_fused.cc)
// against the ops' ref kernels: random inputs over the attribute cases each rule handles, the decomposed graph run
// on ref, on cpu,ref and on a backend lacking the ops (tolerance 1e-5 relative); and the rules' refusals.
#include <random>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

Tensor Rand(Shape shape, uint32_t seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(DataType::kFloat, std::move(shape), rng, lo, hi);
}

OpTest Ms(std::string op, std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

// The refusal of every rule for the one-node model of `t` at ai.onnx opset `opset`, "" when one accepts.
std::string Refusal(const OpTest& t, int64_t opset) {
  auto model = Import(WithOnnxImport(testing::OneNodeModel(t), opset));
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), opset);
  return c.decomposition ? "" : c.reason;
}

TEST(LegalizeOrtFused, FusedConvWithZAndActivation) {
  for (const char* act : {"Relu", "Sigmoid", "Tanh"}) {
    OpTest t = Ms("FusedConv",
                  {In("x", Rand({1, 2, 5, 5}, 1)), Const("w", Rand({3, 2, 3, 3}, 2, -1, 1)),
                   Const("b", Rand({3}, 3, -1, 1)), In("z", Rand({1, 3, 5, 5}, 4, -1, 1))},
                  {Ints("pads", {1, 1, 1, 1}), Str("activation", act)});
    std::string ops;
    EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << act;
    EXPECT_EQ(ops, std::string("Conv Add ") + act);
  }
  OpTest leaky = Ms("FusedConv", {In("x", Rand({1, 2, 5, 5}, 1)), Const("w", Rand({3, 2, 3, 3}, 2, -1, 1))},
                    {Str("activation", "LeakyRelu"), testing::Floats("activation_params", {0.3f})});
  EXPECT_TRUE(DecompositionMatches(leaky, 17));
}

TEST(LegalizeOrtFused, FusedGemmEveryActivation) {
  const std::vector<std::pair<std::string, std::vector<onnx::AttributeProto>>> acts = {
      {"", {}},
      {"Relu", {}},
      {"LeakyRelu", {Float("activation_alpha", 0.2f)}},
      {"Elu", {Float("activation_alpha", 0.7f)}},
      {"Selu", {Float("activation_alpha", 1.6f), Float("activation_gamma", 1.1f)}},
      {"HardSigmoid", {Float("activation_alpha", 0.25f), Float("activation_beta", 0.4f)}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"Softplus", {}},
      {"Softsign", {}},
      {"ThresholdedRelu", {Float("activation_alpha", 0.3f)}},
      {"ScaledTanh", {Float("activation_alpha", 1.5f), Float("activation_beta", 0.6f)}},
      {"ParametricSoftplus", {Float("activation_alpha", 0.8f), Float("activation_beta", 1.3f)}},
  };
  for (const auto& [act, params] : acts) {
    std::vector<onnx::AttributeProto> attrs = params;
    if (!act.empty()) attrs.push_back(Str("activation", act));
    attrs.push_back(Int("transB", 1));
    attrs.push_back(Float("beta", 0.5f));
    OpTest t = Ms("FusedGemm", {In("a", Rand({3, 5}, 1)), Const("b", Rand({4, 5}, 2, -1, 1)), In("c", Rand({4}, 3))},
                  attrs);
    EXPECT_TRUE(DecompositionMatches(t, 17)) << act;
  }
}

TEST(LegalizeOrtFused, FusedMatMulTransposesAndScale) {
  struct Case {
    Shape a, b;
    std::vector<onnx::AttributeProto> attrs;
    std::string ops;
  };
  const std::vector<Case> cases = {
      {{3, 5}, {5, 4}, {}, "MatMul"},
      {{2, 3, 4, 6}, {2, 3, 5, 6}, {Int("transB", 1), Float("alpha", 0.125f)}, "Transpose MatMul Mul"},
      {{6, 3}, {4, 6}, {Int("transA", 1), Int("transB", 1)}, "Transpose Transpose MatMul"},
      {{3, 1, 2, 4},
       {5, 6, 2, 4},
       {Int("transBatchA", 1), Int("transBatchB", 1), Int("transB", 1)},
       "Transpose Transpose MatMul"},
      {{8}, {8, 6}, {Int("transA", 1)}, "MatMul"},
  };
  for (const Case& c : cases) {
    OpTest t = Ms("FusedMatMul", {In("a", Rand(c.a, 1)), In("b", Rand(c.b, 2))}, c.attrs);
    std::string ops;
    EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << c.ops;
    EXPECT_EQ(ops, c.ops);
  }
  OpTest tm = Ms("TransposeMatMul", {In("a", Rand({2, 4, 3}, 1)), In("b", Rand({4, 5}, 2))},
                 {Int("transA", 1), Float("alpha", 2.0f)});
  EXPECT_TRUE(DecompositionMatches(tm, 17));
}

TEST(LegalizeOrtFused, GelusAndBiasAdd) {
  const Tensor x = Rand({2, 3, 8}, 1, -5, 5), bias = Rand({8}, 2), skip = Rand({2, 3, 8}, 3);
  const std::vector<OpTest> tests = {
      Ms("Gelu", {In("x", x)}),
      Ms("BiasGelu", {In("x", x), In("b", bias)}),
      Ms("FastGelu", {In("x", x), In("b", bias)}),
      Ms("FastGelu", {In("x", x)}),
      Ms("QuickGelu", {In("x", x)}),
      Ms("QuickGelu", {In("x", x)}, {Float("alpha", 1.0f)}),
      Ms("BiasAdd", {In("x", x), In("b", bias), In("s", skip)}),
  };
  for (const OpTest& t : tests) EXPECT_TRUE(DecompositionMatches(t, 17)) << t.op;
}

TEST(LegalizeOrtFused, RefusalsSayWhy) {
  EXPECT_EQ(
      Refusal(Ms("FusedGemm", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))}, {Str("activation", "Gelu")}), 17),
      "FusedGemm: activation 'Gelu' is not one of ONNX Runtime's (Relu, LeakyRelu, Elu, Selu, HardSigmoid, "
      "Sigmoid, Tanh, Softplus, Softsign, ThresholdedRelu, ScaledTanh, ParametricSoftplus)");
  EXPECT_EQ(
      Refusal(Ms("FusedMatMul", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))}, {Int("transBatchA", 1)}), 17),
      "FusedMatMul: transBatchA / transBatchB need A and B of the same rank >= 3");
  EXPECT_EQ(Refusal(Ms("Gelu", {In("x", Rand({3}, 1))}), 8), "Gelu: Erf needs ai.onnx opset 9, the model has 8");
  EXPECT_EQ(Refusal(Ms("FusedGemm", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))},
                       {Str("activation", "ThresholdedRelu")}),
                    9),
            "FusedGemm: ThresholdedRelu needs ai.onnx opset 10, the model has 9");
}

}  // namespace
}  // namespace ferry::legalize_test
