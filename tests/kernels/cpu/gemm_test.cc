// The cpu Gemm kernel (oneDNN) against ref: random transA/transB, alpha, beta and every broadcast form of C
// (absent, scalar, [N], [1,N], [M,1], [M,N]; the bias path and the sum post-op path), B constant (pre-packed) or a
// graph input, opsets 7-13, dynamic shapes run concurrently, a wide transposed constant B, alpha = 0 and K = 0
// (beta · C without reading A, B), empty outputs, and the configurations it refuses.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

OpTest RandomGemm(std::mt19937& rng, int i) {
  const bool ta = Pick(rng, 0, 1), tb = Pick(rng, 0, 1);
  const int64_t m = Pick(rng, 1, 40), k = Pick(rng, 1, 50), n = Pick(rng, 1, 45);
  const float alphas[] = {1.0f, 1.0f, 0.5f, -2.0f, 0.0f};
  const float betas[] = {1.0f, 1.0f, 0.25f, -1.5f, 0.0f};
  const float alpha = alphas[Pick(rng, 0, 4)], beta = betas[Pick(rng, 0, 4)];
  const int64_t c_form = Pick(rng, 0, 6);  // 0 absent, 1 scalar, 2 [N], 3 [1,N], 4 [M,1], 5 [M,N], 6 [1,1]
  const Shape c_shapes[] = {{}, {}, {n}, {1, n}, {m, 1}, {m, n}, {1, 1}};
  OpTest t{.op = "Gemm", .opset = c_form == 0 ? 13 : (i % 3 == 0 ? 7 : (i % 3 == 1 ? 11 : 13))};
  t.inputs.push_back(In("a", RandomTensor(DataType::kFloat, ta ? Shape{k, m} : Shape{m, k}, rng)));
  Tensor b = RandomTensor(DataType::kFloat, tb ? Shape{n, k} : Shape{k, n}, rng);
  t.inputs.push_back(Pick(rng, 0, 2) ? Const("b", b) : In("b", b));
  if (c_form > 0) {
    Tensor c = RandomTensor(DataType::kFloat, c_shapes[c_form], rng);
    t.inputs.push_back(Pick(rng, 0, 1) ? Const("c", c) : In("c", c));
  }
  if (ta || Pick(rng, 0, 1)) t.attributes.push_back(Int("transA", ta));
  if (tb || Pick(rng, 0, 1)) t.attributes.push_back(Int("transB", tb));
  if (alpha != 1.0f || Pick(rng, 0, 1)) t.attributes.push_back(Float("alpha", alpha));
  if (beta != 1.0f || Pick(rng, 0, 1)) t.attributes.push_back(Float("beta", beta));
  t.rtol = 1e-4;
  t.atol = 2e-4;  // sums of up to 50 products, scaled by |alpha| <= 2
  t.threads = 1 + i % 2;
  return t;
}

std::string Describe(const OpTest& t) {
  std::string s;
  for (const auto& in : t.inputs) s += in.name + ShapeToString(in.value.shape()) + (in.constant ? "(const) " : " ");
  for (const auto& a : t.attributes) {
    s += a.name() + "=" + (a.type() == onnx::AttributeProto::FLOAT ? std::to_string(a.f()) : std::to_string(a.i())) + " ";
  }
  return s + "opset " + std::to_string(t.opset);
}

TEST(CpuGemm, RandomConfigurationsMatchRef) {
  std::mt19937 rng(202);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomGemm(rng, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t);
  }
}

TEST(CpuGemm, LinearLayersMatchRef) {
  std::mt19937 rng(8);
  // A classifier head (transB=1, bias [N]) and a wider layer with C [M,N] and alpha/beta.
  for (bool constant : {true, false}) {
    for (int threads : {1, 2}) {
      Tensor w = RandomTensor(DataType::kFloat, {1000, 512}, rng);
      OpTest fc{.op = "Gemm",
                .inputs = {In("x", RandomTensor(DataType::kFloat, {4, 512}, rng)), constant ? Const("w", w) : In("w", w),
                           Const("b", RandomTensor(DataType::kFloat, {1000}, rng))},
                .attributes = {Int("transB", 1)},
                .rtol = 1e-4,
                .atol = 5e-4,  // sums of 512 products
                .threads = threads};
      EXPECT_TRUE(MatchesRef(fc, "cpu"));
      Tensor w2 = RandomTensor(DataType::kFloat, {256, 300}, rng);
      OpTest wide{.op = "Gemm",
                  .inputs = {In("x", RandomTensor(DataType::kFloat, {256, 70}, rng)), constant ? Const("w", w2) : In("w", w2),
                             In("c", RandomTensor(DataType::kFloat, {70, 300}, rng))},
                  .attributes = {Int("transA", 1), Float("alpha", 0.75f), Float("beta", 2.0f)},
                  .rtol = 1e-4,
                  .atol = 3e-4,
                  .threads = threads};
      EXPECT_TRUE(MatchesRef(wide, "cpu"));
    }
  }
}

TEST(CpuGemm, AlphaZeroAndEmptyKLeaveBetaC) {
  std::mt19937 rng(12);
  // alpha = 0 must not read A and B (NaN there stays out of Y), as in ref.
  Tensor a = RandomTensor(DataType::kFloat, {3, 4}, rng);
  a.data<float>()[0] = std::numeric_limits<float>::quiet_NaN();
  OpTest t{.op = "Gemm",
           .inputs = {In("a", a), Const("b", RandomTensor(DataType::kFloat, {4, 5}, rng)),
                      In("c", RandomTensor(DataType::kFloat, {5}, rng))},
           .attributes = {Float("alpha", 0.0f), Float("beta", 0.5f)}};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  // K = 0: Y = beta · C; without C, zeros.
  t.inputs = {In("a", RandomTensor(DataType::kFloat, {3, 0}, rng)), In("b", RandomTensor(DataType::kFloat, {0, 5}, rng)),
              In("c", RandomTensor(DataType::kFloat, {3, 1}, rng))};
  t.attributes = {Float("beta", -2.0f)};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  t.inputs.pop_back();
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  // Empty outputs.
  t.inputs = {In("a", RandomTensor(DataType::kFloat, {0, 4}, rng)), Const("b", RandomTensor(DataType::kFloat, {4, 5}, rng))};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  t.inputs = {In("a", RandomTensor(DataType::kFloat, {3, 4}, rng)), Const("b", RandomTensor(DataType::kFloat, {4, 0}, rng))};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  // beta = 0 ignores C, NaN included.
  Tensor c = RandomTensor(DataType::kFloat, {3, 5}, rng);
  c.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  t.inputs = {In("a", RandomTensor(DataType::kFloat, {3, 4}, rng)), Const("b", RandomTensor(DataType::kFloat, {4, 5}, rng)),
              In("c", c)};
  t.attributes = {Float("beta", 0.0f)};
  t.rtol = t.atol = 1e-5;
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuGemm, DynamicShapesReusePackedWeightsAndRunConcurrently) {
  std::mt19937 rng(19);
  OpTest t{.op = "Gemm",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {8, 64}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {72, 64}, rng)),
                      Const("c", RandomTensor(DataType::kFloat, {72}, rng))},
           .attributes = {Int("transB", 1)},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (int64_t m : {8, 1, 130, 5, 8}) runs.push_back({{"a", RandomTensor(DataType::kFloat, {m, 64}, rng)}});
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  // One primitive run from several threads at once (each execution needs its own scratchpad).
  std::vector<std::vector<std::pair<std::string, Tensor>>> same;
  for (int i = 0; i < 6; ++i) same.push_back({{"a", RandomTensor(DataType::kFloat, {200, 64}, rng)}});
  ExpectDynamicMatchesRef(t, same, true);
  // alpha != 1: C goes through the sum post-op; the packed weights were chosen for that attribute set.
  t.attributes.push_back(Float("alpha", 1.5f));
  ExpectDynamicMatchesRef(t, runs, true);
  // C as a graph input whose shape changes between runs ([M,1] and [1,1]).
  t.inputs[2] = In("c", RandomTensor(DataType::kFloat, {8, 1}, rng));
  for (auto& r : runs) {
    const int64_t m = r[0].second.dim(0);
    r.push_back({"c", RandomTensor(DataType::kFloat, m % 2 ? Shape{1, 1} : Shape{m, 1}, rng)});
  }
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuGemm, WideTransposedConstantBMatchesRefForEveryM) {
  // B [N, K] with N = 200: for a guessed M of 64, the packed copy is row-major with padded rows; the runs include
  // the small M that the transposed layout would have served.
  std::mt19937 rng(29);
  OpTest t{.op = "Gemm",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {64, 80}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {200, 80}, rng)),
                      Const("c", RandomTensor(DataType::kFloat, {200}, rng))},
           .attributes = {Int("transB", 1)},
           .rtol = 1e-4,
           .atol = 2e-4,  // sums of 80 products
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (int64_t m : {64, 1, 3, 17, 150}) runs.push_back({{"a", RandomTensor(DataType::kFloat, {m, 80}, rng)}});
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  for (int threads : {1, 2}) {
    t.threads = threads;
    EXPECT_TRUE(MatchesRef(t, "cpu"));  // static M = 64
  }
}

TEST(CpuGemm, BadShapesAreInvalidArguments) {
  std::mt19937 rng(4);
  OpTest t{.op = "Gemm",
           .inputs = {In("a", RandomTensor(DataType::kFloat, {2, 3}, rng)),
                      In("b", RandomTensor(DataType::kFloat, {3, 4}, rng)),
                      In("c", RandomTensor(DataType::kFloat, {4}, rng))}};
  auto session = SessionFor(DynamicOneNodeModel(t), {"cpu"}, true, 1);
  EXPECT_THROW(session->Run({{"a", RandomTensor(DataType::kFloat, {2, 3}, rng)},
                             {"b", RandomTensor(DataType::kFloat, {4, 4}, rng)},
                             {"c", RandomTensor(DataType::kFloat, {4}, rng)}}),
               InvalidArgumentError);
  EXPECT_THROW(session->Run({{"a", RandomTensor(DataType::kFloat, {2, 3}, rng)},
                             {"b", RandomTensor(DataType::kFloat, {3, 4}, rng)},
                             {"c", RandomTensor(DataType::kFloat, {3}, rng)}}),
               InvalidArgumentError);
}

TEST(CpuGemm, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(6);
  OpTest f64{.op = "Gemm",
             .inputs = {In("a", RandomTensor(DataType::kDouble, {2, 3}, rng)),
                        In("b", RandomTensor(DataType::kDouble, {3, 4}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
