// The decompositions of ONNX Runtime's normalization ops (group "norm") against their ref kernels: the default-domain
// LayerNormalization-1 and SimplifiedLayerNormalization-1, com.microsoft's SimplifiedLayerNormalization,
// SkipLayerNormalization, SkipSimplifiedLayerNormalization and EmbedLayerNormalization, every output read; the
// decomposed graph run on ref, on cpu,ref and on a backend lacking the normalizations; and the refusals.
#include <random>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

constexpr DataType kF32 = DataType::kFloat;

Tensor Rand(Shape shape, uint32_t seed, DataType t = kF32) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(t, std::move(shape), rng, -2, 2);
}

Tensor Ints(Shape shape, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, std::move(shape), v);
}

OpTest Node(std::string op, std::string domain, int64_t opset, std::vector<testing::OpInput> in, int outputs,
            std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = std::move(domain);
  t.opset = opset;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.num_outputs = outputs;
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

// The refusal of every rule for the one-node model of `t` (with an ai.onnx import at `onnx_opset` when > 0).
std::string Refusal(const OpTest& t, int64_t onnx_opset) {
  std::string bytes = testing::OneNodeModel(t);
  if (onnx_opset > 0) bytes = WithOnnxImport(bytes, onnx_opset);
  auto model = Import(bytes);
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), legalize::OnnxOpset(*model));
  return c.decomposition ? "" : c.reason;
}

TEST(OrtContribNormDecomposition, LayerNormalization1WithStatistics) {
  std::string ops;
  EXPECT_TRUE(
      DecompositionMatches(Node("LayerNormalization", "", 14,
                                {In("x", Rand({2, 3, 8}, 1)), Const("s", Rand({8}, 2)), Const("b", Rand({8}, 3))}, 3,
                                {Float("epsilon", 1e-3f)}),
                           0, &ops));
  EXPECT_EQ(ops, "ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul Add Div");
  // Over two axes, double statistics (stash_type 11) from a float computation: Casts.
  EXPECT_TRUE(
      DecompositionMatches(Node("LayerNormalization", "", 14, {In("x", Rand({2, 3, 4}, 4)), In("s", Rand({3, 4}, 5))},
                                3, {Int("axis", 1), Int("stash_type", 11)}),
                           0, &ops));
  EXPECT_EQ(ops, "ReduceMean Sub Mul ReduceMean Add Sqrt Div Div Mul Cast Cast");
}

TEST(OrtContribNormDecomposition, SimplifiedLayerNormalizationInBothDomains) {
  for (const char* domain : {"", "com.microsoft"}) {
    const OpTest t = Node("SimplifiedLayerNormalization", domain, *domain ? 1 : 14,
                          {In("x", Rand({3, 16}, 6)), Const("s", Rand({16}, 7))}, 2, {Float("epsilon", 1e-4f)});
    std::string ops;
    EXPECT_TRUE(DecompositionMatches(t, *domain ? 17 : 0, &ops)) << domain;
    EXPECT_EQ(ops, "Mul ReduceMean Add Sqrt Div Mul Div") << domain;
  }
}

TEST(OrtContribNormDecomposition, SkipLayerNormalizationEveryOutput) {
  // input [2, 3, 8] + skip [3, 8] + bias; beta; output, mean, inv_std_var and input_skip_bias_sum read.
  std::string ops;
  EXPECT_TRUE(
      DecompositionMatches(Node("SkipLayerNormalization", "com.microsoft", 1,
                                {In("x", Rand({2, 3, 8}, 8)), In("skip", Rand({3, 8}, 9)), Const("g", Rand({8}, 10)),
                                 Const("beta", Rand({8}, 11)), Const("bias", Rand({8}, 12))},
                                4),
                           17, &ops));
  EXPECT_EQ(ops, "Add Add ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul Add Div");
  // Without beta and bias, Y only.
  EXPECT_TRUE(
      DecompositionMatches(Node("SkipLayerNormalization", "com.microsoft", 1,
                                {In("x", Rand({4, 16}, 13)), In("skip", Rand({4, 16}, 14)), Const("g", Rand({16}, 15))},
                                1, {Float("epsilon", 1e-5f)}),
                           17));
}

TEST(OrtContribNormDecomposition, SkipSimplifiedLayerNormalization) {
  // output, inv_std_var and the sum (the mean output, always 0, is left unread: the rule refuses it).
  OpTest t = Node("SkipSimplifiedLayerNormalization", "com.microsoft", 1,
                  {In("x", Rand({2, 3, 8}, 16)), In("skip", Rand({2, 3, 8}, 17)), Const("g", Rand({8}, 18)),
                   Const("bias", Rand({8}, 19))},
                  1);
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(t, 17, &ops));
  EXPECT_EQ(ops, "Add Add Mul ReduceMean Add Sqrt Div Mul");
  t.num_outputs = 2;
  EXPECT_EQ(Refusal(t, 17), "SkipSimplifiedLayerNormalization: its mean output (always 0) is read");
}

OpTest Embed(bool segments, bool mask, bool position_ids, int outputs) {
  OpTest t = Node("EmbedLayerNormalization", "com.microsoft", 1,
                  {In("ids", Ints({2, 3}, {0, 4, 2, 1, 1, 3})),
                   segments ? In("seg", Ints({2, 3}, {0, 1, 1, 0, 1, 0})) : testing::Omitted(),
                   Const("we", Rand({5, 8}, 20)), Const("pe", Rand({4, 8}, 21)),
                   segments ? Const("se", Rand({2, 8}, 22)) : testing::Omitted(), Const("g", Rand({8}, 23)),
                   Const("b", Rand({8}, 24)), mask ? In("mask", Ints({2, 3}, {1, 1, 0, 1, 0, 2})) : testing::Omitted()},
                  outputs, {Float("epsilon", 1e-5f)});
  if (position_ids) t.inputs.push_back(In("pos", Ints({1, 3}, {3, 0, 1})));
  return t;
}

TEST(OrtContribNormDecomposition, EmbedLayerNormalization) {
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(Embed(true, true, false, 3), 17, &ops));
  EXPECT_EQ(ops,
            "Gather Slice Add Gather Equal Cast ReduceSum Reshape Add ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul "
            "Add");
  EXPECT_TRUE(DecompositionMatches(Embed(false, false, true, 3), 17, &ops));  // mask_index: a constant of zeros
  EXPECT_EQ(ops, "Gather Gather Identity Add ReduceMean Sub Mul ReduceMean Add Sqrt Div Mul Add");
  EXPECT_TRUE(DecompositionMatches(Embed(true, false, true, 1), 13));  // ReduceMean's axes an attribute
}

TEST(OrtContribNormDecomposition, RefusalsSayWhy) {
  EXPECT_EQ(Refusal(Node("LayerNormalization", "", 14, {In("x", Rand({2, 8}, 1)), Const("s", Rand({8}, 2))}, 1,
                         {Int("stash_type", 10)}),
                    0),
            "LayerNormalization-1: stash_type 10 is neither 1 (float) nor 11 (double)");
  EXPECT_EQ(Refusal(Node("SkipLayerNormalization", "com.microsoft", 1,
                         {In("x", Rand({2, 8}, 1)), In("skip", Rand({2, 8}, 2)), Const("g", Rand({1, 8}, 3))}, 1),
                    17),
            "SkipLayerNormalization: gamma, beta or bias is not 1-D");
}

}  // namespace
}  // namespace ferry::legalize_test
