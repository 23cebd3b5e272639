// The cpu kernels of LpNormalization and LRN (normalization_rows.h, AVX-512F / AVX2+FMA / scalar) against ref: random shapes
// (0-D to 3-D spatial, channel counts that are no multiple of 16, rows shorter and longer than a vector, one and
// several tiles or chunks), attributes, constant or fed parameters, edge values, threads 1 and 2, every ISA variant
// (proven by the kernel that ran); empty tensors; Y written in place over a dying X; and bad inputs, whose errors
// name the node.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

// The statistics are summed in lanes, ref sums sequentially; the outputs differ by a few ulps of the values.
constexpr double kTol = 1e-5;

Shape RandomShape(std::mt19937& rng, int64_t rank, int64_t max_dim) {
  Shape s;
  for (int64_t d = 0; d < rank; ++d) s.push_back(Pick(rng, 1, max_dim));
  return s;
}

// MatchesRef, and with every ISA variant the host has, the kernel `prefix` + impl + `suffix` (proven to run).
void ExpectEveryVariantMatchesRef(const OpTest& t, const std::string& prefix, const std::string& suffix,
                                  const std::string& what) {
  EXPECT_TRUE(MatchesRef(t, "cpu")) << what;
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, prefix + v.impl + suffix)) << v.impl << " " << what;
  }
}

// Session creation or the run of the dynamic-shape model of `t` fails with InvalidArgumentError naming the node
// and containing `message`, on cpu and on ref alike.
void ExpectBadInput(const OpTest& t, const std::string& message) {
  const std::string bytes = DynamicOneNodeModel(t);
  for (const char* backend : {"cpu", "ref"}) {
    try {
      SessionFor(bytes, {backend}, true, 1)->Run(Feeds(t));
      ADD_FAILURE() << backend << ": expected an error containing: " << message;
    } catch (const InvalidArgumentError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("node 'node' (" + t.op + ")"), std::string::npos) << backend << ": " << what;
      EXPECT_NE(what.find(message), std::string::npos) << backend << ": " << what;
    }
  }
}

// ---- LpNormalization -----------------------------------------------------------------------------------------------

OpTest LpTest(const Tensor& x, int64_t axis, int64_t p, int threads) {
  return OpTest{.op = "LpNormalization",
                .opset = 22,
                .inputs = {In("x", x)},
                .attributes = {Int("axis", axis), Int("p", p)},
                .rtol = kTol,
                .atol = kTol,
                .threads = threads};
}

TEST(CpuNormalizationOps, LpNormRandomShapesMatchRef) {
  std::mt19937 rng(621);
  for (int i = 0; i < 48; ++i) {
    const int64_t rank = 1 + i % 4;
    const Shape xs = RandomShape(rng, rank, rank <= 2 ? 70 : 19);
    Tensor x = RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 7 == 0);
    const int64_t axis = Pick(rng, 0, rank - 1);
    if (i % 5 == 0) {  // a zero norm: the first line along the axis is all zeros
      int64_t stride = 1;
      for (int64_t d = axis + 1; d < rank; ++d) stride *= xs[static_cast<size_t>(d)];
      for (int64_t k = 0; k < xs[static_cast<size_t>(axis)]; ++k) x.data<float>()[k * stride] = 0.0f;
    }
    const OpTest t = LpTest(x, i % 3 == 0 ? axis - rank : axis, 1 + i % 2, 1 + (i / 2) % 2);
    ExpectEveryVariantMatchesRef(t, "cpu.f32_lp_normalization__", ".1", "case " + std::to_string(i) + ": " +
                                                                          DescribeCase(t));
  }
}

// One and several chunks of columns (inner > 1), long rows (inner == 1), all-zero lines, a scalar, empty tensors.
TEST(CpuNormalizationOps, LpNormChunksZerosScalarsAndEmptyTensorsMatchRef) {
  std::mt19937 rng(622);
  for (int threads : {1, 2}) {
    for (int64_t p : {1, 2}) {
      EXPECT_TRUE(MatchesRef(LpTest(RandomTensor(DataType::kFloat, {3, 7, 2500}, rng), 1, p, threads), "cpu"));
      EXPECT_TRUE(MatchesRef(LpTest(RandomTensor(DataType::kFloat, {40, 3001}, rng), -1, p, threads), "cpu"));
      EXPECT_TRUE(MatchesRef(LpTest(Tensor(DataType::kFloat, {4, 5, 6}), 1, p, threads), "cpu"));  // zeros
      EXPECT_TRUE(MatchesRef(LpTest(Tensor(DataType::kFloat, {3, 33}), -1, p, threads), "cpu"));
    }
  }
  Tensor scalar(DataType::kFloat, Shape{});
  scalar.data<float>()[0] = -2.5f;
  EXPECT_TRUE(MatchesRef(LpTest(scalar, -1, 2, 1), "cpu"));
  for (const Shape& xs : {Shape{0, 4}, Shape{3, 0}}) {
    EXPECT_TRUE(MatchesRef(LpTest(RandomTensor(DataType::kFloat, xs, rng), 0, 2, 2), "cpu")) << ShapeToString(xs);
  }
}

TEST(CpuNormalizationOps, LpNormBadInputsNameTheNode) {
  std::mt19937 rng(623);
  ExpectBadInput(LpTest(RandomTensor(DataType::kFloat, {2, 3}, rng), 2, 2, 1), "axis 2 is out of range for rank 2");
}

// ---- LRN -----------------------------------------------------------------------------------------------------------

OpTest LrnTest(const Tensor& x, int64_t size, float alpha, float beta, float bias, int threads) {
  return OpTest{.op = "LRN",
                .opset = 13,
                .inputs = {In("x", x)},
                .attributes = {Int("size", size), Float("alpha", alpha), Float("beta", beta), Float("bias", bias)},
                .rtol = kTol,
                .atol = kTol,
                .threads = threads};
}

TEST(CpuNormalizationOps, LrnRandomShapesAndAttributesMatchRef) {
  std::mt19937 rng(641);
  const float betas[] = {0.75f, 0.5f, 1.0f, 0.6f};
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = 2 + i % 4;
    Shape xs = RandomShape(rng, rank, rank <= 3 ? 40 : 11);
    xs[0] = Pick(rng, 1, 3);
    xs[1] = Pick(rng, 1, 21);
    const float alpha = i % 3 ? 1e-4f : 0.5f;
    OpTest t = LrnTest(RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 7 == 0), Pick(rng, 1, 7), alpha,
                       betas[i % 4], i % 5 ? 1.0f : 2.5f, 1 + (i / 2) % 2);
    ExpectEveryVariantMatchesRef(t, "cpu.f32_lrn__", ".1", "case " + std::to_string(i) + ": " + DescribeCase(t) +
                                                               " beta=" + std::to_string(betas[i % 4]));
  }
}

// Several spatial tiles (AlexNet-like planes), the defaults, opset 1, empty tensors.
TEST(CpuNormalizationOps, LrnTilesDefaultsAndEmptyTensorsMatchRef) {
  std::mt19937 rng(642);
  for (int threads : {1, 2}) {
    EXPECT_TRUE(MatchesRef(LrnTest(RandomTensor(DataType::kFloat, {2, 19, 27, 27}, rng, -4, 4), 5, 1e-4f, 0.75f, 2.0f,
                                   threads),
                           "cpu"));
  }
  OpTest t{.op = "LRN",
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 6, 300}, rng, -10, 10))},
           .attributes = {Int("size", 3)},
           .rtol = kTol,
           .atol = kTol};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  for (const Shape& xs : {Shape{0, 3, 4}, Shape{2, 3, 0}}) {
    EXPECT_TRUE(MatchesRef(LrnTest(RandomTensor(DataType::kFloat, xs, rng), 3, 1e-4f, 0.75f, 1.0f, 2), "cpu"))
        << ShapeToString(xs);
  }
}

TEST(CpuNormalizationOps, LrnBadInputsNameTheNode) {
  std::mt19937 rng(643);
  ExpectBadInput(LrnTest(RandomTensor(DataType::kFloat, {5}, rng), 3, 1e-4f, 0.75f, 1.0f, 1),
                 "input 'X' must have rank >= 2");
}

}  // namespace
}  // namespace ferry::testing
