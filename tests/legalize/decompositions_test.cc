// Each decomposition against its op's ref kernel: random inputs over the attribute cases the rule handles, the
// decomposed graph run on ref, on cpu,ref and on a backend that lacks the op (tolerance 1e-5 relative, 1e-4 for
// Attention and GroupNormalization); and each rule's refusals, with their reasons.
#include <cmath>
#include <random>

#include "legalize_test_util.h"
#include "testing/model_builder.h"

namespace ferry::legalize_test {
namespace {

constexpr DataType kF32 = DataType::kFloat;

Tensor Rand(Shape shape, double lo = -2, double hi = 2, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(kF32, std::move(shape), rng, lo, hi);
}

Tensor Int64s(Shape shape, std::vector<int64_t> v) { return Tensor::FromVector(DataType::kInt64, std::move(shape), v); }

Tensor Bools(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t(DataType::kBool, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.data<bool>()[i] = (rng() % 4) != 0;
  return t;
}

OpTest Op(std::string op, int64_t opset, std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {},
          int outputs = 1) {
  OpTest t;
  t.op = std::move(op);
  t.opset = opset;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.num_outputs = outputs;
  t.rtol = 1e-5;
  t.atol = 1e-6;
  return t;
}

OpTest FerryOp(std::string op, std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t = Op(std::move(op), 1, std::move(in), std::move(attrs));
  t.domain = "ai.ferry";
  return t;
}

// The refusal of every rule for the one-node model of `t` (at the model's ai.onnx opset), "" when one accepts.
std::string Refusal(const OpTest& t, int64_t onnx_opset = 0) {
  std::string bytes = testing::OneNodeModel(t);
  if (onnx_opset > 0) bytes = WithOnnxImport(bytes, onnx_opset);
  auto model = Import(bytes);
  const legalize::Choice c =
      legalize::ChooseDecomposition(*model->graph->nodes().front(), legalize::OnnxOpset(*model));
  return c.decomposition ? "" : c.reason;
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- LayerNormalization -------------------------------------------------------------------------------------

TEST(LegalizeDecomposition, LayerNormalizationLastAxisIsItsDefinition) {
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(Op("LayerNormalization", 17,
                                      {In("x", Rand({2, 3, 8})), Const("s", Rand({8}, -1, 1, 2)),
                                       Const("b", Rand({8}, -1, 1, 3))}),
                                   0, &ops));
  EXPECT_EQ(ops, "ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul Add");
}

TEST(LegalizeDecomposition, LayerNormalizationOverTwoAxesWithStatistics) {
  // axis 1 of [2, 3, 4]: the normalized dims are [3, 4]; Mean and InvStdDev are read too; opset 18 (axes input).
  for (int64_t opset : {17, 18}) {
    EXPECT_TRUE(DecompositionMatches(Op("LayerNormalization", opset,
                                        {In("x", Rand({2, 3, 4}, -3, 3)), In("s", Rand({3, 4}, -1, 1, 4))},
                                        {Int("axis", 1), Float("epsilon", 1e-3f)}, 3)))
        << "opset " << opset;
  }
}

TEST(LegalizeDecomposition, FerryLayerNormalizationAtAnOldOpset) {
  // ai.ferry::LayerNormalization in an opset-13 model: ReduceMean takes its axes as an attribute there.
  OpTest t = FerryOp("LayerNormalization",
                     {In("x", Rand({4, 16})), Const("s", Rand({16}, -1, 1, 5)), Const("b", Rand({16}, -1, 1, 6))});
  EXPECT_TRUE(DecompositionMatches(t, 13));
}

TEST(LegalizeDecomposition, HalfPrecisionLayerNormalizationIsNormalizedInFloat) {
  std::mt19937 rng(4);
  OpTest t = Op("LayerNormalization", 17,
                {In("x", testing::RandomTensor(DataType::kFloat16, {3, 16}, rng, -2, 2)),
                 In("s", testing::RandomTensor(DataType::kFloat16, {16}, rng, -1, 1)),
                 In("b", testing::RandomTensor(DataType::kFloat16, {16}, rng, -1, 1))});
  t.rtol = 4e-3;  // the ref kernel rounds once, the rule after the normalization and after the scale
  t.atol = 4e-3;
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(t, 0, &ops));
  EXPECT_EQ(ops, "Cast ReduceMean Sub Mul ReduceMean Add Sqrt Div Cast Mul Add");
}

TEST(LegalizeDecomposition, FerrySkipLayerNormalizationWithSum) {
  // X [2, 3, 8] + Skip [3, 8] (X's trailing dims), gamma and beta [8]; Y and Sum both read.
  OpTest t = FerryOp("SkipLayerNormalization", {In("x", Rand({2, 3, 8})), In("skip", Rand({3, 8}, -1, 1, 2)),
                                                Const("g", Rand({8}, -1, 1, 3)), Const("b", Rand({8}, -1, 1, 4))},
                     {Float("epsilon", 1e-4f)});
  t.num_outputs = 2;
  EXPECT_TRUE(DecompositionMatches(t, 17));
}

// ---- RMSNormalization, GroupNormalization ------------------------------------------------------------------

TEST(LegalizeDecomposition, RMSNormalizationLastAxisAndTwoAxes) {
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(
      Op("RMSNormalization", 23, {In("x", Rand({2, 5, 8})), Const("s", Rand({8}, -1, 1, 7))}), 0, &ops));
  EXPECT_EQ(ops, "Mul ReduceMean Add Sqrt Div Mul");
  EXPECT_TRUE(DecompositionMatches(Op("RMSNormalization", 23, {In("x", Rand({2, 5, 8})), In("s", Rand({5, 8}))},
                                      {Int("axis", -2), Float("epsilon", 1e-2f)})));
  EXPECT_TRUE(DecompositionMatches(FerryOp("RMSNormalization", {In("x", Rand({3, 8})), Const("s", Rand({8}))}), 17));
}

TEST(LegalizeDecomposition, GroupNormalizationPerGroupAndPerChannel) {
  // Opset 18: scale and bias per group; 21: per channel. Rank 4 and rank 3.
  for (int64_t opset : {18, 21}) {
    const int64_t params = opset >= 21 ? 6 : 3;
    OpTest t = Op("GroupNormalization", opset,
                  {In("x", Rand({2, 6, 4, 3}, -3, 3)), Const("s", Rand({params}, -1, 1, 8)),
                   Const("b", Rand({params}, -1, 1, 9))},
                  {Int("num_groups", 3), Float("epsilon", 1e-4f)});
    t.rtol = 1e-4;
    EXPECT_TRUE(DecompositionMatches(t)) << "opset " << opset;
    t.inputs[0] = In("x", Rand({3, 6, 5}, -3, 3));
    EXPECT_TRUE(DecompositionMatches(t)) << "rank 3, opset " << opset;
  }
}

TEST(LegalizeDecomposition, GroupNormalizationWithSymbolicDimsViewsBackThroughShape) {
  // X [N, 4, H, W] with H and W symbolic: the view back to X's shape is Reshape(Shape(X)).
  testing::ModelBuilder b(21);
  b.InputSym("x", onnx::TensorProto::FLOAT, {2, 4, -1, -1}, "H");
  b.FloatInitializer("s", {4}, {0.5f, 1.0f, 1.5f, -1.0f}).FloatInitializer("c", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  testing::ModelBuilder::IntAttr(b.Node("GroupNormalization", {"x", "s", "c"}, {"y"}), "num_groups", 2);
  b.graph().add_output()->set_name("y");
  std::string ops;
  const std::string decomposed = Decomposed(b.Bytes(), nullptr, &ops);
  EXPECT_TRUE(Contains(ops, "Shape Reshape")) << ops;
  const std::vector<std::pair<std::string, Tensor>> feeds = {{"x", Rand({2, 4, 3, 5})}};
  const auto want = SessionOf(b.Bytes(), On({"ref"}))->Run(feeds);
  const auto got = SessionOf(decomposed, On({"ref"}))->Run(feeds);
  EXPECT_TRUE(testing::TensorsClose(got[0].second, want[0].second, 1e-4, 1e-6));
}

// ---- activations --------------------------------------------------------------------------------------------

TEST(LegalizeDecomposition, GeluErfAndTanh) {
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(Op("Gelu", 20, {In("x", Rand({4, 33}, -6, 6))}), 0, &ops));
  EXPECT_EQ(ops, "Mul Mul Erf Add Mul");
  EXPECT_TRUE(DecompositionMatches(Op("Gelu", 20, {In("x", Rand({4, 33}, -6, 6))}, {Str("approximate", "tanh")})));
  // ai.ferry::Gelu in an opset-11 model.
  EXPECT_TRUE(DecompositionMatches(FerryOp("Gelu", {In("x", Rand({50}, -6, 6))}, {Str("approximate", "tanh")}), 11));
  EXPECT_TRUE(DecompositionMatches(FerryOp("Gelu", {In("x", Rand({50}, -6, 6))}), 11));
}

TEST(LegalizeDecomposition, HardSwishMishSoftplus) {
  EXPECT_TRUE(DecompositionMatches(Op("HardSwish", 14, {In("x", Rand({64}, -5, 5))})));
  EXPECT_TRUE(DecompositionMatches(Op("HardSwish", 22, {In("x", Rand({64}, -5, 5))})));
  // Mish over a wide range: large x (the clamp at 20), large negative x (x e^x, no log(1 + e) rounding).
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(Op("Mish", 18, {In("x", Rand({256}, -40, 40))}), 0, &ops));
  EXPECT_EQ(ops, "Clip Exp Add Mul Add Div Mul");
  // Softplus: log(1 + e) rounds to 1e-7 absolute for very negative x, hence a 1e-6 absolute floor.
  EXPECT_TRUE(DecompositionMatches(Op("Softplus", 17, {In("x", Rand({256}, -30, 30))})));
}

// ---- RotaryEmbedding ------------------------------------------------------------------------------------------

// cos/sin caches of `rows` positions, `half` values each, as rotary embeddings make them.
std::pair<Tensor, Tensor> Caches(Shape shape) {
  Tensor c(kF32, shape), s(kF32, shape);
  for (int64_t i = 0; i < c.size(); ++i) {
    const float angle = 0.37f * static_cast<float>(i % 97) + 0.05f * static_cast<float>(i / 97);
    c.data<float>()[i] = std::cos(angle);
    s.data<float>()[i] = std::sin(angle);
  }
  return {c, s};
}

TEST(LegalizeDecomposition, RotaryEmbedding4DWithPositionIds) {
  // [B, H, S, D] = [2, 3, 4, 8], caches [max_pos 10, 4], position_ids [2, 4]; interleaved and not.
  auto [cos, sin] = Caches({10, 4});
  for (int64_t interleaved : {0, 1}) {
    OpTest t = Op("RotaryEmbedding", 23,
                  {In("x", Rand({2, 3, 4, 8})), Const("cos", cos), Const("sin", sin),
                   In("pos", Int64s({2, 4}, {0, 1, 2, 3, 9, 7, 5, 0}))},
                  {Int("interleaved", interleaved)});
    EXPECT_TRUE(DecompositionMatches(t)) << "interleaved " << interleaved;
  }
}

TEST(LegalizeDecomposition, RotaryEmbedding3DPartialWithoutPositionIds) {
  // [B, S, H*D] = [2, 3, 2*8], num_heads 2, rotary_embedding_dim 4 (features 4..7 kept); caches [B, S, 2].
  auto [cos, sin] = Caches({2, 3, 2});
  for (int64_t interleaved : {0, 1}) {
    OpTest t = Op("RotaryEmbedding", 23, {In("x", Rand({2, 3, 16})), In("cos", cos), In("sin", sin)},
                  {Int("interleaved", interleaved), Int("num_heads", 2), Int("rotary_embedding_dim", 4)});
    EXPECT_TRUE(DecompositionMatches(t)) << "interleaved " << interleaved;
  }
}

// ---- Attention ------------------------------------------------------------------------------------------------

OpTest Attention(std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {}, int outputs = 1) {
  OpTest t = Op("Attention", 23, std::move(in), std::move(attrs), outputs);
  t.rtol = 1e-4;
  t.atol = 1e-5;
  return t;
}

TEST(LegalizeDecomposition, Attention4D) {
  // Q [2, 2, 3, 4], K/V [2, 2, 5, 4]: no mask; then a scale, a softcap.
  EXPECT_TRUE(DecompositionMatches(Attention({In("q", Rand({2, 2, 3, 4})), In("k", Rand({2, 2, 5, 4}, -2, 2, 2)),
                                              In("v", Rand({2, 2, 5, 4}, -2, 2, 3))})));
  EXPECT_TRUE(DecompositionMatches(Attention({In("q", Rand({1, 2, 3, 4})), In("k", Rand({1, 2, 5, 4}, -2, 2, 2)),
                                              In("v", Rand({1, 2, 5, 6}, -2, 2, 3))},
                                             {Float("scale", 0.3f), Float("softcap", 2.0f)})));
}

TEST(LegalizeDecomposition, Attention3DGroupedQueryWithBoolMask) {
  // 3-D: Q [2, 3, 4*4], K/V [2, 5, 2*4]: 4 query heads read 2 kv heads; bool mask [3, 5] (no fully masked row).
  Tensor mask = Bools({3, 5}, 4);
  for (int64_t i = 0; i < 3; ++i) mask.data<bool>()[i * 5] = true;
  EXPECT_TRUE(DecompositionMatches(Attention({In("q", Rand({2, 3, 16})), In("k", Rand({2, 5, 8}, -2, 2, 2)),
                                              In("v", Rand({2, 5, 8}, -2, 2, 3)), In("m", mask)},
                                             {Int("q_num_heads", 4), Int("kv_num_heads", 2)})));
}

TEST(LegalizeDecomposition, AttentionCausalWithPastAndAdditiveMask) {
  // 4-D with past_key/past_value [1, 2, 2, 4] (present outputs read), causal, an additive mask [1, 1, 3, 5], every
  // output including qk_matmul_output in each mode.
  for (int64_t mode : {0, 1, 2, 3}) {
    OpTest t = Attention({In("q", Rand({1, 2, 3, 4})), In("k", Rand({1, 2, 3, 4}, -2, 2, 2)),
                          In("v", Rand({1, 2, 3, 4}, -2, 2, 3)), In("m", Rand({1, 1, 3, 5}, -1, 1, 4)),
                          In("pk", Rand({1, 2, 2, 4}, -2, 2, 5)), In("pv", Rand({1, 2, 2, 4}, -2, 2, 6))},
                         {Int("is_causal", 1), Int("qk_matmul_output_mode", mode), Float("softcap", 3.0f)}, 4);
    EXPECT_TRUE(DecompositionMatches(t)) << "mode " << mode;
  }
}

TEST(LegalizeDecomposition, AttentionRowTheMaskHidesGivesZero) {
  // Row 1 of the bool mask is false everywhere: p = 0 there (Y = 0, qk_matmul_output mode 3 = 0), not NaN.
  Tensor mask = Bools({3, 5}, 5);
  for (int64_t j = 0; j < 5; ++j) {
    mask.data<bool>()[j] = true;
    mask.data<bool>()[5 + j] = false;
  }
  EXPECT_TRUE(DecompositionMatches(Attention({In("q", Rand({1, 2, 3, 4})), In("k", Rand({1, 2, 5, 4}, -2, 2, 2)),
                                              In("v", Rand({1, 2, 5, 4}, -2, 2, 3)), In("m", mask)},
                                             {Int("qk_matmul_output_mode", 3)}, 4)));
}

TEST(LegalizeDecomposition, AttentionNonpadKvSeqlen) {
  // Opset 24: keys at or past nonpad_kv_seqlen[b] are padding; with is_causal the frontier is per batch
  // (nonpad[b] - Sq); batch 1's lengths hide whole rows under the causal frontier (p = 0 there).
  for (int64_t causal : {0, 1}) {
    OpTest t = Attention({In("q", Rand({2, 2, 3, 4})), In("k", Rand({2, 2, 5, 4}, -2, 2, 2)),
                          In("v", Rand({2, 2, 5, 4}, -2, 2, 3)), Omitted(), Omitted(), Omitted(),
                          In("n", Int64s({2}, {5, 2}))},
                         {Int("is_causal", causal)});
    t.opset = 24;
    EXPECT_TRUE(DecompositionMatches(t)) << "causal " << causal;
  }
}

TEST(LegalizeDecomposition, AttentionMaskShorterThanTheKeysIsPadded) {
  // Keys 5 long, bool mask [3, 4]: the 5th key is masked (padding with false / -inf).
  Tensor mask = Bools({3, 4}, 7);
  for (int64_t i = 0; i < 3; ++i) mask.data<bool>()[i * 4 + 1] = true;
  EXPECT_TRUE(DecompositionMatches(Attention({In("q", Rand({1, 1, 3, 4})), In("k", Rand({1, 1, 5, 4}, -2, 2, 2)),
                                              In("v", Rand({1, 1, 5, 4}, -2, 2, 3)), In("m", mask)})));
}

TEST(LegalizeDecomposition, FerryAttentionAndFusedOps) {
  OpTest a = FerryOp("Attention", {In("q", Rand({2, 3, 4})), In("k", Rand({2, 5, 4}, -2, 2, 2)),
                                   In("v", Rand({2, 5, 6}, -2, 2, 3)), In("m", Rand({3, 5}, -1, 1, 4))},
                     {Float("scale", 0.5f)});
  a.rtol = 1e-4;
  EXPECT_TRUE(DecompositionMatches(a, 17));
  // FusedMatMul with a bias and each activation, at opset 17 (HardSwish an op there, Gelu and Mish primitives)
  // and 20 (Gelu and Mish ops).
  const std::vector<std::pair<std::string, std::vector<float>>> acts = {
      {"", {}},         {"Relu", {}},         {"LeakyRelu", {0.2f}}, {"Clip", {-0.5f, 0.7f}}, {"Sigmoid", {}},
      {"Tanh", {}},     {"HardSigmoid", {}},  {"HardSwish", {}},     {"Silu", {}},            {"Gelu", {}},
      {"GeluTanh", {}}, {"Mish", {}}};
  for (const auto& [act, params] : acts) {
    for (int64_t opset : {17, 20}) {
      std::vector<onnx::AttributeProto> attrs = {Str("activation", act)};
      if (!params.empty()) attrs.push_back(testing::Floats("activation_params", params));
      OpTest t = FerryOp("FusedMatMul",
                         {In("a", Rand({3, 5})), Const("b", Rand({5, 4}, -1, 1, 2)), Const("c", Rand({4}, -1, 1, 3))},
                         attrs);
      EXPECT_TRUE(DecompositionMatches(t, opset)) << act << " at opset " << opset;
    }
  }
  OpTest conv = FerryOp("FusedConv",
                        {In("x", Rand({1, 2, 5, 5})), Const("w", Rand({3, 2, 3, 3}, -1, 1, 2)),
                         Const("b", Rand({3}, -1, 1, 3)), In("z", Rand({1, 3, 5, 5}, -1, 1, 4))},
                        {Ints("pads", {1, 1, 1, 1}), Str("activation", "Relu")});
  EXPECT_TRUE(DecompositionMatches(conv, 17));
}

// FusedConv {Mish} (YOLOv4's conv + Mish) back to Conv, Add and Mish: the Mish op from opset 18, before it
// BuildMish's primitives (Clip, Exp, Add, Mul, Add, Div, Mul), over inputs wide enough to reach its clamp at 20.
TEST(LegalizeDecomposition, FusedConvWithMish) {
  for (int64_t opset : {17, 18}) {
    OpTest conv = FerryOp("FusedConv",
                          {In("x", Rand({1, 3, 6, 6}, -4, 4)), Const("w", Rand({4, 3, 3, 3}, -1, 1, 2)),
                           Const("b", Rand({4}, -1, 1, 3)), In("z", Rand({1, 4, 6, 6}, -30, 30, 4))},
                          {Ints("pads", {1, 1, 1, 1}), Str("activation", "Mish")});
    conv.rtol = 1e-5;
    conv.atol = 1e-5;
    std::string ops;
    EXPECT_TRUE(DecompositionMatches(conv, opset, &ops)) << "opset " << opset;
    EXPECT_EQ(ops, opset >= 18 ? "Conv Add Mish" : "Conv Add Clip Exp Add Mul Add Div Mul") << "opset " << opset;
  }
}

// ---- refusals --------------------------------------------------------------------------------------------------

TEST(LegalizeDecomposition, RefusalsSayWhy) {
  EXPECT_TRUE(Contains(Refusal(Op("Gelu", 20, {In("x", Rand({4}))}, {Str("approximate", "cubic")})),
                       "approximate='cubic' is unknown"));
  // Erf before opset 9: ai.ferry::Gelu in an opset-8 model.
  EXPECT_TRUE(Contains(Refusal(FerryOp("Gelu", {In("x", Rand({4}))}), 8), "Erf needs ai.onnx opset 9"));
  EXPECT_TRUE(Contains(Refusal(Op("GroupNormalization", 21, {In("x", Rand({1, 6, 2})), In("s", Rand({6})),
                                                             In("b", Rand({6}))},
                                  {Int("num_groups", 4)})),
                       "not divisible by num_groups"));
  EXPECT_TRUE(Contains(Refusal(Op("RotaryEmbedding", 23,
                                  {In("x", Rand({1, 1, 2, 8})), In("c", Rand({1, 2, 3})), In("s", Rand({1, 2, 3}))},
                                  {Int("rotary_embedding_dim", 3)})),
                       "is odd or exceeds the head size"));
  EXPECT_TRUE(Contains(Refusal(Op("RotaryEmbedding", 23, {In("x", Rand({1, 2, 8})), In("c", Rand({1, 2, 4})),
                                                          In("s", Rand({1, 2, 4}))})),
                       "a 3-D input needs num_heads"));
  // Attention: K of another type than Q, 3-D without head counts.
  std::mt19937 rng(3);
  const Tensor h = testing::RandomTensor(DataType::kFloat16, {1, 1, 2, 4}, rng);
  EXPECT_TRUE(Contains(Refusal(Attention({In("q", h), In("k", Rand({1, 1, 2, 4})), In("v", h)})),
                       "K and V of another element type than Q"));
  EXPECT_TRUE(Contains(Refusal(Attention({In("q", Rand({1, 2, 3})), In("k", Rand({1, 2, 3})),
                                          In("v", Rand({1, 2, 3}))})),
                       "3-D inputs need q_num_heads and kv_num_heads"));
  // An op no rule knows.
  EXPECT_TRUE(Contains(Refusal(Op("Relu", 17, {In("x", Rand({4}))})), "no decomposition of Relu"));
}

TEST(LegalizeDecomposition, CausalAttentionOverSymbolicLengthsIsRefused) {
  testing::ModelBuilder b(23);
  for (const char* name : {"q", "k", "v"}) b.InputSym(name, onnx::TensorProto::FLOAT, {1, 2, -1, 4}, "S");
  testing::ModelBuilder::IntAttr(b.Node("Attention", {"q", "k", "v"}, {"y"}), "is_causal", 1);
  b.graph().add_output()->set_name("y");
  auto model = Import(b.Bytes());
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), 23);
  EXPECT_EQ(c.decomposition, nullptr);
  EXPECT_TRUE(Contains(c.reason, "is_causal needs static query and key lengths")) << c.reason;
}

TEST(LegalizeDecomposition, EveryRuleHasADescriptionNamingItsOp) {
  for (const legalize::Decomposition& d : legalize::AllDecompositions()) {
    EXPECT_TRUE(Contains(d.description, d.op + " ->") || Contains(d.description, d.op + " (")) << d.description;
    EXPECT_NE(d.refuse, nullptr) << d.op;
    EXPECT_NE(d.build, nullptr) << d.op;
  }
}

}  // namespace
}  // namespace ferry::legalize_test
