// The cpu MatMul kernel (oneDNN) against ref: random ranks 1-4 with broadcast batch dims, B constant (pre-packed
// when it has no batch extent) or a graph input, more batch dims than oneDNN's rank limit, dynamic shapes (the
// packed weights reused for an M other than the one they were packed for) run concurrently, a wide constant B
// (copied with padded rows), empty tensors, and the configurations it refuses.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

// Shapes of one random MatMul: batch dims of A and B broadcast against each other (some 1s, ranks may differ).
std::pair<Shape, Shape> RandomMatMulShapes(std::mt19937& rng) {
  const int64_t ra = Pick(rng, 1, 4), rb = Pick(rng, 1, 4);
  const int64_t m = Pick(rng, 1, 37), k = Pick(rng, 1, 45), n = Pick(rng, 1, 41);
  const int64_t batch_rank = std::max<int64_t>(ra, rb) - 2;
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < batch_rank; ++i) batch.push_back(Pick(rng, 1, 3));
  auto operand_batch = [&](int64_t rank) {
    Shape s;
    for (int64_t i = batch_rank - (rank - 2); i < batch_rank; ++i) {
      s.push_back(Pick(rng, 0, 3) == 0 ? 1 : batch[static_cast<size_t>(i)]);
    }
    return s;
  };
  Shape a = ra == 1 ? Shape{k} : operand_batch(ra);
  if (ra > 1) a.insert(a.end(), {m, k});
  Shape b = rb == 1 ? Shape{k} : operand_batch(rb);
  if (rb > 1) b.insert(b.end(), {k, n});
  return {a, b};
}

TEST(CpuMatMul, RandomConfigurationsMatchRef) {
  std::mt19937 rng(101);
  for (int i = 0; i < 50; ++i) {
    auto [as, bs] = RandomMatMulShapes(rng);
    // Some constant B without batch extent (the pre-packed path) whatever A's rank.
    if (i % 4 == 0 && bs.size() > 2) bs.erase(bs.begin(), bs.end() - 2);
    Tensor b = RandomTensor(DataType::kFloat, bs, rng);
    OpTest t{.op = "MatMul",
             .opset = i % 3 == 0 ? 9 : 13,
             .inputs = {In("a", RandomTensor(DataType::kFloat, as, rng)), Pick(rng, 0, 1) ? Const("b", b) : In("b", b)},
             .rtol = 1e-4,
             .atol = 1e-4,  // sums of up to 45 products of values in [-1, 1)
             .threads = 1 + i % 2};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": A " << ShapeToString(as) << ", B " << ShapeToString(bs)
                                      << (t.inputs[1].constant ? " (constant)" : "");
  }
}

TEST(CpuMatMul, LargerProblemsMatchRef) {
  std::mt19937 rng(5);
  struct Case {
    Shape a, b;
  };
  // A linear layer (2-D and 3-D activations), attention-like batched products with broadcasting, a vector.
  const Case cases[] = {{{64, 256}, {256, 200}},     {{2, 33, 128}, {128, 96}},   {{2, 4, 50, 32}, {2, 4, 32, 50}},
                        {{2, 1, 20, 16}, {3, 16, 24}}, {{300}, {300, 70}},        {{1, 96, 64}, {5, 64, 33}}};
  for (const Case& c : cases) {
    for (bool constant : {true, false}) {
      for (int threads : {1, 2}) {
        Tensor b = RandomTensor(DataType::kFloat, c.b, rng);
        OpTest t{.op = "MatMul",
                 .inputs = {In("a", RandomTensor(DataType::kFloat, c.a, rng)), constant ? Const("b", b) : In("b", b)},
                 .rtol = 1e-4,
                 .atol = 3e-4,  // sums of up to 300 products
                 .threads = threads};
        EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(c.a) << " x " << ShapeToString(c.b);
      }
    }
  }
}

TEST(CpuMatMul, MoreBatchDimsThanOneDnnTakesMatchRef) {
  // Twelve batch dims alternating which operand broadcasts: they cannot merge, so the outer ones become a loop.
  std::mt19937 rng(9);
  Shape a, b;
  for (int i = 0; i < 12; ++i) {
    a.push_back(i % 2 ? 1 : 2);
    b.push_back(i % 2 ? 2 : 1);
  }
  a.insert(a.end(), {3, 4});
  b.insert(b.end(), {4, 2});
  for (int threads : {1, 2}) {
    OpTest t{.op = "MatMul",
             .inputs = {In("a", RandomTensor(DataType::kFloat, a, rng)), In("b", RandomTensor(DataType::kFloat, b, rng))},
             .rtol = 1e-5,
             .atol = 1e-5,
             .threads = threads};
    EXPECT_TRUE(MatchesRef(t, "cpu"));
  }
}

TEST(CpuMatMul, DynamicShapesReusePackedWeightsAndRunConcurrently) {
  std::mt19937 rng(17);
  OpTest t{.op = "MatMul",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 8, 48}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {48, 40}, rng))},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{2, 8, 48}, Shape{1, 1, 48}, Shape{3, 100, 48}, Shape{5, 7, 48}, Shape{2, 8, 48}}) {
    runs.push_back({{"a", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  // One primitive run from several threads at once (each execution needs its own scratchpad).
  std::vector<std::vector<std::pair<std::string, Tensor>>> same;
  for (int i = 0; i < 6; ++i) same.push_back({{"a", RandomTensor(DataType::kFloat, {4, 64, 48}, rng)}});
  ExpectDynamicMatchesRef(t, same, true);
  // B as a graph input, its batch broadcasting against A's.
  t.inputs[1] = In("b", RandomTensor(DataType::kFloat, {1, 48, 40}, rng));
  for (auto& r : runs) r.push_back({"b", RandomTensor(DataType::kFloat, {r[0].second.dim(0), 48, 40}, rng)});
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuMatMul, WideConstantBWithPaddedRowsMatchesRefForEveryM) {
  // N = 256 (16 lines a row): where oneDNN's gemm takes B unblocked, the packed copy has rows of 17 lines.
  std::mt19937 rng(23);
  OpTest t{.op = "MatMul",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {1, 40, 96}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {96, 256}, rng))},
           .rtol = 1e-4,
           .atol = 2e-4,  // sums of 96 products
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{1, 40, 96}, Shape{1, 1, 96}, Shape{2, 3, 96}, Shape{1, 130, 96}}) {
    runs.push_back({{"a", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  for (int threads : {1, 2}) {
    t.threads = threads;
    EXPECT_TRUE(MatchesRef(t, "cpu"));
  }
}

TEST(CpuMatMul, EmptyTensors) {
  std::mt19937 rng(3);
  for (auto [as, bs] : {std::pair<Shape, Shape>{{0, 4}, {4, 3}}, {{2, 0}, {0, 3}}, {{0, 2, 3}, {3, 4}},
                        {{2, 5, 0}, {2, 0, 4}}, {{3, 4}, {4, 0}}}) {
    for (bool constant : {true, false}) {
      Tensor b = RandomTensor(DataType::kFloat, bs, rng);
      OpTest t{.op = "MatMul",
               .inputs = {In("a", RandomTensor(DataType::kFloat, as, rng)), constant ? Const("b", b) : In("b", b)}};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << ShapeToString(as) << " x " << ShapeToString(bs);
    }
  }
}

TEST(CpuMatMul, BadShapesAreInvalidArguments) {
  std::mt19937 rng(4);
  OpTest t{.op = "MatMul",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 3}, rng)),
                      In("b", RandomTensor(DataType::kFloat, {3, 4}, rng))}};
  auto session = SessionFor(DynamicOneNodeModel(t), {"cpu"}, true, 1);
  EXPECT_THROW(session->Run({{"a", RandomTensor(DataType::kFloat, {2, 3}, rng)},
                             {"b", RandomTensor(DataType::kFloat, {4, 4}, rng)}}),
               InvalidArgumentError);
  EXPECT_THROW(session->Run({{"a", RandomTensor(DataType::kFloat, {2, 2, 3}, rng)},
                             {"b", RandomTensor(DataType::kFloat, {3, 3, 4}, rng)}}),
               InvalidArgumentError);
}

TEST(CpuMatMul, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(6);
  OpTest f64{.op = "MatMul",
             .inputs = {In("a", RandomTensor(DataType::kDouble, {2, 3}, rng)),
                        In("b", RandomTensor(DataType::kDouble, {3, 4}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
  OpTest i32{.op = "MatMul",
             .inputs = {In("a", RandomTensor(DataType::kInt32, {2, 3}, rng, -5, 5)),
                        Const("b", RandomTensor(DataType::kInt32, {3, 4}, rng, -5, 5))}};
  ExpectRefusedAndFallsBack(i32, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
