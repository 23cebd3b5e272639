// The cpu kernel of ai.ferry FusedMatMul (oneDNN matmul with bias and eltwise post-ops, the MatMul kernel's code)
// against ref: random ranks and broadcast batch dims, every activation the kernel accepts (Gelu included), C and B
// each constant or a graph input, C absent, threads 1 and 2; a linear layer of BERT's size; K = 0 (Y = act(C)) and
// empty outputs; dynamic shapes (packed B reused for other M) run concurrently; a C that is not [N]; and the
// activation it refuses.
#include <limits>

#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

struct Activation {
  std::string name;
  std::vector<float> params;
};

const std::vector<Activation>& Activations() {
  static const std::vector<Activation> all = {{"", {}},
                                              {"Relu", {}},
                                              {"LeakyRelu", {0.1f}},
                                              {"LeakyRelu", {}},
                                              {"Clip", {-0.5f, 0.75f}},
                                              {"Clip", {0.0f, 6.0f}},
                                              {"Clip", {-std::numeric_limits<float>::infinity(), 0.25f}},
                                              {"Clip", {}},
                                              {"Sigmoid", {}},
                                              {"Tanh", {}},
                                              {"HardSigmoid", {0.2f, 0.5f}},
                                              {"HardSigmoid", {}},
                                              {"HardSwish", {}},
                                              {"Silu", {}},
                                              {"Gelu", {}},
                                              {"GeluTanh", {}},
                                              {"Mish", {}}};
  return all;
}

// The FusedMatMul test: A an input, B and C constant or inputs (no C when c_shape is empty).
OpTest FusedMatMulTest(const Shape& a, const Shape& b, bool with_c, bool b_const, bool c_const,
                       const Activation& act, int threads, std::mt19937& rng) {
  const int64_t n = b.size() == 1 ? 1 : b.back();
  Tensor bt = RandomTensor(DataType::kFloat, b, rng);
  OpTest t{.op = "FusedMatMul",
           .domain = "ai.ferry",
           .opset = 1,
           .inputs = {In("a", RandomTensor(DataType::kFloat, a, rng)), b_const ? Const("b", bt) : In("b", bt)},
           .rtol = 1e-4,
           .atol = 1e-4,  // sums of up to ~50 products of values in [-1, 1), summed in another order than ref
           .threads = threads};
  if (with_c) {
    Tensor c = RandomTensor(DataType::kFloat, {n}, rng);
    t.inputs.push_back(c_const ? Const("c", c) : In("c", c));
  }
  if (!act.name.empty()) t.attributes.push_back(Str("activation", act.name));
  if (!act.params.empty()) t.attributes.push_back(Floats("activation_params", act.params));
  return t;
}

// Shapes of one random MatMul: ranks 1-4 for A, 1-3 for B, batch dims broadcasting against each other.
std::pair<Shape, Shape> RandomShapes(std::mt19937& rng) {
  const int64_t ra = Pick(rng, 1, 4), rb = Pick(rng, 1, 3);
  const int64_t m = Pick(rng, 1, 37), k = Pick(rng, 1, 45), n = Pick(rng, 1, 41);
  const int64_t batch_rank = std::max<int64_t>(ra, rb) - 2;
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < batch_rank; ++i) batch.push_back(Pick(rng, 1, 3));
  auto operand = [&](int64_t rank, int64_t rows, int64_t cols) {
    if (rank == 1) return Shape{k};  // a 1-D A or B is a vector of K
    Shape s;
    for (int64_t i = batch_rank - (rank - 2); i < batch_rank; ++i) {
      s.push_back(Pick(rng, 0, 3) == 0 ? 1 : batch[static_cast<size_t>(i)]);
    }
    s.insert(s.end(), {rows, cols});
    return s;
  };
  return {operand(ra, m, k), operand(rb, k, n)};
}

TEST(CpuFerryOpsFusedMatMul, RandomConfigurationsMatchRef) {
  std::mt19937 rng(131);
  const auto& acts = Activations();
  for (int i = 0; i < 60; ++i) {
    auto [as, bs] = RandomShapes(rng);
    // Some constant B without batch extent (the pre-packed path) whatever A's rank.
    if (i % 3 == 0 && bs.size() > 2) bs.erase(bs.begin(), bs.end() - 2);
    const Activation& act = acts[static_cast<size_t>(i) % acts.size()];
    const OpTest t = FusedMatMulTest(as, bs, i % 4 != 3, Pick(rng, 0, 1) == 1, Pick(rng, 0, 1) == 1, act, 1 + i % 2, rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuFerryOpsFusedMatMul, EveryActivationOnALinearLayerMatchesRef) {
  // A linear layer of the small BERT's FFN ([128, 256] x [256, 1024]), shrunk to keep the test fast, 2-D and 3-D.
  std::mt19937 rng(132);
  for (const Activation& act : Activations()) {
    for (const Shape& a : {Shape{48, 96}, Shape{2, 24, 96}}) {
      for (bool b_const : {true, false}) {
        for (int threads : {1, 2}) {
          OpTest t = FusedMatMulTest(a, {96, 80}, true, b_const, true, act, threads, rng);
          t.atol = 3e-4;  // sums of 96 products
          EXPECT_TRUE(MatchesRef(t, "cpu")) << act.name << ": " << DescribeCase(t);
        }
      }
    }
  }
}

TEST(CpuFerryOpsFusedMatMul, NoProductIsTheActivationOfC) {
  // K = 0: the product is zeros, so Y = act(C) in every row (act(0) without C); and empty outputs.
  std::mt19937 rng(133);
  for (const Activation& act : {Activation{"Sigmoid", {}}, Activation{"Gelu", {}}, Activation{"", {}}}) {
    for (auto [as, bs] : {std::pair<Shape, Shape>{{3, 0}, {0, 5}}, {{2, 4, 0}, {0, 3}}, {{2, 3, 0}, {2, 0, 4}},
                          {{0, 4}, {4, 3}}, {{3, 4}, {4, 0}}}) {
      for (bool with_c : {true, false}) {
        for (bool b_const : {true, false}) {
          const OpTest t = FusedMatMulTest(as, bs, with_c, b_const, true, act, 1, rng);
          EXPECT_TRUE(MatchesRef(t, "cpu")) << act.name << ": " << DescribeCase(t);
        }
      }
    }
  }
}

TEST(CpuFerryOpsFusedMatMul, DynamicShapesReusePackedWeightsAndRunConcurrently) {
  std::mt19937 rng(134);
  OpTest t = FusedMatMulTest({2, 8, 48}, {48, 40}, true, true, true, {"Gelu", {}}, 2, rng);
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{2, 8, 48}, Shape{1, 1, 48}, Shape{3, 100, 48}, Shape{5, 7, 48}, Shape{2, 8, 48}}) {
    runs.push_back({{"a", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  // B and C as graph inputs, B's batch broadcasting against A's.
  t.inputs[1] = In("b", RandomTensor(DataType::kFloat, {1, 48, 40}, rng));
  t.inputs[2] = In("c", RandomTensor(DataType::kFloat, {40}, rng));
  for (auto& r : runs) {
    r.push_back({"b", RandomTensor(DataType::kFloat, {r[0].second.dim(0), 48, 40}, rng)});
    r.push_back({"c", RandomTensor(DataType::kFloat, {40}, rng)});
  }
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuFerryOpsFusedMatMul, CNotOfShapeNIsAnInvalidArgument) {
  std::mt19937 rng(135);
  const OpTest t = FusedMatMulTest({2, 3}, {3, 4}, true, false, false, {"Relu", {}}, 1, rng);
  auto session = SessionFor(DynamicOneNodeModel(t), {"cpu"}, true, 1);
  for (const Shape& cs : {Shape{3}, Shape{5}, Shape{1}}) {  // C's rank is declared: [1, 4] is refused by the session
    try {
      session->Run({{"a", RandomTensor(DataType::kFloat, {2, 3}, rng)},
                    {"b", RandomTensor(DataType::kFloat, {3, 4}, rng)},
                    {"c", RandomTensor(DataType::kFloat, cs, rng)}});
      ADD_FAILURE() << "expected an invalid argument for C " << ShapeToString(cs);
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("input C has shape " + ShapeToString(cs) + ", expected [4]"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CpuFerryOpsFusedMatMul, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(136);
  ExpectRefusedAndFallsBack(FusedMatMulTest({2, 3}, {3, 4}, true, true, true, {"Clip", {1.0f, -1.0f}}, 1, rng),
                            "min > max");
  OpTest unknown = FusedMatMulTest({2, 3}, {3, 4}, true, true, true, {"Relu", {}}, 1, rng);
  unknown.attributes = {Str("activation", "Softplus")};
  try {  // an activation no backend knows: the model is invalid (ref rejects it when creating its kernel)
    SessionFor(OneNodeModel(unknown), {"cpu", "ref"}, false, 1);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Softplus"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
