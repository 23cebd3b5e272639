// The decompositions of com.microsoft Attention and MultiHeadAttention (group "attention-decompositions") against
// their ref kernels: every mask form ([B] key lengths, [3B + 2], Attention's [2B] end / start positions, [B, T],
// [B, S, T], Attention's dummy [B, 1]) with and without unidirectional, at ai.onnx opsets 11 and 17;
// qkv_hidden_sizes, scale, mask_filter_value, attention_bias broadcasting, past / present, cross attention (L > S),
// MultiHeadAttention's [B, N, L, H] key and value and its qk output, float16; the original model run with --legalize
// on a backend without the ops (fallback forbidden); and each refusal's reason.
#include <random>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

constexpr DataType kF32 = DataType::kFloat;
constexpr int64_t kOpsets[] = {11, 17};

Tensor Rand(Shape shape, uint32_t seed, DataType t = kF32) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(t, std::move(shape), rng, -1, 1);
}

Tensor I32(Shape shape, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, std::move(shape), v);
}

OpTest Ms(std::string op, std::vector<testing::OpInput> in, int outputs, std::vector<onnx::AttributeProto> attrs) {
  OpTest t;
  t.op = std::move(op);
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.num_outputs = outputs;
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

// The mask of form `form`: 0 none, 1 key lengths [B], 2 [3B + 2], 3 end / start [2B] (Attention), 4 [B, T],
// 5 [B, S, T], 6 dummy [B, 1] (Attention). Deterministic, with some zeros in every padded row.
testing::OpInput MaskOf(int form, int64_t B, int64_t S, int64_t T) {
  std::vector<int32_t> v;
  switch (form) {
    case 1:
    case 2:
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(T - 1 - b % T));
      if (form == 2) {
        for (int64_t i = 0; i < 2 * B + 2; ++i) v.push_back(1);  // ignored: only the first B values count
      }
      return In("m", I32({static_cast<int64_t>(v.size())}, v));
    case 3:
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(T - b % 2));
      for (int64_t b = 0; b < B; ++b) v.push_back(static_cast<int32_t>(1 + b % 2));
      return In("m", I32({2 * B}, v));
    case 4:
      for (int64_t i = 0; i < B * T; ++i) v.push_back(i % T == 0 || (i * 7) % 3 != 0 ? 1 : 0);
      return In("m", I32({B, T}, v));
    case 5:
      for (int64_t i = 0; i < B * S * T; ++i) v.push_back(i % T == 0 || (i * 5) % 4 != 1 ? 1 : 0);
      return In("m", I32({B, S, T}, v));
    case 6: return In("m", I32({B, 1}, std::vector<int32_t>(static_cast<size_t>(B), 1)));
    default: return testing::Omitted();
  }
}

// Attention over input [B, S, 8] with weights [8, 3 * 8] (2 heads of 4) and a bias.
OpTest AttentionOf(int64_t B, int64_t S, testing::OpInput mask, std::vector<onnx::AttributeProto> attrs) {
  return Ms("Attention",
            {In("x", Rand({B, S, 8}, 1)), Const("w", Rand({8, 24}, 2)), Const("bias", Rand({24}, 3)), std::move(mask)},
            1, std::move(attrs));
}

TEST(OrtAttentionDecomposition, AttentionMaskForms) {
  const int64_t B = 2, S = 3;
  for (int64_t opset : kOpsets) {
    for (int form = 0; form <= 6; ++form) {
      for (int64_t uni : {0, 1}) {
        const OpTest t = AttentionOf(B, S, MaskOf(form, B, S, S), {Int("num_heads", 2), Int("unidirectional", uni)});
        EXPECT_TRUE(DecompositionMatches(t, opset)) << "opset " << opset << " form " << form << " uni " << uni;
      }
    }
  }
}

TEST(OrtAttentionDecomposition, AttentionHiddenSizesScaleBiasAndFilter) {
  // Q, K of 8 (2 heads of 4), V of 12 (2 heads of 6), no bias input, scale 0.3, attention_bias broadcast over
  // the batch or the heads, and key lengths with mask_filter_value -50.
  const int64_t B = 2, S = 4, N = 2;
  for (const Shape& ab : {Shape{1, N, S, S}, Shape{B, 1, S, S}, Shape{B, N, S, S}}) {
    for (int64_t uni : {0, 1}) {
      const OpTest t = Ms("Attention",
                          {In("x", Rand({B, S, 6}, 4)), Const("w", Rand({6, 28}, 5)), testing::Omitted(),
                           MaskOf(1, B, S, S), testing::Omitted(), In("ab", Rand(ab, 6))},
                          1,
                          {Int("num_heads", N), Ints("qkv_hidden_sizes", {8, 8, 12}), Float("scale", 0.3f),
                           Float("mask_filter_value", -50.0f), Int("unidirectional", uni)});
      EXPECT_TRUE(DecompositionMatches(t, 17)) << ShapeToString(ab) << " uni " << uni;
    }
  }
}

TEST(OrtAttentionDecomposition, AttentionPastAndPresent) {
  // past [2, B, N, P, H] = [2, 2, 2, 2, 4] before 3 new rows (T = 5); present [2, B, N, T, H].
  const int64_t B = 2, S = 3, P = 2, T = P + S;
  for (int64_t opset : kOpsets) {
    for (int form : {0, 4, 1}) {
      for (int64_t uni : {0, 1}) {
        const OpTest t = Ms("Attention",
                            {In("x", Rand({B, S, 8}, 7)), Const("w", Rand({8, 24}, 8)), Const("bias", Rand({24}, 9)),
                             MaskOf(form, B, S, T), In("past", Rand({2, B, 2, P, 4}, 10))},
                            2, {Int("num_heads", 2), Int("unidirectional", uni)});
        EXPECT_TRUE(DecompositionMatches(t, opset)) << "opset " << opset << " form " << form << " uni " << uni;
      }
    }
  }
}

TEST(OrtAttentionDecomposition, AttentionFloat16) {
  constexpr DataType kF16 = DataType::kFloat16;
  const int64_t B = 2, S = 3;
  for (int form : {0, 4, 5}) {
    OpTest t = Ms("Attention",
                  {In("x", Rand({B, S, 8}, 11, kF16)), Const("w", Rand({8, 24}, 12, kF16)),
                   Const("bias", Rand({24}, 13, kF16)), MaskOf(form, B, S, S)},
                  1, {Int("num_heads", 2), Int("unidirectional", 1)});
    t.rtol = t.atol = 2e-3;  // the output's float16 rounding
    EXPECT_TRUE(DecompositionMatches(t, 17)) << "form " << form;
  }
}

// MultiHeadAttention with query [B, S, 8] (2 heads of 4), key [B, L, 8], value [B, L, 12] and a bias of 28.
OpTest MhaOf(int64_t B, int64_t S, int64_t L, testing::OpInput mask, int64_t uni, bool bias) {
  return Ms("MultiHeadAttention",
            {In("q", Rand({B, S, 8}, 21)), In("k", Rand({B, L, 8}, 22)), In("v", Rand({B, L, 12}, 23)),
             bias ? Const("bias", Rand({28}, 24)) : testing::Omitted(), std::move(mask)},
            4, {Int("num_heads", 2), Int("unidirectional", uni)});
}

TEST(OrtAttentionDecomposition, MultiHeadAttentionMaskForms) {
  // Cross attention with L = 5 > S = 3 (unidirectional leaves the last query row seeing every key), and the qk
  // output.
  const int64_t B = 2, S = 3, L = 5;
  for (int64_t opset : kOpsets) {
    for (int form : {0, 1, 2, 4, 5}) {
      for (int64_t uni : {0, 1}) {
        const OpTest t = MhaOf(B, S, L, MaskOf(form, B, S, L), uni, form != 2);
        EXPECT_TRUE(DecompositionMatches(t, opset)) << "opset " << opset << " form " << form << " uni " << uni;
      }
    }
  }
}

TEST(OrtAttentionDecomposition, MultiHeadAttentionPastPresentAndBias) {
  // Self attention S = L = 3 after a past of 2 (T = 5): present_key / present_value, attention_bias, scale.
  const int64_t B = 2, S = 3, P = 2, T = P + S, N = 2;
  for (const Shape& ab : {Shape{B, N, S, T}, Shape{1, 1, S, T}}) {
    for (int64_t uni : {0, 1}) {
      const OpTest t = Ms("MultiHeadAttention",
                          {In("q", Rand({B, S, 8}, 31)), In("k", Rand({B, S, 8}, 32)), In("v", Rand({B, S, 12}, 33)),
                           Const("bias", Rand({28}, 34)), MaskOf(4, B, S, T), In("ab", Rand(ab, 35)),
                           In("pk", Rand({B, N, P, 4}, 36)), In("pv", Rand({B, N, P, 6}, 37))},
                          4, {Int("num_heads", N), Int("unidirectional", uni), Float("scale", 0.7f)});
      EXPECT_TRUE(DecompositionMatches(t, 17)) << ShapeToString(ab) << " uni " << uni;
    }
  }
}

TEST(OrtAttentionDecomposition, MultiHeadAttentionBnshKeyValue) {
  // key and value [B, N, L, H] used as they are (only query takes its part of the bias).
  const int64_t B = 2, S = 3, L = 4, N = 2;
  for (int form : {0, 1, 5}) {
    const OpTest t = Ms("MultiHeadAttention",
                        {In("q", Rand({B, S, 8}, 41)), In("k", Rand({B, N, L, 4}, 42)), In("v", Rand({B, N, L, 4}, 43)),
                         Const("bias", Rand({24}, 44)), MaskOf(form, B, S, L), In("ab", Rand({1, N, S, L}, 45))},
                        4, {Int("num_heads", N)});
    EXPECT_TRUE(DecompositionMatches(t, 17)) << "form " << form;
  }
}

TEST(OrtAttentionDecomposition, MultiHeadAttentionFloat16) {
  OpTest t = MhaOf(2, 3, 4, MaskOf(4, 2, 3, 4), 1, true);
  for (testing::OpInput& in : t.inputs) {
    if (!in.name.empty() && in.name != "m") {
      in.value = Rand(in.value.shape(), static_cast<uint32_t>(in.value.size()), DataType::kFloat16);
    }
  }
  t.num_outputs = 3;
  t.rtol = t.atol = 2e-3;
  EXPECT_TRUE(DecompositionMatches(t, 17));
}

// ref less the two ops: --legalize must pick the decompositions.
const char* const kNoOrtAttention = "legalize_no_ort_attention";

// The model `bytes` (of `t`'s inputs) run with --legalize on kNoOrtAttention, fallback forbidden, against ref.
void ExpectLegalizedMatches(const OpTest& t, const std::string& bytes) {
  static const bool registered = [] {
    RegisterBackend(
        std::make_unique<PartialRefBackend>(kNoOrtAttention, std::set<std::string>{"Attention", "MultiHeadAttention"}));
    return true;
  }();
  (void)registered;
  EXPECT_THROW(SessionOf(bytes, On({kNoOrtAttention}, false, false)), Error) << t.op;
  const auto got = SessionOf(bytes, On({kNoOrtAttention}, true, false))->Run(testing::Feeds(t));
  const auto want = SessionOf(bytes, On({"ref"}))->Run(testing::Feeds(t));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, t.rtol, t.atol)) << t.op << " output " << i;
  }
}

TEST(OrtAttentionDecomposition, LegalizeRunsWithoutTheKernels) {
  const std::vector<OpTest> cases = {
      AttentionOf(2, 3, MaskOf(1, 2, 3, 3), {Int("num_heads", 2), Int("unidirectional", 1)}),
      MhaOf(2, 3, 4, MaskOf(5, 2, 3, 4), 0, true)};
  for (const OpTest& t : cases) ExpectLegalizedMatches(t, WithOnnxImport(testing::OneNodeModel(t), 17));
}

// ---- refusals ----

// `bytes` with input `name`'s dims `dims` made symbolic.
std::string Symbolic(const std::string& bytes, const std::string& name, const std::vector<int>& dims) {
  onnx::ModelProto m;
  m.ParseFromString(bytes);
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (in.name() != name) continue;
    for (int d : dims)
      in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(d)->set_dim_param("d" + std::to_string(d));
  }
  return m.SerializeAsString();
}

std::string Refusal(const std::string& bytes) {
  auto model = Import(bytes);
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), 17);
  EXPECT_EQ(c.decomposition, nullptr) << c.reason;
  return c.reason;
}

std::string Refusal(const OpTest& t) { return Refusal(WithOnnxImport(testing::OneNodeModel(t), 17)); }

TEST(OrtAttentionDecomposition, AttentionRefusals) {
  auto with = [](std::vector<onnx::AttributeProto> attrs) {
    attrs.push_back(Int("num_heads", 2));
    return AttentionOf(2, 3, testing::Omitted(), std::move(attrs));
  };
  EXPECT_EQ(Refusal(with({Int("do_rotary", 1)})), "Attention: do_rotary = 1 is not implemented");
  EXPECT_EQ(Refusal(with({Int("past_present_share_buffer", 1)})),
            "Attention: past_present_share_buffer = 1 is not implemented");
  OpTest seq = with({});
  seq.inputs.push_back(testing::Omitted());
  seq.inputs.push_back(testing::Omitted());
  seq.inputs.push_back(In("psl", I32({1}, {0})));
  EXPECT_EQ(Refusal(seq), "Attention: input past_sequence_length is not implemented");
  OpTest megatron = with({});
  megatron.inputs[3] = In("m", I32({2, 1, 4, 4}, std::vector<int32_t>(32, 1)));
  EXPECT_EQ(Refusal(megatron),
            "Attention: mask_index: a 4-D (Megatron) mask is not implemented (ONNX Runtime's CPU kernel refuses it "
            "too)");
  OpTest present = Ms("Attention", {In("x", Rand({2, 3, 8}, 1)), Const("w", Rand({8, 28}, 2))}, 2,
                      {Int("num_heads", 2), Ints("qkv_hidden_sizes", {8, 8, 12})});
  EXPECT_EQ(Refusal(present), "Attention: output present needs K and V of one hidden size");
  // A mask over a symbolic sequence length; unidirectional over one; weights of a symbolic width.
  const OpTest masked = AttentionOf(2, 3, MaskOf(4, 2, 3, 3), {Int("num_heads", 2)});
  EXPECT_EQ(Refusal(Symbolic(WithOnnxImport(testing::OneNodeModel(masked), 17), "x", {1})),
            "Attention: mask_index needs static shapes (the mask's, batch, sequence, past and key lengths)");
  const OpTest uni = with({Int("unidirectional", 1)});
  EXPECT_EQ(Refusal(Symbolic(WithOnnxImport(testing::OneNodeModel(uni), 17), "x", {1})),
            "Attention: unidirectional needs the sequence and past lengths known statically");
  OpTest weights = with({});
  weights.inputs[1] = In("w", Rand({8, 24}, 2));
  EXPECT_EQ(Refusal(Symbolic(WithOnnxImport(testing::OneNodeModel(weights), 17), "w", {1})),
            "Attention: weights' dim 1 is not static (and no qkv_hidden_sizes)");
  const OpTest odd = AttentionOf(2, 3, In("m", I32({5}, {1, 1, 1, 1, 1})), {Int("num_heads", 2)});
  EXPECT_EQ(Refusal(odd),
            "Attention: mask_index has shape [5], not [B], [2B], [3B + 2], [B, T] or [B, S, T] (B = 2, S = 3, T = 3)");
}

TEST(OrtAttentionDecomposition, MultiHeadAttentionRefusals) {
  const int64_t B = 2, S = 3, L = 4, N = 2;
  const OpTest packed_kv = Ms("MultiHeadAttention", {In("q", Rand({B, S, 8}, 1)), In("k", Rand({B, L, N, 2, 4}, 2))}, 1,
                              {Int("num_heads", N)});
  EXPECT_EQ(Refusal(packed_kv), "MultiHeadAttention: packed KV (a 5-D key) is not implemented");
  const OpTest packed_qkv = Ms("MultiHeadAttention", {In("q", Rand({B, S, N, 3, 4}, 1))}, 1, {Int("num_heads", N)});
  EXPECT_EQ(Refusal(packed_qkv), "MultiHeadAttention: packed QKV (a 5-D query) is not implemented");
  const OpTest bnsh_past = Ms("MultiHeadAttention",
                              {In("q", Rand({B, S, 8}, 1)), In("k", Rand({B, N, L, 4}, 2)),
                               In("v", Rand({B, N, L, 4}, 3)), testing::Omitted(), testing::Omitted(),
                               testing::Omitted(), In("pk", Rand({B, N, 2, 4}, 4)), In("pv", Rand({B, N, 2, 4}, 5))},
                              1, {Int("num_heads", N)});
  EXPECT_EQ(Refusal(bnsh_past), "MultiHeadAttention: a past with [B, N, L, H] key and value is not implemented");
  OpTest cache = MhaOf(B, S, L, testing::Omitted(), 0, true);
  cache.num_outputs = 1;
  for (int i = 0; i < 4; ++i) cache.inputs.push_back(testing::Omitted());
  cache.inputs.push_back(In("ci", I32({B, 1, 1}, {0, 0})));
  EXPECT_EQ(Refusal(cache), "MultiHeadAttention: input cache_indirection is not implemented");
  const OpTest end_start = MhaOf(B, S, L, MaskOf(3, B, S, L), 0, true);
  EXPECT_EQ(Refusal(end_start),
            "MultiHeadAttention: key_padding_mask has shape [4], not [B], [3B + 2], [B, T] or [B, S, T] (B = 2, S = 3, "
            "T = 4)");
  const OpTest hidden = MhaOf(B, S, L, testing::Omitted(), 0, false);
  EXPECT_EQ(Refusal(Symbolic(WithOnnxImport(testing::OneNodeModel(hidden), 17), "q", {2})),
            "MultiHeadAttention: query's hidden size is not static");
}

TEST(OrtAttentionDecomposition, SymbolicBatchAndSequenceWithoutAMask) {
  // Without a mask or unidirectional, batch and sequence may stay symbolic.
  const OpTest att = AttentionOf(2, 3, testing::Omitted(), {Int("num_heads", 2)});
  const std::string att_bytes = Symbolic(WithOnnxImport(testing::OneNodeModel(att), 17), "x", {0, 1});
  EXPECT_NE(legalize::ChooseDecomposition(*Import(att_bytes)->graph->nodes().front(), 17).decomposition, nullptr);
  ExpectLegalizedMatches(att, att_bytes);
  const OpTest mha = MhaOf(2, 3, 4, testing::Omitted(), 0, true);
  std::string bytes = WithOnnxImport(testing::OneNodeModel(mha), 17);
  for (const char* in : {"q", "k", "v"}) bytes = Symbolic(bytes, in, {0, 1});
  EXPECT_NE(legalize::ChooseDecomposition(*Import(bytes)->graph->nodes().front(), 17).decomposition, nullptr);
  ExpectLegalizedMatches(mha, bytes);
}

}  // namespace
}  // namespace ferry::legalize_test
