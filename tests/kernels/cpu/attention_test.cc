// The cpu kernel of ai.ferry Attention (dnnl_sgemm + the vector softmax rows) against ref: random shapes (Sq != Sk,
// Dh != Dv, sizes that leave SIMD tails and uneven row blocks, broadcast leading dims), with and without masks of
// every broadcast shape, K given as [.., Sk, Dh] or transposed, K and V constant or graph inputs, threads 1 and 2;
// BERT- and ViT-sized heads; masked rows (-inf everywhere: NaN as in ref) and edge values; empty sizes; the ISA
// variants; and the scale it refuses.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/isa.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

int64_t Pick(std::mt19937& rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

Shape Cat(Shape a, std::initializer_list<int64_t> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Case {
  Shape q, k, v, mask;  // mask empty with has_mask false: none
  bool has_mask = false;
  bool kt = false;
  float scale = 0.125f;
  bool constant_kv = false;
  int threads = 1;
};

OpTest AttentionTest(const Case& c, std::mt19937& rng, bool edges = false) {
  // Sums of up to ~64 products of values in [-1, 1) in another order than ref's GEMM: rtol / atol 1e-4.
  OpTest t{.op = "Attention",
           .domain = "ai.ferry",
           .opset = 1,
           .attributes = {Float("scale", c.scale), Int("k_transposed", c.kt ? 1 : 0)},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = c.threads};
  const Tensor k = RandomTensor(DataType::kFloat, c.k, rng, -1, 1, edges);
  const Tensor v = RandomTensor(DataType::kFloat, c.v, rng, -1, 1, edges);
  t.inputs = {In("q", RandomTensor(DataType::kFloat, c.q, rng, -1, 1, edges)),
              c.constant_kv ? Const("k", k) : In("k", k), c.constant_kv ? Const("v", v) : In("v", v)};
  if (c.has_mask) t.inputs.push_back(In("mask", RandomTensor(DataType::kFloat, c.mask, rng, -4, 4, edges)));
  return t;
}

std::string Describe(const Case& c) {
  return "Q " + ShapeToString(c.q) + " K " + ShapeToString(c.k) + (c.kt ? " (kt)" : "") + " V " +
         ShapeToString(c.v) + " mask " + (c.has_mask ? ShapeToString(c.mask) : "none") + " threads " +
         std::to_string(c.threads) + (c.constant_kv ? " const K, V" : "");
}

Case RandomCase(std::mt19937& rng) {
  Case c;
  const int64_t sq = Pick(rng, 1, 150), sk = Pick(rng, 1, 90), dh = Pick(rng, 1, 40), dv = Pick(rng, 1, 40);
  c.kt = Pick(rng, 0, 1) == 1;
  Shape lead(static_cast<size_t>(Pick(rng, 0, 2)));
  for (int64_t& d : lead) d = Pick(rng, 1, 3);
  auto thinned = [&] {
    Shape s = lead;
    for (int64_t& d : s) {
      if (Pick(rng, 0, 3) == 0) d = 1;
    }
    return s;
  };
  c.q = Cat(thinned(), {sq, dh});
  c.k = Cat(thinned(), c.kt ? std::initializer_list<int64_t>{dh, sk} : std::initializer_list<int64_t>{sk, dh});
  c.v = Cat(lead, {sk, dv});
  c.has_mask = Pick(rng, 0, 2) != 0;
  switch (Pick(rng, 0, 4)) {
    case 0: c.mask = {sk}; break;
    case 1: c.mask = {sq, Pick(rng, 0, 1) ? sk : 1}; break;
    case 2: c.mask = Cat(thinned(), {Pick(rng, 0, 1) ? sq : 1, sk}); break;
    case 3: c.mask = {}; break;
    default: c.mask = {1, 1, 1, sk}; break;
  }
  c.scale = static_cast<float>(Pick(rng, 1, 16)) / 16.0f;
  c.constant_kv = Pick(rng, 0, 3) == 0;
  c.threads = static_cast<int>(Pick(rng, 1, 2));
  return c;
}

TEST(CpuAttention, MatchesRefOnRandomShapes) {
  std::mt19937 rng(42);
  for (int it = 0; it < 50; ++it) {
    const Case c = RandomCase(rng);
    SCOPED_TRACE(Describe(c));
    EXPECT_TRUE(MatchesRef(AttentionTest(c, rng), "cpu"));
  }
}

TEST(CpuAttention, TransformerSizes) {
  std::mt19937 rng(7);
  const float bert = 0.125f;                 // 1 / sqrt(64)
  const float vit = 0.125f;                  // ViT-B/16: 12 heads of 64
  const std::vector<Case> cases = {
      // bert_small / bert_base after PyTorch's export: [B*H, S, Dh], Kᵀ given ([B*H, Dh, S]).
      {.q = {4, 128, 64}, .k = {4, 64, 128}, .v = {4, 128, 64}, .kt = true, .scale = bert},
      {.q = {12, 128, 64}, .k = {12, 64, 128}, .v = {12, 128, 64}, .kt = true, .scale = bert, .threads = 2},
      // ViT-B/16: 197 tokens.
      {.q = {12, 197, 64}, .k = {12, 64, 197}, .v = {12, 197, 64}, .kt = true, .scale = vit},
      {.q = {12, 197, 64}, .k = {12, 197, 64}, .v = {12, 197, 64}, .kt = false, .scale = vit, .threads = 2},
      // HF BERT with a padding mask [B, 1, 1, S].
      {.q = {2, 12, 128, 64}, .k = {2, 12, 64, 128}, .v = {2, 12, 128, 64}, .mask = {2, 1, 1, 128},
       .has_mask = true, .kt = true, .scale = bert, .threads = 2},
      // One head, one batch: the tasks are row blocks only.
      {.q = {1, 300, 32}, .k = {1, 300, 32}, .v = {1, 300, 48}, .mask = {300, 300}, .has_mask = true,
       .scale = 0.2f, .threads = 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(Describe(c));
    EXPECT_TRUE(MatchesRef(AttentionTest(c, rng), "cpu"));
  }
}

TEST(CpuAttention, MaskedRowsAndEdgeValues) {
  std::mt19937 rng(11);
  // A causal mask with some rows masked everywhere: those rows are NaN in ref and on cpu.
  const int64_t s = 37;
  Tensor mask(DataType::kFloat, {s, s});
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < s; ++i) {
    for (int64_t j = 0; j < s; ++j) mask.data<float>()[i * s + j] = (j > i || i % 7 == 3) ? -inf : 0.0f;
  }
  for (bool kt : {false, true}) {
    for (int threads : {1, 2}) {
      OpTest t = AttentionTest({.q = {3, s, 8}, .k = kt ? Shape{3, 8, s} : Shape{3, s, 8}, .v = {3, s, 5}, .kt = kt,
                                .threads = threads},
                               rng);
      t.inputs.push_back(In("mask", mask));
      EXPECT_TRUE(MatchesRef(t, "cpu"));
    }
  }
  // NaN, ±inf, ±0, denormals and huge values in Q, K, V and the mask: NaN rows where ref has them. One key and
  // one head dim, so that no sum's order can differ.
  for (int it = 0; it < 10; ++it) {
    const Case c{.q = {4, 16, 1}, .k = {4, 1, 1}, .v = {4, 1, 3}, .mask = {16, 1}, .has_mask = true,
                 .kt = it % 2 == 1, .threads = 1 + it % 2};
    SCOPED_TRACE(it);
    EXPECT_TRUE(MatchesRef(AttentionTest(c, rng, true), "cpu"));
  }
  // Edge values in the mask only: the products stay finite and order-independent up to the tolerance.
  for (int it = 0; it < 10; ++it) {
    OpTest t = AttentionTest({.q = {2, 9, 5}, .k = {2, 11, 5}, .v = {2, 11, 4}, .threads = 1 + it % 2}, rng);
    t.inputs.push_back(In("mask", RandomTensor(DataType::kFloat, {9, 11}, rng, -2, 2, true)));
    EXPECT_TRUE(MatchesRef(t, "cpu"));
  }
}

TEST(CpuAttention, EmptySizes) {
  std::mt19937 rng(2);
  const std::vector<Case> cases = {
      {.q = {2, 3, 4}, .k = {2, 0, 4}, .v = {2, 0, 5}},                          // no keys: zeros
      {.q = {3, 0}, .k = {4, 0}, .v = {4, 2}, .mask = {3, 4}, .has_mask = true},  // Dh = 0: the mask alone
      {.q = {0, 4}, .k = {3, 4}, .v = {3, 2}},                                   // no query rows
      {.q = {2, 3, 4}, .k = {2, 5, 4}, .v = {2, 5, 0}},                          // no value columns
      {.q = {0, 2, 4}, .k = {1, 3, 4}, .v = {1, 3, 2}},                          // an empty batch
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(Describe(c));
    EXPECT_TRUE(MatchesRef(AttentionTest(c, rng), "cpu"));
  }
}

TEST(CpuAttention, IsaVariants) {
  std::mt19937 rng(5);
  const OpTest t = AttentionTest({.q = {2, 33, 17}, .k = {2, 19, 17}, .v = {2, 19, 9}, .mask = {33, 19},
                                  .has_mask = true, .threads = 2},
                                 rng);
  const auto want = RunOn(t, {"ref"}, true, 1);
  for (const char* isa : {"avx512f", "avx2,fma"}) {
    if (!DefaultIsa().contains(IsaSet::Parse(isa))) continue;
    SCOPED_TRACE(isa);
    const auto got = SessionFor(OneNodeModel(t), {"cpu"}, true, 2, isa)->Run(Feeds(t));
    EXPECT_TRUE(TensorsClose(got[0].second, want[0].second, 1e-4, 1e-4));
  }
  // Without AVX2 there is no cpu kernel: the node falls back to ref.
  EXPECT_THROW(SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "none"), UnsupportedError);
  auto fallback = SessionFor(OneNodeModel(t), {"cpu", "ref"}, false, 1, "none");
  EXPECT_EQ(fallback->placement().nodes[0].backend, "ref");
}

TEST(CpuAttention, ZeroOrNonFiniteScaleFallsBackToRef) {
  std::mt19937 rng(8);
  for (float scale : {0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    const OpTest t = AttentionTest({.q = {2, 3, 4}, .k = {2, 5, 4}, .v = {2, 5, 6}, .scale = scale}, rng);
    ExpectRefusedAndFallsBack(t, "Attention: scale");
  }
}

}  // namespace
}  // namespace ferry::testing
