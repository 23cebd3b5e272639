// The cpu BatchNormalization kernel (inference) against ref: random ranks 1-5, opsets 9/14/15, parameters
// constant or graph inputs, epsilon, edge values; each ISA variant the host has on planes of every size and on
// channel rows (S = 1), 1 and 2 threads; dynamic shapes run concurrently; and the refused configurations
// (training, statistics outputs, per-position parameters).
#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

TEST(CpuBatchNorm, RandomConfigurationsMatchRef) {
  std::mt19937 rng(505);
  const int64_t opsets[] = {9, 14, 15};
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = Pick(rng, 1, 5);
    Shape xs{Pick(rng, 1, 3)};
    if (rank > 1) xs.push_back(Pick(rng, 1, 19));
    for (int64_t d = 2; d < rank; ++d) xs.push_back(Pick(rng, 1, rank == 5 ? 4 : 11));
    const int64_t c = rank > 1 ? xs[1] : 1;
    const bool constant = Pick(rng, 0, 2) > 0;
    auto param = [&](const char* name, double lo, double hi) {
      Tensor p = RandomTensor(DataType::kFloat, {c}, rng, lo, hi);
      return constant ? Const(name, p) : In(name, p);
    };
    OpTest t{.op = "BatchNormalization",
             .opset = opsets[i % 3],
             .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 4 == 0)),
                        param("scale", -2, 2), param("b", -1, 1), param("mean", -1, 1), param("var", 0, 2)},
             .rtol = 1e-5,
             .atol = 1e-5,
             .threads = 1 + i % 2};
    if (Pick(rng, 0, 1)) t.attributes.push_back(Float("epsilon", i % 2 ? 1e-3f : 0.1f));
    if (t.opset >= 14 && Pick(rng, 0, 1)) t.attributes.push_back(Int("training_mode", 0));
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": X " << ShapeToString(xs) << " opset " << t.opset;
  }
}

TEST(CpuBatchNorm, EveryIsaVariantMatchesRefOnPlanesAndChannelRows) {
  std::mt19937 rng(1907);
  // Planes of 1 (rank 2 and [N, C, 1, 1]: the channel-row path), short and odd planes, a large one.
  const Shape shapes[] = {{5, 37}, {3, 19, 1, 1}, {2, 7, 3}, {1, 4, 5, 7}, {2, 16, 33, 17}, {4}};
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    for (const Shape& xs : shapes) {
      for (int threads : {1, 2}) {
        const int64_t c = xs.size() > 1 ? xs[1] : 1;
        OpTest t{.op = "BatchNormalization",
                 .opset = 15,
                 .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/true)),
                            In("scale", RandomTensor(DataType::kFloat, {c}, rng)),
                            In("b", RandomTensor(DataType::kFloat, {c}, rng)),
                            In("mean", RandomTensor(DataType::kFloat, {c}, rng)),
                            In("var", RandomTensor(DataType::kFloat, {c}, rng, 0, 2))},
                 .attributes = {Float("epsilon", 1e-3f)},
                 .rtol = 1e-5,
                 .atol = 1e-5,
                 .threads = threads};
        EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_batchnormalization__") + v.impl + ".9"))
            << v.impl << " X " << ShapeToString(xs) << " threads " << threads;
      }
    }
  }
}

TEST(CpuBatchNorm, LargeInputMatchesRef) {
  std::mt19937 rng(7);
  for (int threads : {1, 2}) {
    OpTest t{.op = "BatchNormalization",
             .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 64, 28, 28}, rng)),
                        Const("scale", RandomTensor(DataType::kFloat, {64}, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {64}, rng)),
                        Const("mean", RandomTensor(DataType::kFloat, {64}, rng)),
                        Const("var", RandomTensor(DataType::kFloat, {64}, rng, 0.5, 2))},
             .rtol = 1e-5,
             .atol = 1e-5,
             .threads = threads};
    EXPECT_TRUE(MatchesRef(t, "cpu"));
  }
}

TEST(CpuBatchNorm, DynamicShapesRunConcurrently) {
  std::mt19937 rng(9);
  OpTest t{.op = "BatchNormalization",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 5, 4, 4}, rng)),
                      Const("scale", RandomTensor(DataType::kFloat, {5}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {5}, rng)),
                      Const("mean", RandomTensor(DataType::kFloat, {5}, rng)),
                      Const("var", RandomTensor(DataType::kFloat, {5}, rng, 0, 1))},
           .rtol = 1e-5,
           .atol = 1e-5,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{1, 5, 4, 4}, Shape{3, 5, 7, 2}, Shape{2, 5, 1, 30}, Shape{0, 5, 3, 3}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuBatchNorm, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(11);
  auto make = [&](int64_t opset, int outputs) {
    return OpTest{.op = "BatchNormalization",
                  .opset = opset,
                  .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 4}, rng)),
                             Const("scale", RandomTensor(DataType::kFloat, {3}, rng)),
                             Const("b", RandomTensor(DataType::kFloat, {3}, rng)),
                             Const("mean", RandomTensor(DataType::kFloat, {3}, rng)),
                             Const("var", RandomTensor(DataType::kFloat, {3}, rng, 0, 1))},
                  .num_outputs = outputs};
  };
  OpTest training = make(15, 3);
  training.attributes = {Int("training_mode", 1)};
  ExpectRefusedAndFallsBack(training, "BatchNormalization: training_mode=1 is not implemented on cpu");
  ExpectRefusedAndFallsBack(make(9, 5), "BatchNormalization: output 1 (running or saved statistics, training)");
  // Opsets before 9 fall back to ref.
  OpTest old = make(7, 1);
  ExpectRefusedAndFallsBack(old, "implements BatchNormalization for opsets 9-");
  // Per-position parameters (ref's legacy form, outside the schema from opset 9): refused, ref runs them.
  OpTest per_position = make(9, 1);
  for (int i = 1; i < 5; ++i) per_position.inputs[static_cast<size_t>(i)].value = RandomTensor(DataType::kFloat, {3, 4}, rng, 0, 1);
  ExpectRefusedAndFallsBack(per_position,
                            "BatchNormalization: input 'scale' has 12 elements, not one per channel (3); not "
                            "implemented on cpu");
}

}  // namespace
}  // namespace ferry::testing
