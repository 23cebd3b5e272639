// ONNX Runtime's fusions and Gelus (com.microsoft, group "fused"): FusedConv, FusedGemm, FusedMatMul,
// TransposeMatMul, Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd. Each cpu kernel against ref with the cross-backend
// harness (fallback forbidden, 1 and 4 threads), hand-computed values on both backends, and the messages of bad
// inputs. (ONNX Runtime itself is the oracle in tests/python/test_ort_contrib_fused.py.)
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

constexpr DataType kF32 = DataType::kFloat;

Tensor Rand(Shape shape, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  return RandomTensor(kF32, std::move(shape), rng, lo, hi);
}

Tensor Values(Shape shape, std::vector<float> v) { return Tensor::FromVector(kF32, std::move(shape), v); }

OpTest Ms(std::string op, std::vector<OpInput> in, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.rtol = 1e-4;
  t.atol = 1e-5;
  return t;
}

// cpu against ref with 1 and 4 threads.
::testing::AssertionResult CpuMatchesRef(OpTest t) {
  for (int threads : {1, 4}) {
    t.threads = threads;
    auto r = MatchesRef(t, "cpu");
    if (!r) return r << " (" << threads << " threads)";
  }
  return ::testing::AssertionSuccess();
}

// Output 0 of `t` on `backend` against `want`.
::testing::AssertionResult Gives(const OpTest& t, const std::string& backend, const Tensor& want) {
  const auto got = RunOn(t, {backend}, true, 1);
  return TensorsClose(got.at(0).second, want, 1e-6, 1e-6);
}

// The message `t` fails with on ref (no fallback), "" when it runs.
std::string ErrorOf(const OpTest& t) {
  try {
    RunOn(t, {"ref"}, true, 1);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- FusedConv ----------------------------------------------------------------------------------------------

TEST(OrtContribFused, FusedConvCpuMatchesRef) {
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {{"", {}},
                                                                        {"Relu", {}},
                                                                        {"Tanh", {}},
                                                                        {"Sigmoid", {}},
                                                                        {"LeakyRelu", {0.2f}},
                                                                        {"Clip", {-0.3f, 0.5f}},
                                                                        {"HardSigmoid", {0.3f, 0.4f}}};
  for (const auto& [act, params] : acts) {
    std::vector<onnx::AttributeProto> attrs = {Ints("pads", {1, 1, 1, 1}), Str("activation", act)};
    if (!params.empty()) attrs.push_back(Floats("activation_params", params));
    OpTest t = Ms("FusedConv",
                  {In("x", Rand({2, 3, 6, 5}, 1)), Const("w", Rand({4, 3, 3, 3}, 2)), Const("b", Rand({4}, 3)),
                   In("z", Rand({2, 4, 6, 5}, 4))},
                  attrs);
    EXPECT_TRUE(CpuMatchesRef(t)) << act;
  }
}

TEST(OrtContribFused, FusedConvHandValues) {
  // y = Clip(-x + 0.5 + z, -2, 0): x = 1..4, z = 0, 0, 1, -1.
  OpTest t = Ms("FusedConv",
                {In("x", Values({1, 1, 2, 2}, {1, 2, 3, 4})), Const("w", Values({1, 1, 1, 1}, {-1})),
                 Const("b", Values({1}, {0.5f})), In("z", Values({1, 1, 2, 2}, {0, 0, 1, -1}))},
                {Str("activation", "Clip"), Floats("activation_params", {-2.0f, 0.0f})});
  const Tensor want = Values({1, 1, 2, 2}, {-0.5f, -1.5f, -1.5f, -2.0f});
  EXPECT_TRUE(Gives(t, "ref", want));
  EXPECT_TRUE(Gives(t, "cpu", want));
}

// ---- FusedGemm ----------------------------------------------------------------------------------------------

TEST(OrtContribFused, FusedGemmCpuMatchesRef) {
  struct Case {
    std::string act;
    std::vector<onnx::AttributeProto> params;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {"Relu", {}},
      {"LeakyRelu", {Float("activation_alpha", 0.2f)}},
      {"Elu", {Float("activation_alpha", 0.7f)}},
      {"Selu", {Float("activation_alpha", 1.6f), Float("activation_gamma", 1.1f)}},
      {"Selu", {Float("activation_alpha", -0.5f), Float("activation_gamma", 1.1f)}},  // the scalar formula
      {"HardSigmoid", {Float("activation_alpha", 0.25f), Float("activation_beta", 0.4f)}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"Softplus", {}},
      {"Softsign", {}},
      {"ThresholdedRelu", {Float("activation_alpha", 0.3f)}},
      {"ScaledTanh", {Float("activation_alpha", 1.5f), Float("activation_beta", 0.6f)}},
      {"ParametricSoftplus", {Float("activation_alpha", 0.8f), Float("activation_beta", 1.3f)}},
  };
  for (const Case& c : cases) {
    for (bool sum : {false, true}) {  // C as the bias (one row, alpha = beta = 1) or through the sum post-op
      std::vector<onnx::AttributeProto> attrs = c.params;
      if (!c.act.empty()) attrs.push_back(Str("activation", c.act));
      if (sum) attrs.push_back(Float("beta", 0.5f));
      OpTest t = Ms("FusedGemm",
                    {In("a", Rand({6, 20}, 1, -2, 2)), Const("b", Rand({20, 9}, 2)), In("c", Rand({9}, 3))}, attrs);
      EXPECT_TRUE(CpuMatchesRef(t)) << c.act << (sum ? " (sum)" : " (bias)");
    }
  }
  // alpha = 0: no product, Y = act(beta C); transposes with a C broadcast down the columns.
  OpTest only_c = Ms("FusedGemm", {In("a", Rand({3, 4}, 4)), In("b", Rand({4, 5}, 5)), In("c", Rand({3, 1}, 6))},
                     {Float("alpha", 0.0f), Float("beta", 2.0f), Str("activation", "Sigmoid")});
  EXPECT_TRUE(CpuMatchesRef(only_c));
  OpTest trans = Ms("FusedGemm", {In("a", Rand({7, 3}, 7)), In("b", Rand({5, 7}, 8)), In("c", Rand({3, 1}, 9))},
                    {Int("transA", 1), Int("transB", 1), Float("alpha", 1.5f), Str("activation", "Tanh")});
  EXPECT_TRUE(CpuMatchesRef(trans));
}

TEST(OrtContribFused, FusedGemmHandValues) {
  // act([1, -2] · I + [0.5, 0.5]) = act([1.5, -1.5]); LeakyRelu 0.1, and ScaledTanh 1.5 tanh(0.5 x).
  auto make = [](std::vector<onnx::AttributeProto> attrs) {
    return Ms("FusedGemm",
              {In("a", Values({1, 2}, {1, -2})), Const("b", Values({2, 2}, {1, 0, 0, 1})),
               Const("c", Values({2}, {0.5f, 0.5f}))},
              std::move(attrs));
  };
  const OpTest leaky = make({Str("activation", "LeakyRelu"), Float("activation_alpha", 0.1f)});
  const OpTest scaled = make(
      {Str("activation", "ScaledTanh"), Float("activation_alpha", 1.5f), Float("activation_beta", 0.5f)});
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_TRUE(Gives(leaky, backend, Values({1, 2}, {1.5f, -0.15f}))) << backend;
    // 1.5 tanh(0.75) = 0.95272...
    EXPECT_TRUE(Gives(scaled, backend, Values({1, 2}, {0.9527234f, -0.9527234f}))) << backend;
  }
}

// ---- FusedMatMul, TransposeMatMul ---------------------------------------------------------------------------

TEST(OrtContribFused, FusedMatMulCpuMatchesRef) {
  struct Case {
    Shape a, b;
    std::vector<onnx::AttributeProto> attrs;
  };
  const std::vector<Case> cases = {
      {{5, 8}, {8, 6}, {}},
      {{8, 5}, {8, 6}, {Int("transA", 1)}},
      {{5, 8}, {6, 8}, {Int("transB", 1), Float("alpha", 0.125f)}},
      {{8, 5}, {6, 8}, {Int("transA", 1), Int("transB", 1)}},
      {{2, 3, 7, 16}, {2, 3, 9, 16}, {Int("transB", 1), Float("alpha", 0.25f)}},
      {{2, 3, 16, 7}, {3, 16, 9}, {Int("transA", 1)}},
      {{4, 1, 5, 8}, {1, 3, 6, 8}, {Int("transB", 1)}},
      {{3, 2, 4}, {2, 4, 5}, {Int("transBatchA", 1)}},
      {{3, 1, 2, 4}, {5, 6, 2, 4}, {Int("transBatchA", 1), Int("transBatchB", 1), Int("transB", 1)}},
      {{4, 2, 3, 6}, {2, 3, 4, 5}, {Int("transBatchA", 1), Int("transA", 1), Float("alpha", -1.5f)}},
      {{8}, {8, 6}, {Int("transA", 1)}},
      {{5, 8}, {8}, {Int("transB", 1)}},
      {{3, 8, 5}, {8, 6}, {Int("transA", 1)}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    OpTest t = Ms("FusedMatMul", {In("a", Rand(cases[i].a, 1)), In("b", Rand(cases[i].b, 2))}, cases[i].attrs);
    EXPECT_TRUE(CpuMatchesRef(t)) << "case " << i;
  }
  // A constant B, packed at creation, transposed or not; 2 rows reach the skinny product.
  for (int64_t rows : {2, 40}) {
    for (bool tb : {false, true}) {
      OpTest t = Ms("FusedMatMul",
                    {In("a", Rand({rows, 32}, 3)), Const("b", Rand(tb ? Shape{48, 32} : Shape{32, 48}, 4))},
                    {Int("transB", tb ? 1 : 0), Float("alpha", tb ? 0.5f : 1.0f)});
      EXPECT_TRUE(CpuMatchesRef(t)) << rows << " rows, transB " << tb;
    }
  }
  OpTest tm = Ms("TransposeMatMul", {In("a", Rand({2, 7, 6}, 5)), In("b", Rand({5, 7}, 6))},
                 {Int("transA", 1), Int("transB", 1), Float("alpha", 0.3f)});
  EXPECT_TRUE(CpuMatchesRef(tm));
}

TEST(OrtContribFused, FusedMatMulHandValues) {
  // 0.5 · A · Bᵀ with A = [[1, 2], [3, 4]], B = [[5, 6], [7, 8]]: [[17, 23], [39, 53]] / 2.
  OpTest t = Ms("FusedMatMul", {In("a", Values({2, 2}, {1, 2, 3, 4})), In("b", Values({2, 2}, {5, 6, 7, 8}))},
                {Int("transB", 1), Float("alpha", 0.5f)});
  // transBatchA: A [2, 1, 2] (dim 0 moved past the batch: [1, 2, 2] = [[1, 2], [3, 4]]) times I.
  OpTest tba = Ms("FusedMatMul", {In("a", Values({2, 1, 2}, {1, 2, 3, 4})), In("b", Values({1, 2, 2}, {1, 0, 0, 1}))},
                  {Int("transBatchA", 1), Int("transA", 1)});
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_TRUE(Gives(t, backend, Values({2, 2}, {8.5f, 11.5f, 19.5f, 26.5f}))) << backend;
    // transA after it: [[1, 3], [2, 4]].
    EXPECT_TRUE(Gives(tba, backend, Values({1, 2, 2}, {1, 3, 2, 4}))) << backend;
  }
}

// ---- Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd -----------------------------------------------------------

TEST(OrtContribFused, GelusAndBiasAddCpuMatchRef) {
  for (int64_t c : {5, 16, 37, 64}) {
    const Tensor x = Rand({3, 4, c}, 1, -6, 6), bias = Rand({c}, 2), skip = Rand({3, 4, c}, 3);
    std::vector<OpTest> tests = {
        Ms("Gelu", {In("x", x)}),
        Ms("BiasGelu", {In("x", x), In("b", bias)}),
        Ms("FastGelu", {In("x", x), Const("b", bias)}),
        Ms("FastGelu", {In("x", x)}),
        Ms("QuickGelu", {In("x", x)}),
        Ms("QuickGelu", {In("x", x)}, {Float("alpha", 1.0f)}),
        Ms("BiasAdd", {In("x", x), In("b", bias), In("s", skip)}),
    };
    for (OpTest& t : tests) {
      t.rtol = 2e-6;
      t.atol = 1e-6;
      EXPECT_TRUE(CpuMatchesRef(t)) << t.op << " C = " << c;
    }
  }
}

TEST(OrtContribFused, GelusAndBiasAddHandValues) {
  const std::vector<std::pair<OpTest, Tensor>> cases = {
      {Ms("Gelu", {In("x", Values({2}, {1.0f, -0.5f}))}), Values({2}, {0.8413447f, -0.1542688f})},
      {Ms("BiasGelu", {In("x", Values({2}, {0.5f, -1.0f})), In("b", Values({2}, {0.5f, 0.5f}))}),
       Values({2}, {0.8413447f, -0.1542688f})},
      {Ms("FastGelu", {In("x", Values({1, 2}, {1.0f, -2.0f}))}), Values({1, 2}, {0.8411920f, -0.0454023f})},
      {Ms("QuickGelu", {In("x", Values({1}, {1.0f}))}), Values({1}, {0.8457958f})},
      {Ms("QuickGelu", {In("x", Values({1}, {-1.0f}))}, {Float("alpha", 2.0f)}), Values({1}, {-0.1192029f})},
      {Ms("BiasAdd",
          {In("x", Values({1, 1, 2}, {1, 2})), In("b", Values({2}, {2, 3})), In("s", Values({1, 1, 2}, {3, -10}))}),
       Values({1, 1, 2}, {6, -5})},
  };
  for (const auto& [t, want] : cases) {
    for (const char* backend : {"ref", "cpu"}) EXPECT_TRUE(Gives(t, backend, want)) << t.op << " on " << backend;
  }
}

// ---- refusals -------------------------------------------------------------------------------------------------

TEST(OrtContribFused, BadInputsAreRefusedWithTheirReason) {
  const std::string bias = ErrorOf(Ms("BiasGelu", {In("x", Rand({2, 4}, 1)), In("b", Rand({3}, 2))}));
  EXPECT_TRUE(Contains(bias, "input B has shape [3], expected [4]")) << bias;
  const std::string add = ErrorOf(
      Ms("BiasAdd", {In("x", Rand({2, 4}, 1)), In("b", Rand({4}, 2)), In("s", Rand({2, 4}, 3))}));
  EXPECT_TRUE(Contains(add, "must be 3-D [N, S, C]")) << add;
  const std::string batch = ErrorOf(
      Ms("FusedMatMul", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))}, {Int("transBatchA", 1)}));
  EXPECT_TRUE(Contains(batch, "transBatchA / transBatchB need A and B of the same rank >= 3")) << batch;
  const std::string k = ErrorOf(
      Ms("FusedMatMul", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))}, {Int("transA", 1)}));
  EXPECT_TRUE(Contains(k, "inner dimensions differ")) << k;  // shape inference's
  const std::string act = ErrorOf(
      Ms("FusedGemm", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))}, {Str("activation", "Gelu")}));
  EXPECT_TRUE(Contains(act, "activation 'Gelu' is not one of ONNX Runtime's")) << act;
  const std::string params = ErrorOf(Ms("FusedGemm", {In("a", Rand({3, 4}, 1)), In("b", Rand({4, 5}, 2))},
                                        {Str("activation", "ScaledTanh"), Float("activation_alpha", 1.0f)}));
  EXPECT_TRUE(Contains(params, "ScaledTanh needs activation_alpha and activation_beta")) << params;
}

}  // namespace
}  // namespace ferry::testing
