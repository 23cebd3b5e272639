// The cpu LayerNormalization kernel (oneDNN) against ref: random ranks 1-4 and axes (negative too), Scale and B
// of the normalised shape, broadcasting to it (expanded to one row), or of X's full shape (applied after oneDNN),
// B absent, the Mean and InvStdDev outputs, constants and graph inputs, epsilon; dynamic shapes run concurrently;
// empty tensors; and the configurations it refuses.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

TEST(CpuLayerNorm, RandomConfigurationsMatchRef) {
  std::mt19937 rng(707);
  for (int i = 0; i < 50; ++i) {
    const int64_t rank = Pick(rng, 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 70 : 9));
    const int64_t axis = Pick(rng, 0, rank - 1);
    const Shape norm(xs.begin() + axis, xs.end());
    // 0: the normalised shape; 1: broadcasting to it (1s, fewer dims); 2: X's full shape.
    auto param_shape = [&](int64_t form) {
      if (form == 2) return xs;
      Shape s = norm;
      if (form == 1) {
        for (auto& d : s) d = Pick(rng, 0, 1) ? 1 : d;
        if (s.size() > 1 && Pick(rng, 0, 1)) s.erase(s.begin());
      }
      return s;
    };
    const int64_t form = Pick(rng, 0, 5) < 4 ? 0 : Pick(rng, 1, 2);
    const bool constant = Pick(rng, 0, 2) > 0;
    Tensor scale = RandomTensor(DataType::kFloat, param_shape(form), rng, -2, 2);
    OpTest t{.op = "LayerNormalization",
             .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 5 == 0)),
                        constant ? Const("scale", scale) : In("scale", scale)},
             .rtol = 1e-4,
             .atol = 1e-5,  // mean and variance summed in a different order
             .threads = 1 + i % 2};
    if (Pick(rng, 0, 2) > 0) {
      Tensor b = RandomTensor(DataType::kFloat, param_shape(form), rng);
      t.inputs.push_back(constant ? Const("b", b) : In("b", b));
    }
    t.attributes.push_back(Int("axis", Pick(rng, 0, 1) ? axis : axis - rank));
    if (Pick(rng, 0, 1)) t.attributes.push_back(Float("epsilon", i % 2 ? 1e-3f : 0.5f));
    t.num_outputs = Pick(rng, 0, 2) ? 1 : 3;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": X " << ShapeToString(xs) << " axis " << axis << " scale "
                                      << ShapeToString(scale.shape()) << " bias " << (t.inputs.size() > 2)
                                      << " outputs " << t.num_outputs;
  }
}

TEST(CpuLayerNorm, TransformerShapesMatchRef) {
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    for (int outputs : {1, 3}) {
      OpTest t{.op = "LayerNormalization",
               .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 50, 768}, rng, -4, 4)),
                          Const("scale", RandomTensor(DataType::kFloat, {768}, rng)),
                          Const("b", RandomTensor(DataType::kFloat, {768}, rng))},
               .attributes = {Float("epsilon", 1e-6f)},
               .num_outputs = outputs,
               .rtol = 1e-4,
               .atol = 1e-5,
               .threads = threads};
      EXPECT_TRUE(MatchesRef(t, "cpu"));
    }
  }
}

TEST(CpuLayerNorm, LargeMeanSmallVarianceIsAccurate) {
  // Rows of 768 values in [999, 1001): ref's sequential float sum puts its mean off by ~1e-3 (its Y is off by
  // ~1.5e-3), so the check is against the exact result (in double) rather than ref: oneDNN's Y must be within
  // 5e-4 of it (a one-pass E[x²] - E[x]² variance would be far off).
  std::mt19937 rng(13);
  const int64_t rows = 16, n = 768;
  OpTest t{.op = "LayerNormalization",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {rows, n}, rng, 999, 1001)),
                      Const("scale", Tensor::FromVector<float>(DataType::kFloat, {n}, std::vector<float>(n, 1.0f)))},
           .attributes = {Float("epsilon", 1e-5f)}};
  const auto got = RunOn(t, {"cpu"}, true, 1);
  const float* x = t.inputs[0].value.data<float>();
  const float* y = got[0].second.data<float>();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[r * n + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += (x[r * n + i] - mean) * (x[r * n + i] - mean);
    const double inv = 1.0 / std::sqrt(var / n + 1e-5);
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(y[r * n + i] - (x[r * n + i] - mean) * inv));
  }
  EXPECT_LT(worst, 5e-4);
}

TEST(CpuLayerNorm, DynamicShapesRunConcurrently) {
  std::mt19937 rng(9);
  OpTest t{.op = "LayerNormalization",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 16}, rng)),
                      Const("scale", RandomTensor(DataType::kFloat, {16}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {16}, rng))},
           .num_outputs = 3,
           .rtol = 1e-4,
           .atol = 1e-5,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{2, 3, 16}, Shape{7, 1, 16}, Shape{1, 40, 16}, Shape{0, 3, 16}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuLayerNorm, EmptyTensors) {
  std::mt19937 rng(3);
  OpTest t{.op = "LayerNormalization",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {0, 4}, rng)),
                      Const("scale", RandomTensor(DataType::kFloat, {4}, rng))},
           .num_outputs = 3};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuLayerNorm, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(6);
  OpTest stash{.op = "LayerNormalization",
               .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 8}, rng)),
                          Const("scale", RandomTensor(DataType::kFloat, {8}, rng))},
               .attributes = {Int("stash_type", 16)},
               .num_outputs = 3};
  ExpectRefusedAndFallsBack(stash, "LayerNormalization: Mean/InvStdDev outputs with stash_type 16 (not float)");
  // Without the statistics outputs, stash_type does not change Y: cpu runs it.
  stash.num_outputs = 1;
  stash.rtol = 1e-4;
  stash.atol = 1e-5;
  EXPECT_TRUE(MatchesRef(stash, "cpu"));
  OpTest f64{.op = "LayerNormalization",
             .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 8}, rng)),
                        Const("scale", RandomTensor(DataType::kDouble, {8}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
