// The cpu kernels of RMSNormalization (opset 23) and ai.ferry::RMSNormalization (layer_norm_row.h, AVX-512F /
// AVX2+FMA / scalar) against ref: random ranks, axes (negative too) and row lengths that exercise the vector tails,
// scale of the normalized shape (with and without leading 1s), constant or a graph input, epsilon, edge values,
// threads 1 and 2, both domains, every ISA variant (proven by the kernel that ran); LLaMA-like rows; scales that
// only broadcast, seen first at run time (dynamic shapes, run concurrently); empty tensors; Y written in place over a
// dying X; the configurations it refuses (and their fallback to ref); and bad inputs.
#include <gtest/gtest.h>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

// The sum of squares is summed in lanes, ref sums sequentially: the terms are all >= 0, so the two sums differ by a
// few ulps, and the inverse square root halves that.
constexpr double kTol = 1e-5;

struct Domain {
  const char* domain;
  int64_t opset;
  const char* name_prefix;  // of the kernel names
  const char* name_suffix;
};
constexpr Domain kStandard{"", 23, "cpu.f32_rms_normalization__", ".23"};
constexpr Domain kFerry{"ai.ferry", 1, "cpu.f32_ferry_rms_normalization__", ".1"};

OpTest RmsTest(const Domain& dom, const Tensor& x, const Tensor& scale, int64_t axis, bool constant, int threads) {
  return OpTest{.op = "RMSNormalization",
                .domain = dom.domain,
                .opset = dom.opset,
                .inputs = {In("x", x), constant ? Const("scale", scale) : In("scale", scale)},
                .attributes = {Int("axis", axis)},
                .rtol = kTol,
                .atol = kTol,
                .threads = threads};
}

// A random configuration: X of rank 1-4, an axis, a scale of the normalized shape (sometimes with leading 1s).
OpTest RandomCase(std::mt19937& rng, int i) {
  const int64_t rank = Pick(rng, 1, 4);
  Shape xs;
  for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 70 : 19));
  const int64_t axis = Pick(rng, 0, rank - 1);
  Shape ss(xs.begin() + axis, xs.end());
  if (axis > 0 && Pick(rng, 0, 2) == 0) ss.insert(ss.begin(), static_cast<size_t>(Pick(rng, 1, axis)), 1);
  const Domain& dom = i % 2 ? kFerry : kStandard;
  OpTest t = RmsTest(dom, RandomTensor(DataType::kFloat, xs, rng, -3, 3, /*edges=*/i % 5 == 0),
                     RandomTensor(DataType::kFloat, ss, rng, -2, 2), Pick(rng, 0, 1) ? axis : axis - rank,
                     Pick(rng, 0, 2) > 0, 1 + (i / 2) % 2);
  if (Pick(rng, 0, 1)) t.attributes.push_back(Float("epsilon", i % 3 ? 1e-6f : 0.25f));
  if (Pick(rng, 0, 3) == 0) t.attributes.push_back(Int("stash_type", 1));
  return t;
}

TEST(CpuRmsNormalization, RandomConfigurationsMatchRef) {
  std::mt19937 rng(2323);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomCase(rng, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << t.domain << " " << DescribeCase(t);
  }
}

TEST(CpuRmsNormalization, EveryIsaVariantMatchesRef) {
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    SCOPED_TRACE(v.impl);
    std::mt19937 rng(17);
    for (int i = 0; i < 24; ++i) {
      const OpTest t = RandomCase(rng, i);
      const Domain& dom = t.domain.empty() ? kStandard : kFerry;
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string(dom.name_prefix) + v.impl + dom.name_suffix))
          << "case " << i << ": " << t.domain << " " << DescribeCase(t);
    }
  }
}

// Every row length from 1 to 70 (each tail of 16- and 8-lane vectors, one or two vectors per add chain).
TEST(CpuRmsNormalization, EveryTailLengthMatchesRef) {
  std::mt19937 rng(31);
  for (int64_t n = 1; n <= 70; ++n) {
    const OpTest t = RmsTest(kStandard, RandomTensor(DataType::kFloat, {3, n}, rng, -3, 3),
                             RandomTensor(DataType::kFloat, {n}, rng), -1, true, 1);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "n " << n;
  }
}

// LLaMA-like rows (4096 values): ref's sequential float sum of 4096 squares is itself off by ~n·ulp/2 at worst;
// the lanes' sum differs from it by far less in practice, so the tolerance stays 1e-5 (checked here).
TEST(CpuRmsNormalization, LlamaShapesMatchRef) {
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    for (const Domain& dom : {kStandard, kFerry}) {
      OpTest t = RmsTest(dom, RandomTensor(DataType::kFloat, {1, 24, 4096}, rng, -4, 4),
                         RandomTensor(DataType::kFloat, {4096}, rng, 0.5, 1.5), -1, true, threads);
      t.attributes.push_back(Float("epsilon", 1e-6f));
      EXPECT_TRUE(MatchesRef(t, "cpu")) << dom.name_prefix << " threads " << threads;
    }
  }
}

// Shapes unknown until run time: the shape predicate cannot judge, so scales that only broadcast (to the normalized
// shape, or to X's shape) reach the kernel, which expands them as ref does.
TEST(CpuRmsNormalization, DynamicShapesAndBroadcastScalesRunConcurrently) {
  std::mt19937 rng(9);
  // scale of rank 2 and of rank 3 (the graph input's rank is fixed), axis 1 of X [d0, d1, d2].
  for (const auto& runs_shapes : std::vector<std::vector<std::pair<Shape, Shape>>>{
           {{{2, 3, 40}, {3, 40}},     // one row
            {{7, 1, 33}, {1, 33}},     // one row
            {{1, 33, 40}, {1, 40}},    // broadcasts to the normalized shape
            {{2, 5, 17}, {5, 1}},      // broadcasts to the normalized shape
            {{0, 3, 40}, {3, 40}}},    // empty
           {{{2, 3, 40}, {1, 3, 40}},  // one row
            {{2, 5, 17}, {2, 5, 17}},  // X's shape
            {{2, 5, 17}, {2, 1, 1}},   // broadcasts to X's shape
            {{3, 4, 9}, {1, 1, 9}}}}) {
    const auto& [xs0, ss0] = runs_shapes[0];
    const OpTest t = RmsTest(kStandard, RandomTensor(DataType::kFloat, xs0, rng),
                             RandomTensor(DataType::kFloat, ss0, rng), 1, false, 2);
    std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
    for (const auto& [xs, ss] : runs_shapes) {
      runs.push_back(
          {{"x", RandomTensor(DataType::kFloat, xs, rng)}, {"scale", RandomTensor(DataType::kFloat, ss, rng)}});
    }
    ExpectDynamicMatchesRef(t, runs, true);
  }
}

TEST(CpuRmsNormalization, EmptyTensors) {
  std::mt19937 rng(3);
  for (const Domain& dom : {kStandard, kFerry}) {
    EXPECT_TRUE(MatchesRef(RmsTest(dom, RandomTensor(DataType::kFloat, {0, 4}, rng),
                                   RandomTensor(DataType::kFloat, {4}, rng), -1, true, 1),
                           "cpu"));
    EXPECT_TRUE(MatchesRef(RmsTest(dom, RandomTensor(DataType::kFloat, {3, 0}, rng),
                                   RandomTensor(DataType::kFloat, {0}, rng), 1, false, 2),
                           "cpu"));
  }
}

// X computed in the graph and read by nothing after the RMSNormalization: Y takes over X's buffer.
TEST(CpuRmsNormalization, InPlaceOverADyingInputMatchesRef) {
  std::mt19937 rng(21);
  for (bool x_dies : {true, false}) {
    onnx::ModelProto m;
    m.set_ir_version(10);
    auto* imp = m.add_opset_import();
    imp->set_domain("");
    imp->set_version(23);
    auto* g = m.mutable_graph();
    g->set_name("in_place");
    auto* in = g->add_input();
    in->set_name("a");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {4, 6, 37}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    ir::TensorToProto(RandomTensor(DataType::kFloat, {37}, rng), "scale", g->add_initializer());
    auto node = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
      auto* n = g->add_node();
      n->set_op_type(op);
      n->set_name(op + std::to_string(g->node_size()));
      for (const auto& i : ins) n->add_input(i);
      n->add_output(out);
    };
    node("Neg", {"a"}, "na");
    node("RMSNormalization", {"na", "scale"}, "y");
    g->add_output()->set_name("y");
    if (!x_dies) g->add_output()->set_name("na");
    const std::string bytes = m.SerializeAsString();
    const std::vector<std::pair<std::string, Tensor>> feeds{{"a", RandomTensor(DataType::kFloat, {4, 6, 37}, rng)}};
    const auto want = SessionFor(bytes, {"ref"}, true, 1)->Run(feeds);
    auto session = SessionFor(bytes, {"cpu"}, true, 2);
    EXPECT_EQ(session->placement().nodes.at(1).backend, "cpu");
    const auto got = session->Run(feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(TensorsClose(got[i].second, want[i].second, kTol, kTol)) << "x dies " << x_dies << " output " << i;
    }
  }
}

TEST(CpuRmsNormalization, RefusesWithReasonsAndFallsBackToRef) {
  std::mt19937 rng(4);
  for (const Domain& dom : {kStandard, kFerry}) {
    SCOPED_TRACE(dom.name_prefix);
    const Tensor x = RandomTensor(DataType::kFloat, {2, 5, 16}, rng);
    // Statistics in double (or half) precision.
    for (int64_t stash : {11, 10}) {
      OpTest t = RmsTest(dom, x, RandomTensor(DataType::kFloat, {16}, rng), -1, true, 1);
      t.attributes.push_back(Int("stash_type", stash));
      ExpectRefusedAndFallsBack(t, "RMSNormalization: stash_type " + std::to_string(stash) +
                                       " (not float) is not implemented on cpu");
    }
    // Scales that only broadcast: to the normalized shape [5,16], or to X's shape.
    for (const Shape& ss : {Shape{16}, Shape{5, 1}, Shape{2, 1, 16}, Shape{2, 5, 16}}) {
      for (bool constant : {true, false}) {
        const OpTest t = RmsTest(dom, x, RandomTensor(DataType::kFloat, ss, rng), 1, constant, 1);
        ExpectRefusedAndFallsBack(t, "RMSNormalization: scale of shape " + ShapeToString(ss) +
                                         " is not one row of the normalized shape [5,16]");
      }
    }
  }
}

TEST(CpuRmsNormalization, BadInputsNameTheInput) {
  std::mt19937 rng(6);
  for (const Shape& ss : {Shape{3}, Shape{3, 8}, Shape{1, 2, 8}}) {
    const OpTest t = RmsTest(kStandard, RandomTensor(DataType::kFloat, {2, 8}, rng),
                             RandomTensor(DataType::kFloat, ss, rng), -1, false, 1);
    const std::string bytes = DynamicOneNodeModel(t);  // static shapes would fail shape inference first
    for (const char* backend : {"cpu", "ref"}) {
      try {
        SessionFor(bytes, {backend}, true, 1)->Run(Feeds(t));
        ADD_FAILURE() << backend << ": expected an error for scale " << ShapeToString(ss);
      } catch (const InvalidArgumentError& e) {
        EXPECT_NE(std::string(e.what()).find("input 'scale' of shape " + ShapeToString(ss)), std::string::npos)
            << backend << ": " << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace ferry::testing
