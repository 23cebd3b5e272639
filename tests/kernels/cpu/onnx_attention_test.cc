// The cpu kernel of ONNX Attention (opsets 23, 24; dnnl_sgemm + the vector score rows) against ref: 3-D and 4-D
// inputs, grouped-query heads (unit = the group's rows, or single heads for 3-D prefill), bool / float / integer
// masks of every broadcast rank and shorter than the keys, is_causal, scale (folded or not), softcap, past_key /
// past_value -> present, qk_matmul_output in all four modes, nonpad_kv_seqlen, float16, edge values, fully masked
// rows, empty sizes, threads 1 and 2, the ISA variants, float64 (refused) and bfloat16 (run in float32), and
// Prepare errors.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/isa.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

struct Case {
  Shape q, k, v;  // 3-D ([B, S, H*D]: needs heads) or 4-D
  int64_t q_heads = 0, kv_heads = 0;
  std::optional<Shape> mask;
  DataType mask_type = DataType::kFloat;
  std::optional<Shape> past_k, past_v;
  std::optional<std::vector<int64_t>> nonpad;  // opset 24
  bool causal = false;
  std::optional<float> scale;
  float softcap = 0;
  int64_t mode = -1;  // qk_matmul_output_mode; -1: the qk output not requested (nor the presents unless past)
  bool presents = false;
  DataType type = DataType::kFloat;
  bool edges = false;
  int threads = 1;
  std::string name;
};

OpTest AttentionTest(const Case& c, std::mt19937& rng) {
  const bool f16 = c.type == DataType::kFloat16;
  OpTest t{.op = "Attention", .opset = c.nonpad ? 24 : 23, .rtol = f16 ? 4e-3 : 1e-4, .atol = f16 ? 4e-3 : 1e-4,
           .threads = c.threads};
  t.inputs = {In("q", RandomTensor(c.type, c.q, rng, -1, 1, c.edges)),
              In("k", RandomTensor(c.type, c.k, rng, -1, 1, c.edges)),
              In("v", RandomTensor(c.type, c.v, rng, -1, 1, c.edges))};
  const bool more = c.mask || c.past_k || c.nonpad;
  if (more) {
    t.inputs.push_back(c.mask ? In("mask", RandomTensor(c.mask_type, *c.mask, rng, -3, 3, c.edges)) : Omitted());
  }
  if (c.past_k || c.nonpad) {
    t.inputs.push_back(c.past_k ? In("past_k", RandomTensor(c.type, *c.past_k, rng, -1, 1, c.edges)) : Omitted());
    t.inputs.push_back(c.past_v ? In("past_v", RandomTensor(c.type, *c.past_v, rng, -1, 1, c.edges)) : Omitted());
  }
  if (c.nonpad) {
    Tensor n(DataType::kInt64, {static_cast<int64_t>(c.nonpad->size())});
    for (size_t i = 0; i < c.nonpad->size(); ++i) n.data<int64_t>()[i] = (*c.nonpad)[i];
    t.inputs.push_back(In("nonpad", n));
  }
  t.num_outputs = c.mode >= 0 ? 4 : (c.past_k || c.presents ? 3 : 1);
  if (c.q_heads > 0) t.attributes.push_back(Int("q_num_heads", c.q_heads));
  if (c.kv_heads > 0) t.attributes.push_back(Int("kv_num_heads", c.kv_heads));
  if (c.causal) t.attributes.push_back(Int("is_causal", 1));
  if (c.scale) t.attributes.push_back(Float("scale", *c.scale));
  if (c.softcap > 0) t.attributes.push_back(Float("softcap", c.softcap));
  if (c.mode >= 0) t.attributes.push_back(Int("qk_matmul_output_mode", c.mode));
  return t;
}

void ExpectCases(const std::vector<Case>& cases, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(MatchesRef(AttentionTest(c, rng), "cpu"));
  }
}

TEST(CpuOnnxAttention, Layouts) {
  ExpectCases({
                  {.q = {2, 3, 5, 8}, .k = {2, 3, 7, 8}, .v = {2, 3, 7, 6}, .name = "4-D, Dv != D"},
                  {.q = {2, 5, 32}, .k = {2, 7, 32}, .v = {2, 7, 24}, .q_heads = 4, .kv_heads = 4, .name = "3-D"},
                  {.q = {1, 6, 9, 16}, .k = {1, 2, 11, 16}, .v = {1, 2, 11, 16}, .name = "4-D GQA (group rows)"},
                  {.q = {2, 9, 48}, .k = {2, 4, 16}, .v = {2, 4, 16}, .q_heads = 6, .kv_heads = 2,
                   .name = "3-D GQA prefill (head by head)"},
                  {.q = {3, 1, 64}, .k = {3, 1, 16}, .v = {3, 1, 16}, .q_heads = 8, .kv_heads = 2,
                   .name = "3-D GQA, one query row (group rows)"},
                  {.q = {2, 4, 70, 20}, .k = {2, 4, 90, 20}, .v = {2, 4, 90, 13}, .threads = 2,
                   .name = "row blocks, SIMD tails, 2 threads"},
              },
              1);
}

TEST(CpuOnnxAttention, Masks) {
  ExpectCases({
                  {.q = {2, 3, 5, 8}, .k = {2, 3, 7, 8}, .v = {2, 3, 7, 8}, .mask = Shape{5, 7},
                   .mask_type = DataType::kBool, .name = "bool [Sq, S]"},
                  {.q = {2, 3, 5, 8}, .k = {2, 3, 7, 8}, .v = {2, 3, 7, 8}, .mask = Shape{2, 1, 5, 7},
                   .name = "float [B, 1, Sq, S]"},
                  {.q = {2, 3, 5, 8}, .k = {2, 3, 7, 8}, .v = {2, 3, 7, 8}, .mask = Shape{3, 1, 4},
                   .name = "float [Hq, 1, 4]: shorter than the keys"},
                  {.q = {2, 5, 24}, .k = {2, 7, 8}, .v = {2, 7, 8}, .q_heads = 3, .kv_heads = 1,
                   .mask = Shape{2, 3, 5, 7}, .mask_type = DataType::kBool, .causal = true,
                   .name = "bool 4-D, causal, 3-D GQA"},
                  {.q = {1, 2, 6, 8}, .k = {1, 2, 6, 8}, .v = {1, 2, 6, 8}, .mask = Shape{6, 6},
                   .mask_type = DataType::kInt32, .name = "int32 (additive)"},
                  {.q = {1, 2, 6, 8}, .k = {1, 2, 6, 8}, .v = {1, 2, 6, 8}, .mask = Shape{1, 6},
                   .mask_type = DataType::kFloat16, .name = "float16 mask, float32 inputs"},
                  {.q = {2, 2, 9, 8}, .k = {2, 2, 4, 8}, .v = {2, 2, 4, 8}, .causal = true,
                   .name = "causal, Sq > S (early rows see nothing: zeros)"},
              },
              2);
}

TEST(CpuOnnxAttention, ScaleSoftcapAndQkOutput) {
  std::vector<Case> cases;
  for (int64_t mode = 0; mode < 4; ++mode) {
    cases.push_back({.q = {2, 4, 5, 8}, .k = {2, 2, 7, 8}, .v = {2, 2, 7, 8}, .mask = Shape{5, 7},
                     .causal = mode % 2 == 1, .scale = 0.3f, .softcap = 2.0f, .mode = mode,
                     .name = "mode " + std::to_string(mode)});
  }
  cases.push_back({.q = {1, 2, 4, 8}, .k = {1, 2, 6, 8}, .v = {1, 2, 6, 8}, .scale = 0.0f, .mode = 0,
                   .name = "scale 0: applied after the product"});
  cases.push_back({.q = {1, 2, 4, 8}, .k = {1, 2, 6, 8}, .v = {1, 2, 6, 8}, .scale = -1.5f, .softcap = 0.5f,
                   .name = "negative scale, small softcap"});
  ExpectCases(cases, 3);
}

TEST(CpuOnnxAttention, PastAndPresent) {
  ExpectCases({
                  {.q = {2, 4, 3, 8}, .k = {2, 2, 3, 8}, .v = {2, 2, 3, 6}, .past_k = Shape{2, 2, 5, 8},
                   .past_v = Shape{2, 2, 5, 6}, .causal = true, .name = "GQA with past, causal"},
                  {.q = {1, 1, 96}, .k = {1, 1, 32}, .v = {1, 1, 32}, .q_heads = 6, .kv_heads = 2,
                   .past_k = Shape{1, 2, 40, 16}, .past_v = Shape{1, 2, 40, 16}, .causal = true, .threads = 2,
                   .name = "3-D GQA decode step"},
                  {.q = {2, 3, 4, 8}, .k = {2, 3, 2, 8}, .v = {2, 3, 2, 8}, .mask = Shape{2, 3, 4, 6},
                   .past_k = Shape{2, 3, 4, 8}, .past_v = Shape{2, 3, 4, 8}, .mode = 2,
                   .name = "past, 4-D mask, qk output"},
                  {.q = {2, 3, 4, 8}, .k = {2, 3, 5, 8}, .v = {2, 3, 5, 8}, .presents = true,
                   .name = "presents without a past"},
                  {.q = {1, 2, 3, 8}, .k = {1, 2, 0, 8}, .v = {1, 2, 0, 8}, .past_k = Shape{1, 2, 4, 8},
                   .past_v = Shape{1, 2, 4, 8}, .name = "no new keys"},
              },
              4);
}

TEST(CpuOnnxAttention, NonpadKvSeqlen) {
  ExpectCases({
                  {.q = {3, 2, 4, 8}, .k = {3, 2, 6, 8}, .v = {3, 2, 6, 8}, .nonpad = std::vector<int64_t>{6, 3, 0},
                   .name = "nonpad"},
                  {.q = {3, 4, 4, 8}, .k = {3, 2, 6, 8}, .v = {3, 2, 6, 8}, .mask = Shape{4, 6},
                   .mask_type = DataType::kBool, .nonpad = std::vector<int64_t>{5, 6, 2}, .causal = true,
                   .name = "nonpad, causal, bool mask, GQA"},
                  {.q = {2, 1, 32}, .k = {2, 1, 16}, .v = {2, 1, 16}, .q_heads = 2, .kv_heads = 1,
                   .past_k = Shape{2, 1, 7, 16}, .past_v = Shape{2, 1, 7, 16}, .nonpad = std::vector<int64_t>{8, 5},
                   .causal = true, .name = "nonpad with a past"},
              },
              5);
}

TEST(CpuOnnxAttention, Float16) {
  ExpectCases({
                  {.q = {2, 4, 5, 8}, .k = {2, 2, 7, 8}, .v = {2, 2, 7, 8}, .mask = Shape{5, 7},
                   .mask_type = DataType::kFloat16, .type = DataType::kFloat16, .name = "float16 GQA + mask"},
                  {.q = {1, 4, 1, 8}, .k = {1, 2, 1, 8}, .v = {1, 2, 1, 8}, .past_k = Shape{1, 2, 9, 8},
                   .past_v = Shape{1, 2, 9, 8}, .causal = true, .mode = 3, .type = DataType::kFloat16,
                   .name = "float16 decode with past and qk output"},
              },
              6);
}

TEST(CpuOnnxAttention, TransformerSizesAndEdgeValues) {
  ExpectCases({
                  {.q = {1, 12, 128, 64}, .k = {1, 12, 128, 64}, .v = {1, 12, 128, 64}, .causal = true,
                   .threads = 2, .name = "BERT-size heads, causal"},
                  {.q = {1, 32, 1, 64}, .k = {1, 8, 1, 64}, .v = {1, 8, 1, 64}, .past_k = Shape{1, 8, 200, 64},
                   .past_v = Shape{1, 8, 200, 64}, .threads = 2, .name = "GQA decode, past 200"},
                  {.q = {2, 2, 9, 8}, .k = {2, 2, 11, 8}, .v = {2, 2, 11, 8}, .mask = Shape{9, 11}, .softcap = 3.0f,
                   .mode = 1, .edges = true, .name = "edge values everywhere"},
              },
              7);
}

TEST(CpuOnnxAttention, FullyMaskedRowsAndEmptySizes) {
  std::mt19937 rng(8);
  Case c{.q = {1, 2, 3, 4}, .k = {1, 2, 5, 4}, .v = {1, 2, 5, 4}, .mask = Shape{3, 5}, .mode = 3,
         .name = "all-false and all -inf rows: zeros"};
  for (DataType mt : {DataType::kBool, DataType::kFloat}) {
    c.mask_type = mt;
    OpTest t = AttentionTest(c, rng);
    Tensor& m = t.inputs[3].value;
    for (int64_t j = 0; j < 5; ++j) {  // row 1 masked everywhere
      if (mt == DataType::kBool) {
        m.data<bool>()[5 + j] = false;
      } else {
        m.data<float>()[5 + j] = -std::numeric_limits<float>::infinity();
      }
    }
    EXPECT_TRUE(MatchesRef(t, "cpu"));
  }
  ExpectCases({
                  {.q = {2, 2, 3, 4}, .k = {2, 2, 0, 4}, .v = {2, 2, 0, 5}, .name = "no keys"},
                  {.q = {2, 2, 0, 4}, .k = {2, 2, 3, 4}, .v = {2, 2, 3, 5}, .name = "no query rows"},
                  {.q = {2, 2, 3, 0}, .k = {2, 2, 3, 0}, .v = {2, 2, 3, 5}, .name = "head size 0"},
                  {.q = {2, 2, 3, 4}, .k = {2, 2, 3, 4}, .v = {2, 2, 3, 0}, .name = "no value columns"},
                  {.q = {0, 2, 3, 4}, .k = {0, 2, 3, 4}, .v = {0, 2, 3, 4}, .past_k = Shape{0, 2, 1, 4},
                   .past_v = Shape{0, 2, 1, 4}, .name = "empty batch with a past"},
              },
              9);
}

TEST(CpuOnnxAttention, IsaVariants) {
  std::mt19937 rng(10);
  const OpTest t = AttentionTest({.q = {2, 4, 17, 12}, .k = {2, 2, 19, 12}, .v = {2, 2, 19, 9}, .mask = Shape{17, 19},
                                  .softcap = 1.5f, .threads = 2},
                                 rng);
  const auto want = RunOn(t, {"ref"}, true, 1);
  for (const char* isa : {"avx512f", "avx2,fma"}) {
    if (!DefaultIsa().contains(IsaSet::Parse(isa))) continue;
    SCOPED_TRACE(isa);
    const auto got = SessionFor(OneNodeModel(t), {"cpu"}, true, 2, isa)->Run(Feeds(t));
    EXPECT_TRUE(TensorsClose(got[0].second, want[0].second, 1e-4, 1e-4));
  }
  EXPECT_THROW(SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "none"), UnsupportedError);
}

// float64 is left to ref; bfloat16 runs as float32 (ComputeInFloat32's Casts around the float32 kernel).
TEST(CpuOnnxAttention, OtherTypes) {
  std::mt19937 rng(11);
  ExpectRefusedAndFallsBack(
      AttentionTest({.q = {1, 2, 3, 4}, .k = {1, 2, 5, 4}, .v = {1, 2, 5, 4}, .type = DataType::kDouble}, rng),
      "supports T1 in");
  OpTest t = AttentionTest({.q = {1, 4, 3, 8}, .k = {1, 2, 5, 8}, .v = {1, 2, 5, 8}, .mask = Shape{3, 5},
                            .causal = true, .type = DataType::kBFloat16},
                           rng);
  t.rtol = t.atol = 2e-2;
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuOnnxAttention, PrepareRejectsBadShapes) {
  std::mt19937 rng(12);
  const std::vector<Case> bad = {
      {.q = {1, 2, 3, 8}, .k = {1, 2, 5, 6}, .v = {1, 2, 5, 8}, .name = "K's head size differs"},
      {.q = {1, 3, 3, 8}, .k = {1, 2, 5, 8}, .v = {1, 2, 5, 8}, .name = "q heads not a multiple of kv heads"},
      {.q = {1, 3, 16}, .k = {1, 5, 16}, .v = {1, 5, 16}, .name = "3-D without head counts"},
      {.q = {1, 2, 3, 8}, .k = {1, 2, 5, 8}, .v = {1, 2, 5, 8}, .mask = Shape{3, 6}, .name = "mask longer than S"},
  };
  for (const Case& c : bad) {
    SCOPED_TRACE(c.name);
    const OpTest t = AttentionTest(c, rng);
    EXPECT_THROW(RunOn(t, {"cpu"}, true, 1), InvalidArgumentError);
  }
}

}  // namespace
}  // namespace ferry::testing
