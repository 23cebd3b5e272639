// The cpu kernel of ai.ferry SkipLayerNormalization (layer_norm_row.h, AVX-512F / AVX2+FMA / scalar) against ref:
// random ranks, axes (negative too) and row lengths that exercise the vector tails, Skip of X's shape, of X's
// trailing dims (with and without leading 1s: rows of Skip reused) and of fewer dims than the row (gathered per
// row), beta absent, the Sum output requested or not, gamma and beta constant or graph inputs, edge values, threads
// 1 and 2, every ISA variant (proven by the kernel that ran); BERT's shapes; accuracy for rows with a large mean;
// dynamic shapes run concurrently; empty tensors; Y and Sum written in place over a dying X; and bad inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

// Mean and variance are summed in lanes, ref sums sequentially.
constexpr double kRtol = 1e-4, kAtol = 1e-5;

OpTest SkipLnTest(const Shape& xs, const Shape& skip_shape, int64_t axis, bool beta, bool sum, bool constant,
                  int threads, std::mt19937& rng, bool edges = false) {
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t a = axis < 0 ? axis + rank : axis;
  int64_t n = 1;
  for (int64_t d = a; d < rank; ++d) n *= xs[static_cast<size_t>(d)];
  Tensor gamma = RandomTensor(DataType::kFloat, {n}, rng, -2, 2);
  OpTest t{.op = "SkipLayerNormalization",
           .domain = "ai.ferry",
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3, edges)),
                      In("skip", RandomTensor(DataType::kFloat, skip_shape, rng, -3, 3)),
                      constant ? Const("gamma", gamma) : In("gamma", gamma)},
           .attributes = {Int("axis", axis), Float("epsilon", 1e-5f)},
           .num_outputs = sum ? 2 : 1,
           .rtol = kRtol,
           .atol = kAtol,
           .threads = threads};
  if (beta) {
    Tensor b = RandomTensor(DataType::kFloat, {n}, rng);
    t.inputs.push_back(constant ? Const("beta", b) : In("beta", b));
  }
  return t;
}

// A random configuration: X of rank 1-4, an axis, Skip of one of the accepted forms.
OpTest RandomCase(std::mt19937& rng, int i) {
  const int64_t rank = Pick(rng, 1, 4);
  Shape xs;
  for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 70 : 19));
  const int64_t axis = Pick(rng, 0, rank - 1);
  Shape skip = xs;
  switch (Pick(rng, 0, 3)) {
    case 1:  // X's trailing dims
      skip.erase(skip.begin(), skip.begin() + Pick(rng, 0, rank - 1));
      break;
    case 2:  // ... with leading 1s
      for (int64_t d = 0; d < Pick(rng, 0, rank - 1); ++d) skip[static_cast<size_t>(d)] = 1;
      break;
    case 3:  // the last dim only (fewer elements than a row when axis < rank - 1)
      skip = {xs.back()};
      break;
    default: break;
  }
  return SkipLnTest(xs, skip, Pick(rng, 0, 1) ? axis : axis - rank, Pick(rng, 0, 2) > 0, Pick(rng, 0, 1) == 1,
                    Pick(rng, 0, 2) > 0, 1 + i % 2, rng, i % 5 == 0);
}

std::string Describe(const OpTest& t) { return DescribeCase(t) + " outputs=" + std::to_string(t.num_outputs); }

TEST(CpuSkipLayerNorm, RandomConfigurationsMatchRef) {
  std::mt19937 rng(808);
  for (int i = 0; i < 50; ++i) {
    const OpTest t = RandomCase(rng, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t);
  }
}

TEST(CpuSkipLayerNorm, EveryIsaVariantMatchesRef) {
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    SCOPED_TRACE(v.impl);
    std::mt19937 rng(17);
    for (int i = 0; i < 20; ++i) {
      const OpTest t = RandomCase(rng, i);
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_ferry_skiplayernormalization__") + v.impl +
                                                     ".1"))
          << "case " << i << ": " << Describe(t);
    }
  }
}

TEST(CpuSkipLayerNorm, BertShapesMatchRef) {
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    for (bool sum : {false, true}) {
      for (const Shape& skip : {Shape{2, 128, 768}, Shape{128, 768}}) {
        const OpTest t = SkipLnTest({2, 128, 768}, skip, -1, true, sum, true, threads, rng);
        EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t);
      }
    }
  }
}

TEST(CpuSkipLayerNorm, LargeMeanSmallVarianceIsAccurate) {
  // Rows of 768 sums in [999, 1001): checked against the exact result (in double) since ref's sequential float
  // sums are themselves off by ~1e-3 there; the two-pass variance keeps the kernel within 5e-4.
  std::mt19937 rng(13);
  const int64_t rows = 16, n = 768;
  OpTest t{.op = "SkipLayerNormalization",
           .domain = "ai.ferry",
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {rows, n}, rng, 998, 1000)),
                      In("skip", RandomTensor(DataType::kFloat, {rows, n}, rng, 1, 1.0001)),
                      Const("gamma", Tensor::FromVector<float>(DataType::kFloat, {n}, std::vector<float>(n, 1.0f)))}};
  const auto got = RunOn(t, {"cpu"}, true, 1);
  const float* x = t.inputs[0].value.data<float>();
  const float* k = t.inputs[1].value.data<float>();
  const float* y = got[0].second.data<float>();
  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += double(x[r * n + i] + k[r * n + i]);
    mean /= n;
    for (int64_t i = 0; i < n; ++i) var += std::pow(double(x[r * n + i] + k[r * n + i]) - mean, 2);
    const double inv = 1.0 / std::sqrt(var / n + 1e-5);
    for (int64_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::fabs(y[r * n + i] - (double(x[r * n + i] + k[r * n + i]) - mean) * inv));
    }
  }
  EXPECT_LT(worst, 5e-4);
}

TEST(CpuSkipLayerNorm, DynamicShapesRunConcurrently) {
  std::mt19937 rng(9);
  OpTest t = SkipLnTest({2, 3, 40}, {2, 3, 40}, -1, true, true, true, 2, rng);
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{2, 3, 40}, Shape{7, 1, 40}, Shape{1, 33, 40}, Shape{0, 3, 40}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}, {"skip", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuSkipLayerNorm, EmptyTensors) {
  std::mt19937 rng(3);
  for (bool sum : {false, true}) {
    EXPECT_TRUE(MatchesRef(SkipLnTest({0, 4}, {0, 4}, -1, true, sum, true, 1, rng), "cpu"));
    EXPECT_TRUE(MatchesRef(SkipLnTest({3, 0}, {0}, 0, false, sum, true, 1, rng), "cpu"));
  }
}

// X (and Skip) computed in the graph and read by nothing after the fused node: Y, or Sum, takes over X's buffer.
TEST(CpuSkipLayerNorm, InPlaceOverADyingInputMatchesRef) {
  std::mt19937 rng(21);
  for (bool sum : {false, true}) {
    for (bool skip_dies : {false, true}) {
      onnx::ModelProto m;
      m.set_ir_version(10);
      for (auto [domain, version] : {std::pair<const char*, int>{"", 17}, {"ai.ferry", 1}}) {
        auto* imp = m.add_opset_import();
        imp->set_domain(domain);
        imp->set_version(version);
      }
      auto* g = m.mutable_graph();
      g->set_name("in_place");
      for (const char* name : {"a", "b"}) {
        auto* in = g->add_input();
        in->set_name(name);
        auto* tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        for (int64_t d : {4, 6, 37}) tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
      ir::TensorToProto(RandomTensor(DataType::kFloat, {37}, rng), "gamma", g->add_initializer());
      auto node = [&](const std::string& op, const std::string& domain, std::vector<std::string> ins,
                      std::vector<std::string> outs) {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_domain(domain);
        n->set_name(op + std::to_string(g->node_size()));
        for (const auto& i : ins) n->add_input(i);
        for (const auto& o : outs) n->add_output(o);
      };
      node("Relu", "", {"a"}, {"ra"});
      node("Neg", "", {"b"}, {"nb"});
      node("SkipLayerNormalization", "ai.ferry", {skip_dies ? "a" : "ra", skip_dies ? "nb" : "b", "gamma"},
           sum ? std::vector<std::string>{"y", "s"} : std::vector<std::string>{"y"});
      g->add_output()->set_name("y");
      if (sum) g->add_output()->set_name("s");
      const std::string bytes = m.SerializeAsString();
      const std::vector<std::pair<std::string, Tensor>> feeds{
          {"a", RandomTensor(DataType::kFloat, {4, 6, 37}, rng)},
          {"b", RandomTensor(DataType::kFloat, {4, 6, 37}, rng)}};
      const auto want = SessionFor(bytes, {"ref"}, true, 1)->Run(feeds);
      const auto got = SessionFor(bytes, {"cpu", "ref"}, false, 2)->Run(feeds);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(TensorsClose(got[i].second, want[i].second, kRtol, kAtol)) << "sum " << sum << " output " << i;
      }
    }
  }
}

TEST(CpuSkipLayerNorm, BadInputsNameTheInput) {
  std::mt19937 rng(4);
  struct Case {
    Shape x, skip, gamma;
    std::string message;
  };
  for (const Case& c : {Case{{2, 8}, {3, 8}, {8}, "input 'Skip' of shape [3,8]"},
                        Case{{2, 8}, {2, 1}, {8}, "input 'Skip' of shape [2,1]"},
                        Case{{2, 8}, {2, 8}, {4}, "input 'gamma' of shape [4]"}}) {
    OpTest t{.op = "SkipLayerNormalization",
             .domain = "ai.ferry",
             .opset = 1,
             .inputs = {In("x", RandomTensor(DataType::kFloat, c.x, rng)),
                        In("skip", RandomTensor(DataType::kFloat, c.skip, rng)),
                        In("gamma", RandomTensor(DataType::kFloat, c.gamma, rng))}};
    for (const char* backend : {"cpu", "ref"}) {
      try {
        RunOn(t, {backend}, true, 1);
        ADD_FAILURE() << backend << ": expected an error for " << c.message;
      } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << backend << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ferry::testing
