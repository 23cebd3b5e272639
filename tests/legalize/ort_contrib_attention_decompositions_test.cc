// The decomposition of com.microsoft RotaryEmbedding (group "attention") against its ref kernel: 3-D and 4-D inputs,
// [B, S] position ids and a single start position, interleaved or not, partial rotation; the decomposed graph run on
// ref, on cpu,ref and on a backend lacking the op; and the refusal of caches wider than rot / 2.
#include <cmath>
#include <random>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

constexpr DataType kF32 = DataType::kFloat;

Tensor Rand(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(kF32, std::move(shape), rng, -2, 2);
}

Tensor Angles(Shape shape, bool sine) {
  Tensor t(kF32, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    const float a = 0.37f * static_cast<float>(i % 97) + 0.05f * static_cast<float>(i / 97);
    t.data<float>()[i] = sine ? std::sin(a) : std::cos(a);
  }
  return t;
}

OpTest Rope(Tensor x, Tensor pos, Shape cache, std::vector<onnx::AttributeProto> attrs) {
  OpTest t;
  t.op = "RotaryEmbedding";
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = {In("x", std::move(x)), In("pos", std::move(pos)), Const("cos", Angles(cache, false)),
              Const("sin", Angles(cache, true))};
  t.attributes = std::move(attrs);
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

Tensor Int64s(Shape shape, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), v);
}

TEST(OrtContribAttentionDecomposition, RotaryEmbedding3DWithPositionIds) {
  for (int64_t interleaved : {0, 1}) {
    const OpTest t = Rope(Rand({2, 4, 3 * 8}, 1), Int64s({2, 4}, {0, 1, 2, 3, 9, 7, 5, 0}), {10, 4},
                          {Int("interleaved", interleaved)});
    EXPECT_TRUE(DecompositionMatches(t, 17)) << "interleaved " << interleaved;
  }
}

TEST(OrtContribAttentionDecomposition, RotaryEmbedding4DStartPositionPartial) {
  // [B, N, S, D] = [2, 3, 4, 8], rotary_embedding_dim 4 of 8 (num_heads 3), start position 2 of a 10-row cache.
  for (int64_t interleaved : {0, 1}) {
    const OpTest t = Rope(Rand({2, 3, 4, 8}, 2), Int64s({1}, {2}), {10, 2},
                          {Int("interleaved", interleaved), Int("rotary_embedding_dim", 4), Int("num_heads", 3)});
    EXPECT_TRUE(DecompositionMatches(t, 17)) << "interleaved " << interleaved;
  }
  // 3-D with a start position.
  EXPECT_TRUE(DecompositionMatches(Rope(Rand({2, 4, 16}, 3), Int64s({1}, {5}), {10, 4}, {}), 17));
}

TEST(OrtContribAttentionDecomposition, RotaryEmbeddingWideCacheRefused) {
  // rotary_embedding_dim 4 of head size 8 with caches of head_size / 2 = 4 values: ONNX Runtime reads them with a
  // row stride of rot / 2, which no Gather expresses.
  const OpTest t = Rope(Rand({1, 2, 16}, 4), Int64s({1, 2}, {0, 1}), {4, 4},
                        {Int("rotary_embedding_dim", 4), Int("num_heads", 2)});
  auto model = Import(WithOnnxImport(testing::OneNodeModel(t), 17));
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), 17);
  EXPECT_EQ(c.decomposition, nullptr);
  EXPECT_NE(c.reason.find("rotary_embedding_dim / 2 values per position"), std::string::npos) << c.reason;
}

}  // namespace
}  // namespace ferry::legalize_test
