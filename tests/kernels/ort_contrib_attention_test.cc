// ONNX Runtime's attention ops (group "attention"): com.microsoft Attention, MultiHeadAttention and RotaryEmbedding.
// The cpu kernels against ref (every mask form, past / present, attention_bias broadcasting, causal, every ISA
// variant), hand-computed values on ref and cpu, the cpu refusal of MultiHeadAttention's qk output (falling back to
// ref) and the errors for bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

constexpr DataType kF32 = DataType::kFloat;
constexpr double kRtol = 1e-4, kAtol = 1e-5;

Tensor F32(Shape shape, std::vector<float> v) { return Tensor::FromVector<float>(kF32, std::move(shape), v); }
Tensor I32(Shape shape, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, std::move(shape), v);
}
Tensor I64(Shape shape, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), v);
}

OpTest Ms(std::string op, std::vector<OpInput> in, int outputs, std::vector<onnx::AttributeProto> attrs) {
  return OpTest{.op = std::move(op),
                .domain = "com.microsoft",
                .opset = 1,
                .inputs = std::move(in),
                .attributes = std::move(attrs),
                .num_outputs = outputs,
                .rtol = kRtol,
                .atol = kAtol};
}

void ExpectValues(const Tensor& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(ElementAsDouble(got, static_cast<int64_t>(i)), want[i], tol) << what << " element " << i;
  }
}

std::string ErrorOf(const OpTest& t, const std::string& backend) {
  try {
    RunOn(t, {backend}, true, 1);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A random int32 0/1 mask with about one zero in four (never a row of zeros: key 0 stays visible).
Tensor PaddingMask(Shape shape, std::mt19937& rng) {
  Tensor t(DataType::kInt32, shape);
  const int64_t last = shape.back();
  for (int64_t i = 0; i < t.size(); ++i) t.data<int32_t>()[i] = i % last == 0 || EwPick(rng, 0, 3) != 0 ? 1 : 0;
  return t;
}

// The mask of form `form` (0 none, 1 key lengths [B], 2 end/start [2B] (Attention) or [3B + 2], 3 [B, T],
// 4 [B, S, T]).
OpInput MaskInput(int form, int64_t B, int64_t S, int64_t T, bool attention, std::mt19937& rng) {
  std::vector<int32_t> v;
  switch (form) {
    case 1:
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(EwPick(rng, 1, T)));
      return In("m", I32({B}, v));
    case 2:
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(EwPick(rng, T / 2 + 1, T)));
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(EwPick(rng, 0, T / 2)));
      if (!attention) v.resize(static_cast<size_t>(3 * B + 2), 0);
      return In("m", I32({static_cast<int64_t>(v.size())}, v));
    case 3: return In("m", PaddingMask({B, T}, rng));
    case 4: return In("m", PaddingMask({B, S, T}, rng));
    default: return Omitted();
  }
}

// ---- Attention --------------------------------------------------------------------------------------------------

OpTest RandomAttention(std::mt19937& rng, int i) {
  const int64_t B = EwPick(rng, 1, 3), S = EwPick(rng, 1, 9), N = EwPick(rng, 1, 3), H = EwPick(rng, 1, 9);
  const int64_t Hv = i % 5 == 0 ? EwPick(rng, 1, 9) : H, din = EwPick(rng, 1, 24);
  const bool past = i % 3 == 1 && Hv == H;
  const int64_t P = past ? EwPick(rng, 0, 6) : 0, T = P + S, width = 2 * N * H + N * Hv;
  std::vector<onnx::AttributeProto> attrs = {Int("num_heads", N), Int("unidirectional", i % 2)};
  if (Hv != H) attrs.push_back(Ints("qkv_hidden_sizes", {N * H, N * H, N * Hv}));
  if (i % 4 == 3) attrs.push_back(Float("scale", 0.3f));
  std::vector<OpInput> in = {In("x", RandomTensor(kF32, {B, S, din}, rng, -2, 2)),
                             Const("w", RandomTensor(kF32, {din, width}, rng, -0.5, 0.5)),
                             Const("b", RandomTensor(kF32, {width}, rng)), MaskInput(i % 5, B, S, T, true, rng)};
  in.push_back(past ? In("past", RandomTensor(kF32, {2, B, N, P, H}, rng)) : Omitted());
  if (i % 3 == 2) in.push_back(In("ab", RandomTensor(kF32, {i % 2 ? B : 1, i % 4 < 2 ? N : 1, S, T}, rng)));
  OpTest t = Ms("Attention", std::move(in), past ? 2 : 1, std::move(attrs));
  t.threads = 1 + i % 3;
  return t;
}

TEST(OrtContribAttention, AttentionCpuMatchesRefOnEveryIsa) {
  std::mt19937 rng(1);
  for (const EwVariant& v : {kEwAvx512, kEwAvx2}) {
    if (!EwHostHas(v)) continue;
    for (int i = 0; i < 30; ++i) {
      const OpTest t = RandomAttention(rng, i);
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_ms_attention__") + v.impl + ".1"))
          << v.impl << " case " << i;
    }
  }
}

// x = [[1], [2]] projected by ones: Q = K = V = x, one head of size 1, scale 1. Row 0 scores [1, 2] -> softmax
// [0.26894, 0.73106] -> y 1.73106; row 1 scores [2, 4] -> [0.11920, 0.88080] -> y 1.88080. unidirectional: row 0
// sees key 0 only (y 1). mask_index [1] hides key 1 from both rows (-10000 added): y [1, 1].
TEST(OrtContribAttention, AttentionHandValues) {
  auto make = [](std::vector<OpInput> extra, std::vector<onnx::AttributeProto> attrs) {
    std::vector<OpInput> in = {In("x", F32({1, 2, 1}, {1, 2})), Const("w", F32({1, 3}, {1, 1, 1})),
                               Const("b", F32({3}, {0, 0, 0}))};
    for (auto& e : extra) in.push_back(std::move(e));
    attrs.push_back(Int("num_heads", 1));
    return Ms("Attention", std::move(in), 1, std::move(attrs));
  };
  for (const std::string backend : {"ref", "cpu"}) {
    ExpectValues(RunOn(make({}, {}), {backend}, true, 1)[0].second, {1.7310586, 1.8807971}, 1e-5, backend);
    ExpectValues(RunOn(make({}, {Int("unidirectional", 1)}), {backend}, true, 1)[0].second, {1.0, 1.8807971}, 1e-5,
                 backend + " causal");
    ExpectValues(RunOn(make({In("m", I32({1}, {1}))}, {}), {backend}, true, 1)[0].second, {1.0, 1.0}, 1e-5,
                 backend + " key length 1");
  }
  // No bias (ONNX Runtime's CPU kernel needs one; here it is zero).
  OpTest t = make({}, {});
  t.inputs.pop_back();
  ExpectValues(RunOn(t, {"ref"}, true, 1)[0].second, {1.7310586, 1.8807971}, 1e-5, "no bias");
}

TEST(OrtContribAttention, AttentionErrors) {
  std::vector<OpInput> in = {In("x", F32({1, 2, 2}, {1, 2, 3, 4})), Const("w", F32({2, 6}, std::vector<float>(12, 1))),
                             Const("b", F32({6}, std::vector<float>(6, 0))), In("m", I32({1}, {-1}))};
  OpTest t = Ms("Attention", in, 1, {Int("num_heads", 2)});
  for (const std::string backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("is negative"), std::string::npos) << ErrorOf(t, backend);
  }
  t.inputs[3] = In("m", I32({1, 1, 2, 2}, {1, 1, 1, 1}));
  EXPECT_NE(ErrorOf(t, "ref").find("4-D (Megatron)"), std::string::npos) << ErrorOf(t, "ref");
  t.inputs[3] = In("m", I32({3}, {1, 1, 1}));
  EXPECT_NE(ErrorOf(t, "ref").find("has shape [3], expected [B]"), std::string::npos) << ErrorOf(t, "ref");
}

// ---- MultiHeadAttention -----------------------------------------------------------------------------------------

OpTest RandomMha(std::mt19937& rng, int i) {
  const int64_t B = EwPick(rng, 1, 3), S = EwPick(rng, 1, 8), N = EwPick(rng, 1, 3), H = EwPick(rng, 1, 9);
  const bool bnsh = i % 4 == 1, past = i % 4 == 2, bias = i % 3 != 0;
  const int64_t L = i % 2 ? S : EwPick(rng, 1, 9), Hv = bnsh || i % 5 != 0 ? H : EwPick(rng, 1, 9);
  const int64_t P = past ? EwPick(rng, 0, 5) : 0, T = P + L;
  std::vector<OpInput> in = {In("q", RandomTensor(kF32, {B, S, N * H}, rng, -2, 2))};
  if (bnsh) {
    in.push_back(In("k", RandomTensor(kF32, {B, N, L, H}, rng, -2, 2)));
    in.push_back(In("v", RandomTensor(kF32, {B, N, L, H}, rng)));
  } else {
    in.push_back(In("k", RandomTensor(kF32, {B, L, N * H}, rng, -2, 2)));
    in.push_back(In("v", RandomTensor(kF32, {B, L, N * Hv}, rng)));
  }
  in.push_back(bias ? Const("bias", RandomTensor(kF32, {2 * N * H + N * Hv}, rng)) : Omitted());
  in.push_back(MaskInput(i % 5 == 2 ? 2 : i % 5, B, S, T, false, rng));
  in.push_back(i % 3 == 1 ? In("ab", RandomTensor(kF32, {i % 2 ? B : 1, i % 4 < 2 ? N : 1, S, T}, rng)) : Omitted());
  if (past) {
    in.push_back(In("pk", RandomTensor(kF32, {B, N, P, H}, rng)));
    in.push_back(In("pv", RandomTensor(kF32, {B, N, P, Hv}, rng)));
  }
  std::vector<onnx::AttributeProto> attrs = {Int("num_heads", N), Int("unidirectional", (i / 2) % 2)};
  if (i % 4 == 3) attrs.push_back(Float("scale", 0.5f));
  OpTest t = Ms("MultiHeadAttention", std::move(in), past || i % 6 == 5 ? 3 : 1, std::move(attrs));
  t.threads = 1 + i % 3;
  return t;
}

TEST(OrtContribAttention, MultiHeadAttentionCpuMatchesRefOnEveryIsa) {
  std::mt19937 rng(2);
  for (const EwVariant& v : {kEwAvx512, kEwAvx2}) {
    if (!EwHostHas(v)) continue;
    for (int i = 0; i < 30; ++i) {
      const OpTest t = RandomMha(rng, i);
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_ms_multi_head_attention__") + v.impl + ".1"))
          << v.impl << " case " << i;
    }
  }
}

// The Attention hand case through MultiHeadAttention (query = key = value = [[1], [2]]), and with the qk output (the
// scaled scores before the softmax: [[1, 2], [2, 4]]), which the cpu kernel leaves to ref.
TEST(OrtContribAttention, MultiHeadAttentionHandValuesAndQkFallback) {
  const Tensor x = F32({1, 2, 1}, {1, 2});
  OpTest t = Ms("MultiHeadAttention", {In("q", x), In("k", x), In("v", x)}, 1, {Int("num_heads", 1)});
  for (const std::string backend : {"ref", "cpu"}) {
    ExpectValues(RunOn(t, {backend}, true, 1)[0].second, {1.7310586, 1.8807971}, 1e-5, backend);
  }
  t.num_outputs = 4;
  const auto out = RunOn(t, {"ref"}, true, 1);
  ExpectValues(out[1].second, {1, 2}, 0, "present_key");
  ExpectValues(out[3].second, {1, 2, 2, 4}, 1e-6, "qk");
  ExpectRefusedAndFallsBack(t, "output qk is computed by ref");
}

TEST(OrtContribAttention, MultiHeadAttentionErrors) {
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  OpTest t = Ms("MultiHeadAttention",
                {In("q", x), In("k", x), In("v", x), Omitted(), In("m", I32({2, 3}, {1, 1, 1, 1, 1, 1}))}, 1,
                {Int("num_heads", 2)});
  for (const std::string backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("has shape [2,3]"), std::string::npos) << ErrorOf(t, backend);
  }
  std::mt19937 rng(3);
  t.inputs = {In("q", RandomTensor(kF32, {1, 2, 2, 3, 1}, rng))};
  EXPECT_NE(ErrorOf(t, "ref").find("packed QKV"), std::string::npos) << ErrorOf(t, "ref");
}

// ---- RotaryEmbedding --------------------------------------------------------------------------------------------

TEST(OrtContribAttention, RotaryEmbeddingCpuMatchesRef) {
  std::mt19937 rng(4);
  for (int i = 0; i < 24; ++i) {
    const int64_t B = EwPick(rng, 1, 3), S = EwPick(rng, 1, 7), N = EwPick(rng, 1, 4), D = 2 * EwPick(rng, 1, 12);
    const int64_t rot = i % 3 == 2 ? 2 * EwPick(rng, 1, D / 2) : 0, half = (rot ? rot : D) / 2, max_pos = S + 8;
    const bool four = i % 2 == 1;
    Tensor x = four ? RandomTensor(kF32, {B, N, S, D}, rng) : RandomTensor(kF32, {B, S, N * D}, rng);
    Tensor pos = i % 4 == 0 ? I64({1}, {EwPick(rng, 0, max_pos - S)}) : Tensor(DataType::kInt64, {B, S});
    if (i % 4 != 0) {
      for (int64_t j = 0; j < pos.size(); ++j) pos.data<int64_t>()[j] = EwPick(rng, 0, max_pos - 1);
    }
    std::vector<onnx::AttributeProto> attrs = {Int("interleaved", i % 3 == 1)};
    if (rot) attrs.insert(attrs.end(), {Int("rotary_embedding_dim", rot), Int("num_heads", N)});
    const OpTest t = Ms("RotaryEmbedding",
                        {In("x", x), In("pos", pos), Const("cos", RandomTensor(kF32, {max_pos, half}, rng)),
                         Const("sin", RandomTensor(kF32, {max_pos, half}, rng))},
                        1, attrs);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i;
  }
}

// x = [1, 2] (one head of 2), position start 1: cos row 1 = 0, sin row 1 = 1 -> (c x1 - s x2, s x1 + c x2) = (-2, 1).
TEST(OrtContribAttention, RotaryEmbeddingHandValuesAndErrors) {
  OpTest t = Ms("RotaryEmbedding",
                {In("x", F32({1, 1, 2}, {1, 2})), In("pos", I64({1}, {1})), Const("cos", F32({2, 1}, {1, 0})),
                 Const("sin", F32({2, 1}, {0, 1}))},
                1, {});
  for (const std::string backend : {"ref", "cpu"}) {
    ExpectValues(RunOn(t, {backend}, true, 1)[0].second, {-2, 1}, 1e-6, backend);
  }
  t.inputs[1] = In("pos", I64({1}, {2}));
  for (const std::string backend : {"ref", "cpu"}) {
    EXPECT_NE(ErrorOf(t, backend).find("position_ids start 2 with sequence length 1 exceeds the cache of 2"),
              std::string::npos)
        << ErrorOf(t, backend);
  }
}

}  // namespace
}  // namespace ferry::testing
