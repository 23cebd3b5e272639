// ONNX Runtime's normalization ops (group "norm"): the default-domain LayerNormalization-1 (opset 14) and
// SimplifiedLayerNormalization-1, com.microsoft's SimplifiedLayerNormalization, SkipLayerNormalization,
// SkipSimplifiedLayerNormalization and EmbedLayerNormalization. The cpu kernels against ref (random shapes, the
// optional inputs and outputs, every ISA variant of the row routines), hand-computed values on ref and cpu, the
// cpu refusals (falling back to ref) and the errors for bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

constexpr DataType kF32 = DataType::kFloat;
// Mean and variance are summed in lanes on cpu, sequentially on ref.
constexpr double kRtol = 1e-4, kAtol = 1e-5;

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(kF32, std::move(shape), v); }
Tensor I32(Shape shape, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, std::move(shape), v);
}

OpTest Ms(std::string op, std::vector<OpInput> in, int outputs, std::vector<onnx::AttributeProto> attrs = {}) {
  return OpTest{.op = std::move(op),
                .domain = "com.microsoft",
                .opset = 1,
                .inputs = std::move(in),
                .attributes = std::move(attrs),
                .num_outputs = outputs,
                .rtol = kRtol,
                .atol = kAtol};
}

OpTest Default14(std::string op, std::vector<OpInput> in, int outputs, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t = Ms(std::move(op), std::move(in), outputs, std::move(attrs));
  t.domain = "";
  t.opset = 14;
  return t;
}

// The outputs of `t` on `backend` alone.
std::vector<std::pair<std::string, Tensor>> RunAlone(const OpTest& t, const std::string& backend) {
  return RunOn(t, {backend}, true, 1);
}

void ExpectValues(const Tensor& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(ElementAsDouble(got, static_cast<int64_t>(i)), want[i], tol) << what << " element " << i;
  }
}

std::string ErrorOf(const OpTest& t, const std::string& backend) {
  try {
    RunAlone(t, backend);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// ---- LayerNormalization-1 (default domain, opset 14) --------------------------------------------------------

TEST(OrtContribNorm, LayerNormalization1CpuMatchesRef) {
  std::mt19937 rng(1);
  for (int i = 0; i < 12; ++i) {
    const int64_t rows = EwPick(rng, 1, 9), mid = EwPick(rng, 1, 4), n = EwPick(rng, 1, 70);
    const int64_t axis = i % 3 == 0 ? 1 : -1;
    const Shape norm = axis == 1 ? Shape{mid, n} : Shape{n};
    OpTest t = Default14("LayerNormalization",
                         {In("x", RandomTensor(kF32, {rows, mid, n}, rng, -3, 3, i % 4 == 0)),
                          Const("scale", RandomTensor(kF32, norm, rng)), Const("b", RandomTensor(kF32, norm, rng))},
                         3, {Int("axis", axis), Float("epsilon", 1e-3f)});
    if (i % 2) t.inputs.pop_back();  // B omitted
    t.threads = 1 + i % 2;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << " " << DescribeCase(t);
  }
}

TEST(OrtContribNorm, LayerNormalization1HandValues) {
  // x = [1, 2, 3, 4]: mean 2.5, variance 1.25; Y = (x - 2.5) / sqrt(1.25 + 1e-5) * scale + B.
  const double inv = 1 / std::sqrt(1.25 + 1e-5);
  const OpTest t = Default14(
      "LayerNormalization",
      {In("x", F32({1, 4}, {1, 2, 3, 4})), Const("s", F32({4}, {1, 2, 1, 1})), Const("b", F32({4}, {0, 0, 1, 0}))}, 3);
  for (const char* backend : {"ref", "cpu"}) {
    const auto out = RunAlone(t, backend);
    ExpectValues(out[0].second, {-1.5 * inv, -1.0 * inv, 0.5 * inv + 1, 1.5 * inv}, 1e-5, backend);
    ExpectValues(out[1].second, {2.5}, 1e-6, backend);
    ExpectValues(out[2].second, {inv}, 1e-5, backend);
    EXPECT_EQ(out[1].second.shape(), (Shape{1, 1}));
  }
}

TEST(OrtContribNorm, LayerNormalization1TypesOnRef) {
  // Y has Scale's type (V), the statistics stash_type's (11: double); X float16 with a float Scale gives float Y.
  std::mt19937 rng(2);
  OpTest t = Default14("LayerNormalization",
                       {In("x", RandomTensor(DataType::kFloat16, {3, 8}, rng)),
                        Const("s", RandomTensor(kF32, {8}, rng)), Const("b", RandomTensor(kF32, {8}, rng))},
                       3, {Int("stash_type", 11)});
  const auto out = RunAlone(t, "ref");
  EXPECT_EQ(out[0].second.dtype(), kF32);
  EXPECT_EQ(out[1].second.dtype(), DataType::kDouble);
  EXPECT_EQ(out[2].second.dtype(), DataType::kDouble);
  // The float computation of the float16 values, by hand for row 0.
  const Tensor& x = t.inputs[0].value;
  double mean = 0, var = 0;
  for (int i = 0; i < 8; ++i) mean += ElementAsDouble(x, i) / 8;
  for (int i = 0; i < 8; ++i) var += std::pow(ElementAsDouble(x, i) - mean, 2) / 8;
  EXPECT_NEAR(ElementAsDouble(out[1].second, 0), mean, 1e-6);
  EXPECT_NEAR(ElementAsDouble(out[2].second, 0), 1 / std::sqrt(var + 1e-5), 1e-4);
}

TEST(OrtContribNorm, LayerNormalization1CpuRefusesDoubleStatistics) {
  std::mt19937 rng(3);
  const OpTest t = Default14("LayerNormalization",
                             {In("x", RandomTensor(kF32, {2, 8}, rng)), Const("s", RandomTensor(kF32, {8}, rng))}, 3,
                             {Int("stash_type", 11)});
  ExpectRefusedAndFallsBack(t, "stash_type 11 (not float) are not implemented on cpu");
}

// ---- SimplifiedLayerNormalization (default domain and com.microsoft) -----------------------------------------

TEST(OrtContribNorm, SimplifiedLayerNormalizationCpuMatchesRef) {
  std::mt19937 rng(4);
  for (int i = 0; i < 12; ++i) {
    const int64_t rows = EwPick(rng, 1, 9), n = EwPick(rng, 1, 70);
    const bool axis1 = i % 3 == 0;
    const Shape x_shape = axis1 ? Shape{rows, 2, n} : Shape{rows, n};
    const Shape scale = axis1 ? Shape{2, n} : Shape{n};
    OpTest t = Default14(
        "SimplifiedLayerNormalization",
        {In("x", RandomTensor(kF32, x_shape, rng, -3, 3, i % 4 == 0)), Const("scale", RandomTensor(kF32, scale, rng))},
        2, {Int("axis", axis1 ? 1 : -1), Float("epsilon", 1e-4f)});
    if (i % 2) t.domain = "com.microsoft", t.opset = 1;
    t.threads = 1 + i % 2;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << " " << DescribeCase(t);
  }
}

TEST(OrtContribNorm, SimplifiedLayerNormalizationHandValues) {
  // x = [3, 4]: mean(x^2) = 12.5, rms = sqrt(12.5); Y = x / rms * scale, inv_std_var = 1 / rms.
  const double rms = std::sqrt(12.5);
  for (const char* domain : {"", "com.microsoft"}) {
    OpTest t = Default14("SimplifiedLayerNormalization", {In("x", F32({1, 2}, {3, 4})), Const("s", F32({2}, {1, 2}))},
                         2, {Float("epsilon", 0)});
    if (*domain) t.domain = domain, t.opset = 1;
    for (const char* backend : {"ref", "cpu"}) {
      const auto out = RunAlone(t, backend);
      ExpectValues(out[0].second, {3 / rms, 8 / rms}, 1e-5, std::string(backend) + " " + domain);
      ExpectValues(out[1].second, {1 / rms}, 1e-6, std::string(backend) + " " + domain);
    }
  }
}

TEST(OrtContribNorm, SimplifiedLayerNormalizationCpuRefusesDoubleStatistics) {
  std::mt19937 rng(5);
  const OpTest t = Default14("SimplifiedLayerNormalization",
                             {In("x", RandomTensor(kF32, {2, 8}, rng)), Const("s", RandomTensor(kF32, {8}, rng))}, 2,
                             {Int("stash_type", 11)});
  ExpectRefusedAndFallsBack(t, "SimplifiedLayerNormalization: stash_type 11 (not float) is not implemented on cpu");
  EXPECT_EQ(RunAlone(t, "ref")[1].second.dtype(), DataType::kDouble);
}

// ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft) -------------------------------

// input [b, s, h] (or [b*s, h]), skip of input's shape, [s, h] or [1, s, h]; gamma, and beta and bias as asked.
OpTest SkipCase(const std::string& op, std::mt19937& rng, int64_t b, int64_t s, int64_t h, int skip_form, bool beta,
                bool bias) {
  const bool simplified = op == "SkipSimplifiedLayerNormalization";
  const Shape x = skip_form == 3 ? Shape{b * s, h} : Shape{b, s, h};
  const Shape skip = skip_form == 1 ? Shape{s, h} : skip_form == 2 ? Shape{1, s, h} : x;
  OpTest t = Ms(op,
                {In("input", RandomTensor(kF32, x, rng, -3, 3)), In("skip", RandomTensor(kF32, skip, rng, -3, 3)),
                 Const("gamma", RandomTensor(kF32, {h}, rng, -2, 2))},
                4, {Float("epsilon", 1e-6f)});
  if (!simplified) t.inputs.push_back(beta ? Const("beta", RandomTensor(kF32, {h}, rng)) : Omitted());
  if (bias) t.inputs.push_back(Const("bias", RandomTensor(kF32, {h}, rng)));
  return t;
}

TEST(OrtContribNorm, SkipNormalizationsCpuMatchRef) {
  std::mt19937 rng(6);
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    for (int i = 0; i < 16; ++i) {
      OpTest t = SkipCase(op, rng, EwPick(rng, 1, 3), EwPick(rng, 1, 7), EwPick(rng, 1, 70), i % 4, i % 3 != 0,
                          i % 2 == 0);
      t.threads = 1 + i % 2;
      if (i % 5 == 0) t.num_outputs = 1;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op << " case " << i << " " << DescribeCase(t);
    }
  }
}

TEST(OrtContribNorm, SkipNormalizationsEveryIsaVariantMatchesRef) {
  const struct {
    const char* op;
    const char* kernel;
  } ops[] = {{"SkipLayerNormalization", "cpu.f32_ms_skiplayernormalization__"},
             {"SkipSimplifiedLayerNormalization", "cpu.f32_ms_skipsimplifiedlayernormalization__"},
             {"EmbedLayerNormalization", "cpu.f32_ms_embedlayernormalization__"}};
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    SCOPED_TRACE(v.impl);
    std::mt19937 rng(7);
    for (const auto& o : ops) {
      for (int64_t h : {1, 7, 8, 16, 33, 768}) {
        OpTest t;
        if (std::string(o.op) == "EmbedLayerNormalization") {
          t = Ms(o.op,
                 {In("ids", I32({2, 3}, {0, 4, 2, 1, 1, 3})), Omitted(), Const("we", RandomTensor(kF32, {5, h}, rng)),
                  Const("pe", RandomTensor(kF32, {3, h}, rng)), Const("se", RandomTensor(kF32, {2, h}, rng)),
                  Const("g", RandomTensor(kF32, {h}, rng)), Const("b", RandomTensor(kF32, {h}, rng))},
                 3);
        } else {
          t = SkipCase(o.op, rng, 2, 3, h, 0, true, true);
        }
        EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string(o.kernel) + v.impl + ".1")) << o.op << " h=" << h;
      }
    }
  }
}

TEST(OrtContribNorm, SkipNormalizationsHandValues) {
  // input [1, 2] + skip [1, 2] + bias [0, 1] = S [2, 5]: mean 3.5, variance 2.25 -> (S - 3.5) / 1.5 = [-1, 1];
  // mean(S^2) = 14.5 -> S / sqrt(14.5).
  const OpTest ln = Ms("SkipLayerNormalization",
                       {In("input", F32({1, 2}, {1, 2})), In("skip", F32({1, 2}, {1, 2})),
                        Const("gamma", F32({2}, {2, 3})), Const("beta", F32({2}, {0.5f, 0})),
                        Const("bias", F32({2}, {0, 1}))},
                       4, {Float("epsilon", 0)});
  const OpTest rms = Ms("SkipSimplifiedLayerNormalization",
                        {In("input", F32({1, 2}, {1, 2})), In("skip", F32({1, 2}, {1, 2})),
                         Const("gamma", F32({2}, {2, 3})), Const("bias", F32({2}, {0, 1}))},
                        4, {Float("epsilon", 0)});
  const double r = std::sqrt(14.5);
  for (const char* backend : {"ref", "cpu"}) {
    auto out = RunAlone(ln, backend);
    ExpectValues(out[0].second, {-2 + 0.5, 3}, 1e-5, backend);
    ExpectValues(out[1].second, {3.5}, 1e-6, backend);
    ExpectValues(out[2].second, {1 / 1.5}, 1e-6, backend);
    ExpectValues(out[3].second, {2, 5}, 0, backend);
    out = RunAlone(rms, backend);
    ExpectValues(out[0].second, {4 / r, 15 / r}, 1e-5, backend);
    ExpectValues(out[1].second, {0}, 0, backend);  // no mean: ONNX Runtime writes 0
    ExpectValues(out[2].second, {1 / r}, 1e-6, backend);
    ExpectValues(out[3].second, {2, 5}, 0, backend);
  }
}

TEST(OrtContribNorm, SkipLayerNormalizationHalfPrecisionOnRef) {
  // float16 (ONNX Runtime's CPU kernel computes it in float): ref against its own float computation of the values.
  std::mt19937 rng(8);
  OpTest f16 = Ms("SkipLayerNormalization",
                  {In("input", RandomTensor(DataType::kFloat16, {2, 16}, rng)),
                   In("skip", RandomTensor(DataType::kFloat16, {2, 16}, rng)),
                   Const("gamma", RandomTensor(DataType::kFloat16, {16}, rng))},
                  4);
  OpTest f32 = f16;
  for (OpInput& in : f32.inputs) {
    Tensor t(kF32, in.value.shape());
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = static_cast<float>(ElementAsDouble(in.value, i));
    in.value = t;
  }
  const auto got = RunAlone(f16, "ref"), want = RunAlone(f32, "ref");
  EXPECT_EQ(got[0].second.dtype(), DataType::kFloat16);
  EXPECT_EQ(got[1].second.dtype(), kF32);
  Tensor y(kF32, got[0].second.shape());
  for (int64_t i = 0; i < y.size(); ++i) y.data<float>()[i] = static_cast<float>(ElementAsDouble(got[0].second, i));
  EXPECT_TRUE(TensorsClose(y, want[0].second, 2e-3, 2e-3));
  EXPECT_TRUE(TensorsClose(got[2].second, want[2].second, 1e-6, 1e-6));
}

TEST(OrtContribNorm, SkipLayerNormalizationBadInputsNameTheInput) {
  std::mt19937 rng(9);
  OpTest t = SkipCase("SkipLayerNormalization", rng, 2, 3, 8, 0, true, true);
  t.inputs[4] = Const("bias", RandomTensor(kF32, {4}, rng));
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("input 'bias' of shape [4] has 4 elements, expected 8"), std::string::npos)
        << backend << ": " << ErrorOf(t, backend);
  }
  t = SkipCase("SkipSimplifiedLayerNormalization", rng, 2, 3, 8, 0, false, false);
  t.inputs[1] = In("skip", RandomTensor(kF32, {2, 8}, rng));
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("input 'skip' of shape [2,8] is neither input's shape [2,3,8]"),
              std::string::npos)
        << backend << ": " << ErrorOf(t, backend);
  }
}

// ---- EmbedLayerNormalization (com.microsoft) -----------------------------------------------------------------

// ids [b, s] over a vocabulary of 11, 7 positions, 3 segments; the optional inputs as asked.
OpTest EmbedCase(std::mt19937& rng, int64_t b, int64_t s, int64_t h, bool segments, bool mask, int position_rows) {
  const auto ints = [&](Shape shape, int hi) {
    Tensor t(DataType::kInt32, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(EwPick(rng, 0, hi - 1));
    return t;
  };
  OpTest t = Ms("EmbedLayerNormalization",
                {In("ids", ints({b, s}, 11)), segments ? In("seg", ints({b, s}, 3)) : Omitted(),
                 Const("we", RandomTensor(kF32, {11, h}, rng)), Const("pe", RandomTensor(kF32, {7, h}, rng)),
                 segments ? Const("se", RandomTensor(kF32, {3, h}, rng)) : Omitted(),
                 Const("g", RandomTensor(kF32, {h}, rng, -2, 2)), Const("b", RandomTensor(kF32, {h}, rng)),
                 mask ? In("mask", ints({b, s}, 2)) : Omitted()},
                3, {Float("epsilon", 1e-5f)});
  if (position_rows) t.inputs.push_back(In("pos", ints({position_rows == 1 ? 1 : b, s}, 7)));
  return t;
}

TEST(OrtContribNorm, EmbedLayerNormalizationCpuMatchesRef) {
  std::mt19937 rng(10);
  for (int i = 0; i < 16; ++i) {
    const int64_t b = EwPick(rng, 1, 3), s = EwPick(rng, 1, 7);
    OpTest t = EmbedCase(rng, b, s, EwPick(rng, 1, 80), i % 2 == 0, i % 3 != 0, i % 4 == 3 ? 1 : i % 4 == 1 ? 2 : 0);
    t.threads = 1 + i % 2;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << " " << DescribeCase(t);
  }
}

TEST(OrtContribNorm, EmbedLayerNormalizationHandValues) {
  // epsilon 1. Token (0, 0): word 1 [1, 3] + position 0 [0, 1] + segment 1 [1, 0] = [2, 4]: mean 3, variance 1
  // -> [-1, 1] / sqrt(2) * gamma + beta; token (0, 1): word 0 [0, 0] + position 1 [1, 1] + segment 0 [0, 0] =
  // [1, 1] -> [0, 0] * gamma + beta. mask [1, 0] counts one 1.
  const OpTest t = Ms("EmbedLayerNormalization",
                      {In("ids", I32({1, 2}, {1, 0})), In("seg", I32({1, 2}, {1, 0})),
                       Const("we", F32({2, 2}, {0, 0, 1, 3})), Const("pe", F32({2, 2}, {0, 1, 1, 1})),
                       Const("se", F32({2, 2}, {0, 0, 1, 0})), Const("g", F32({2}, {2, 3})),
                       Const("b", F32({2}, {0.5f, 0.25f})), In("mask", I32({1, 2}, {1, 0}))},
                      3, {Float("epsilon", 1)});
  const double r = std::sqrt(2.0);
  for (const char* backend : {"ref", "cpu"}) {
    const auto out = RunAlone(t, backend);
    ExpectValues(out[0].second, {-2 / r + 0.5, 3 / r + 0.25, 0.5, 0.25}, 1e-5, backend);
    ExpectValues(out[1].second, {1}, 0, backend);
    EXPECT_EQ(out[1].second.dtype(), DataType::kInt32);
    ExpectValues(out[2].second, {2, 4, 1, 1}, 0, backend);
  }
}

TEST(OrtContribNorm, EmbedLayerNormalizationBadIndexIsAnError) {
  std::mt19937 rng(11);
  OpTest t = EmbedCase(rng, 2, 3, 8, true, true, 0);
  t.inputs[0].value.data<int32_t>()[4] = 11;
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("input 'input_ids' element 4 = 11 is out of range [0, 11)"), std::string::npos)
        << backend << ": " << ErrorOf(t, backend);
  }
  t = EmbedCase(rng, 1, 8, 8, false, false, 0);  // 8 tokens, 7 positions, no position_ids
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("input 'position_embedding' has fewer rows than the sequence length 8"),
              std::string::npos)
        << backend << ": " << ErrorOf(t, backend);
  }
}

TEST(OrtContribNorm, EmbedLayerNormalizationHalfPrecisionRunsOnRef) {
  // float16 embeddings: no cpu kernel, ref runs them.
  std::mt19937 rng(12);
  OpTest t = EmbedCase(rng, 2, 3, 8, true, true, 0);
  for (size_t i : {2, 3, 4, 5, 6}) {
    Tensor h(DataType::kFloat16, t.inputs[i].value.shape());
    for (int64_t k = 0; k < h.size(); ++k) h.data<Float16>()[k] = Float16(t.inputs[i].value.data<float>()[k]);
    t.inputs[i].value = h;
  }
  auto session = SessionFor(OneNodeModel(t), {"cpu", "ref"}, false, 1);
  EXPECT_EQ(session->placement().nodes.at(0).backend, "ref");
  const auto out = session->Run(Feeds(t));
  EXPECT_EQ(out[0].second.dtype(), DataType::kFloat16);
  EXPECT_EQ(out[0].second.shape(), (Shape{2, 3, 8}));
}

}  // namespace
}  // namespace ferry::testing
