// The cpu kernel of RotaryEmbedding (AVX2+FMA) against ref: 4-D and 3-D inputs, interleaved or not, a partial
// rotary_embedding_dim, with position_ids ([max_pos, rot/2] caches) and without ([B, S, rot/2] caches), head sizes
// that leave vector tails, edge values, threads 1 and 2; float16 (run in float32), the type and ISAs it leaves to
// ref, and the errors of Prepare (bad rotary_embedding_dim) and Compute (a position id outside the cache).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/isa.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

struct Case {
  Shape x;  // [B, H, S, D] or [B, S, H*D]
  int64_t num_heads = 0;
  int64_t rotary_dim = 0;  // 0: not given (the head size)
  bool interleaved = false;
  bool position_ids = true;
  int64_t max_pos = 16;
  DataType type = DataType::kFloat;
  bool edges = false;
  int threads = 1;
  std::string name;
};

OpTest RotaryTest(const Case& c, std::mt19937& rng) {
  const bool four_d = c.x.size() == 4;
  const int64_t b = c.x[0], s = four_d ? c.x[2] : c.x[1];
  const int64_t d = four_d ? c.x[3] : c.x[2] / c.num_heads;
  const int64_t half = (c.rotary_dim > 0 ? c.rotary_dim : d) / 2;
  OpTest t{.op = "RotaryEmbedding", .opset = 23, .rtol = 1e-5, .atol = 1e-6, .threads = c.threads};
  const Shape cache = c.position_ids ? Shape{c.max_pos, half} : Shape{b, s, half};
  t.inputs = {In("x", RandomTensor(c.type, c.x, rng, -2, 2, c.edges)),
              In("cos", RandomTensor(c.type, cache, rng, -1, 1, c.edges)),
              In("sin", RandomTensor(c.type, cache, rng, -1, 1, c.edges))};
  if (c.position_ids) {
    Tensor pos(DataType::kInt64, {b, s});
    std::uniform_int_distribution<int64_t> pick(0, c.max_pos - 1);
    for (int64_t i = 0; i < pos.size(); ++i) pos.data<int64_t>()[i] = pick(rng);
    t.inputs.push_back(In("pos", pos));
  }
  if (c.num_heads > 0) t.attributes.push_back(Int("num_heads", c.num_heads));
  if (c.rotary_dim > 0) t.attributes.push_back(Int("rotary_embedding_dim", c.rotary_dim));
  if (c.interleaved) t.attributes.push_back(Int("interleaved", 1));
  return t;
}

TEST(CpuRotaryEmbedding, MatchesRef) {
  std::mt19937 rng(1);
  std::vector<Case> cases;
  for (bool interleaved : {false, true}) {
    for (bool pos : {true, false}) {
      const std::string tag = std::string(interleaved ? "interleaved" : "halves") + (pos ? ", ids" : ", no ids");
      cases.push_back({.x = {2, 3, 5, 64}, .interleaved = interleaved, .position_ids = pos, .name = "4-D " + tag});
      cases.push_back({.x = {2, 5, 4 * 26}, .num_heads = 4, .interleaved = interleaved, .position_ids = pos,
                       .name = "3-D, D = 26 (tails) " + tag});
      cases.push_back({.x = {1, 2, 7, 40}, .rotary_dim = 18, .interleaved = interleaved, .position_ids = pos,
                       .name = "rotary dim 18 of 40 " + tag});
      cases.push_back({.x = {3, 40, 96}, .num_heads = 2, .rotary_dim = 32, .interleaved = interleaved,
                       .position_ids = pos, .max_pos = 64, .threads = 2, .name = "3-D, 2 threads " + tag});
    }
  }
  cases.push_back({.x = {2, 2, 6, 16}, .interleaved = true, .edges = true, .name = "edge values, interleaved"});
  cases.push_back({.x = {2, 2, 6, 16}, .edges = true, .name = "edge values"});
  cases.push_back({.x = {2, 0, 6, 16}, .name = "no heads"});
  cases.push_back({.x = {2, 0, 32}, .num_heads = 2, .position_ids = false, .name = "no positions"});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(MatchesRef(RotaryTest(c, rng), "cpu"));
  }
}

TEST(CpuRotaryEmbedding, OtherTypesAndIsas) {
  std::mt19937 rng(2);
  ExpectRefusedAndFallsBack(RotaryTest({.x = {1, 2, 3, 8}, .type = DataType::kDouble}, rng), "supports T in");
  // float16 runs as float32 (ComputeInFloat32's Casts around the float32 kernel).
  OpTest half = RotaryTest({.x = {1, 2, 3, 8}, .interleaved = true, .type = DataType::kFloat16}, rng);
  half.rtol = half.atol = 2e-3;
  EXPECT_TRUE(MatchesRef(half, "cpu"));
  const OpTest t = RotaryTest({.x = {1, 2, 3, 8}}, rng);
  EXPECT_THROW(SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "none"), UnsupportedError);
  auto fallback = SessionFor(OneNodeModel(t), {"cpu", "ref"}, false, 1, "none");
  EXPECT_EQ(fallback->placement().nodes[0].backend, "ref");
}

TEST(CpuRotaryEmbedding, Errors) {
  std::mt19937 rng(3);
  // Prepare: an odd rotary_embedding_dim, and one past the head size.
  for (int64_t rot : {7, 10}) {
    OpTest t = RotaryTest({.x = {1, 2, 3, 8}, .rotary_dim = 6}, rng);
    t.attributes = {Int("rotary_embedding_dim", rot)};
    EXPECT_THROW(RunOn(t, {"cpu"}, true, 1), InvalidArgumentError) << rot;
  }
  // Compute: a position id outside the cache.
  OpTest t = RotaryTest({.x = {1, 2, 3, 8}, .max_pos = 4}, rng);
  t.inputs[3].value.data<int64_t>()[2] = 4;
  EXPECT_THROW(RunOn(t, {"cpu"}, true, 1), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry::testing
