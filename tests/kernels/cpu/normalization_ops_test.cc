// The cpu kernels of InstanceNormalization, GroupNormalization (opsets 18 and 21), LpNormalization,
// MeanVarianceNormalization and LRN (normalization_rows.h, AVX-512F / AVX2+FMA / scalar) against ref: random shapes
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

// ---- InstanceNormalization ---------------------------------------------------------------------------------------

OpTest InstanceTest(const Tensor& x, std::mt19937& rng, bool constant, int threads, int64_t opset = 22) {
  const int64_t c = x.dim(1);
  const Tensor s = RandomTensor(DataType::kFloat, {c}, rng, -2, 2), b = RandomTensor(DataType::kFloat, {c}, rng);
  return OpTest{.op = "InstanceNormalization",
                .opset = opset,
                .inputs = {In("x", x), constant ? Const("s", s) : In("s", s), constant ? Const("b", b) : In("b", b)},
                .rtol = kTol,
                .atol = kTol,
                .threads = threads};
}

TEST(CpuNormalizationOps, InstanceNormRandomShapesMatchRef) {
  std::mt19937 rng(601);
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = 2 + i % 4;  // 0-D to 3-D spatial
    Shape xs = RandomShape(rng, rank, rank <= 3 ? 40 : 11);
    xs[0] = Pick(rng, 1, 3);
    xs[1] = Pick(rng, 1, 21);
    OpTest t = InstanceTest(RandomTensor(DataType::kFloat, xs, rng, -3, 5, /*edges=*/i % 7 == 0), rng, i % 3 > 0,
                            1 + i % 2, i % 2 ? 22 : 6);
    if (i % 3 == 0) t.attributes.push_back(Float("epsilon", i % 2 ? 1e-2f : 0.5f));
    ExpectEveryVariantMatchesRef(t, "cpu.f32_instance_normalization__", ".1", "case " + std::to_string(i) + ": " +
                                                                               DescribeCase(t));
  }
}

// Planes longer than the parallel grain (several threads) and every tail length of 16- and 8-lane vectors.
TEST(CpuNormalizationOps, InstanceNormLargeAndTailPlanesMatchRef) {
  std::mt19937 rng(602);
  for (int threads : {1, 2}) {
    EXPECT_TRUE(MatchesRef(InstanceTest(RandomTensor(DataType::kFloat, {2, 19, 61, 67}, rng, -1, 3), rng, true,
                                        threads),
                           "cpu"))
        << "threads " << threads;
  }
  for (int64_t n = 1; n <= 70; ++n) {
    EXPECT_TRUE(MatchesRef(InstanceTest(RandomTensor(DataType::kFloat, {1, 3, n}, rng), rng, true, 1), "cpu"))
        << "spatial " << n;
  }
}

// Planes of 1, 2, 3, 7, 11 and 15 values (shorter than 16: summed as ref sums them, in every variant) whose values are close (a
// variance far below epsilon, so mean * mul dwarfs y and any rounding of the mean shows), and one-element planes
// of +-1e30 with a tiny epsilon: y = round(x * mul) + (b - round(mean * mul)) cancels exactly in ref, where a fused
// multiply-add once left -6.9e21.
TEST(CpuNormalizationOps, InstanceNormShortAndOneElementPlanesMatchRef) {
  std::mt19937 rng(606);
  for (const Shape& xs : {Shape{2, 5, 1}, Shape{2, 5, 2}, Shape{1, 4, 3}, Shape{1, 3, 7}, Shape{2, 3, 1, 1},
                          Shape{1, 2, 1, 1, 1}, Shape{3, 2, 1, 7}, Shape{1, 2, 11}, Shape{2, 2, 3, 5}}) {
    OpTest t = InstanceTest(RandomTensor(DataType::kFloat, xs, rng, 4.999, 5.001), rng, true, 1);
    ExpectEveryVariantMatchesRef(t, "cpu.f32_instance_normalization__", ".1", "close values " + ShapeToString(xs));
    Tensor x = RandomTensor(DataType::kFloat, xs, rng, -3, 5);
    if (xs.back() == 1) {
      x.data<float>()[0] = 1e30f;
      x.data<float>()[1] = -1e30f;
    }
    t = InstanceTest(x, rng, false, 2);
    t.attributes.push_back(Float("epsilon", 1e-9f));
    ExpectEveryVariantMatchesRef(t, "cpu.f32_instance_normalization__", ".1", "large values " + ShapeToString(xs));
  }
}

TEST(CpuNormalizationOps, InstanceNormEmptyTensors) {
  std::mt19937 rng(603);
  for (const Shape& xs : {Shape{0, 3, 4}, Shape{2, 3, 0}, Shape{2, 0, 5}}) {
    EXPECT_TRUE(MatchesRef(InstanceTest(RandomTensor(DataType::kFloat, xs, rng), rng, false, 2), "cpu"))
        << ShapeToString(xs);
  }
}

// X computed in the graph and read by nothing after the InstanceNormalization: Y takes over X's buffer.
TEST(CpuNormalizationOps, InstanceNormInPlaceOverADyingInputMatchesRef) {
  std::mt19937 rng(604);
  for (bool x_dies : {true, false}) {
    onnx::ModelProto m;
    m.set_ir_version(10);
    auto* imp = m.add_opset_import();
    imp->set_domain("");
    imp->set_version(22);
    auto* g = m.mutable_graph();
    g->set_name("in_place");
    auto* in = g->add_input();
    in->set_name("a");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {2, 5, 7, 9}) tt->mutable_shape()->add_dim()->set_dim_value(d);
    ir::TensorToProto(RandomTensor(DataType::kFloat, {5}, rng), "s", g->add_initializer());
    ir::TensorToProto(RandomTensor(DataType::kFloat, {5}, rng), "b", g->add_initializer());
    auto node = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
      auto* n = g->add_node();
      n->set_op_type(op);
      n->set_name(op + std::to_string(g->node_size()));
      for (const auto& i : ins) n->add_input(i);
      n->add_output(out);
    };
    node("Neg", {"a"}, "na");
    node("InstanceNormalization", {"na", "s", "b"}, "y");
    g->add_output()->set_name("y");
    if (!x_dies) g->add_output()->set_name("na");
    const std::string bytes = m.SerializeAsString();
    const std::vector<std::pair<std::string, Tensor>> feeds{{"a", RandomTensor(DataType::kFloat, {2, 5, 7, 9}, rng)}};
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

TEST(CpuNormalizationOps, InstanceNormBadInputsNameTheNode) {
  std::mt19937 rng(605);
  OpTest t = InstanceTest(RandomTensor(DataType::kFloat, {2, 4, 3}, rng), rng, false, 1);
  t.inputs[1].value = RandomTensor(DataType::kFloat, {3}, rng);
  ExpectBadInput(t, "inputs 'scale' and 'B' must have C = 4 elements, got 3 and 4");
  t = InstanceTest(RandomTensor(DataType::kFloat, {2, 4}, rng), rng, false, 1);
  t.inputs[0].value = RandomTensor(DataType::kFloat, {4}, rng);
  ExpectBadInput(t, "input 'input' must have rank >= 2");
}

// ---- GroupNormalization ------------------------------------------------------------------------------------------

OpTest GroupTest(const Tensor& x, int64_t groups, int64_t opset, std::mt19937& rng, bool constant, int threads) {
  const int64_t params = opset >= 21 ? x.dim(1) : groups;
  const Tensor s = RandomTensor(DataType::kFloat, {params}, rng, -2, 2);
  const Tensor b = RandomTensor(DataType::kFloat, {params}, rng);
  return OpTest{.op = "GroupNormalization",
                .opset = opset,
                .inputs = {In("x", x), constant ? Const("s", s) : In("s", s), constant ? Const("b", b) : In("b", b)},
                .attributes = {Int("num_groups", groups)},
                .rtol = kTol,
                .atol = kTol,
                .threads = threads};
}

TEST(CpuNormalizationOps, GroupNormRandomShapesMatchRef) {
  std::mt19937 rng(611);
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = 2 + i % 4;
    const int64_t groups = Pick(rng, 1, 6), group_channels = Pick(rng, 1, 5);
    Shape xs = RandomShape(rng, rank, rank <= 3 ? 40 : 9);
    xs[0] = Pick(rng, 1, 3);
    xs[1] = groups * group_channels;
    const int64_t opset = i % 2 ? 21 : 18;
    OpTest t = GroupTest(RandomTensor(DataType::kFloat, xs, rng, -3, 5, /*edges=*/i % 7 == 0), groups, opset, rng,
                         i % 3 > 0, 1 + (i / 2) % 2);
    if (i % 3 == 0) t.attributes.push_back(Float("epsilon", i % 2 ? 1e-2f : 0.5f));
    if (opset == 21 && i % 4 == 1) t.attributes.push_back(Int("stash_type", i % 8 == 1 ? 1 : 11));
    ExpectEveryVariantMatchesRef(t, "cpu.f32_group_normalization__", ".18", "case " + std::to_string(i) + ": " +
                                                                             DescribeCase(t));
  }
}

TEST(CpuNormalizationOps, GroupNormLargeBlocksAndEmptyTensorsMatchRef) {
  std::mt19937 rng(612);
  for (int threads : {1, 2}) {
    for (int64_t opset : {18, 21}) {
      EXPECT_TRUE(MatchesRef(GroupTest(RandomTensor(DataType::kFloat, {2, 12, 33, 45}, rng), 4, opset, rng, true,
                                       threads),
                             "cpu"))
          << "opset " << opset << " threads " << threads;
    }
  }
  for (const Shape& xs : {Shape{0, 6, 4}, Shape{2, 6, 0}}) {
    EXPECT_TRUE(MatchesRef(GroupTest(RandomTensor(DataType::kFloat, xs, rng), 3, 21, rng, false, 1), "cpu"))
        << ShapeToString(xs);
  }
}

// Blocks of 1, 2, 3 and 7 values of close values, and one-element blocks of +-1e30 with a tiny epsilon (as for
// InstanceNormalization above).
TEST(CpuNormalizationOps, GroupNormShortAndOneElementBlocksMatchRef) {
  std::mt19937 rng(614);
  struct Case {
    Shape x;
    int64_t groups;
  };
  for (const Case& c : {Case{{2, 6, 1}, 6}, Case{{2, 6, 1}, 3}, Case{{1, 3, 1, 1}, 1}, Case{{1, 7, 1}, 1},
                        Case{{2, 4, 2}, 4}, Case{{1, 2, 7}, 2}}) {
    for (int64_t opset : {18, 21}) {
      const std::string what = ShapeToString(c.x) + " groups " + std::to_string(c.groups) + " opset " +
                               std::to_string(opset);
      OpTest t = GroupTest(RandomTensor(DataType::kFloat, c.x, rng, 4.999, 5.001), c.groups, opset, rng, true, 1);
      ExpectEveryVariantMatchesRef(t, "cpu.f32_group_normalization__", ".18", "close values " + what);
      Tensor x = RandomTensor(DataType::kFloat, c.x, rng, -3, 5);
      x.data<float>()[0] = 1e30f;
      x.data<float>()[x.size() - 1] = -1e30f;
      t = GroupTest(x, c.groups, opset, rng, false, 2);
      t.attributes.push_back(Float("epsilon", 1e-9f));
      ExpectEveryVariantMatchesRef(t, "cpu.f32_group_normalization__", ".18", "large values " + what);
    }
  }
}

TEST(CpuNormalizationOps, GroupNormBadInputsNameTheNode) {
  std::mt19937 rng(613);
  ExpectBadInput(GroupTest(RandomTensor(DataType::kFloat, {2, 6, 3}, rng), 4, 21, rng, false, 1),
                 "C = 6 is not divisible by num_groups = 4");
  OpTest t = GroupTest(RandomTensor(DataType::kFloat, {2, 6, 3}, rng), 3, 18, rng, false, 1);
  t.inputs[1].value = RandomTensor(DataType::kFloat, {6}, rng);  // per channel, where opset 18 wants per group
  ExpectBadInput(t, "inputs 'scale' and 'bias' must have 3 (num_groups) elements, got 6 and 3");
}

// ---- LpNormalization ---------------------------------------------------------------------------------------------

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

// ---- MeanVarianceNormalization -----------------------------------------------------------------------------------

OpTest MvnTest(const Tensor& x, const std::vector<int64_t>* axes, int64_t opset, int threads) {
  OpTest t{.op = "MeanVarianceNormalization",
           .opset = opset,
           .inputs = {In("x", x)},
           .rtol = kTol,
           .atol = kTol,
           .threads = threads};
  if (axes) t.attributes.push_back(Ints("axes", *axes));
  return t;
}

TEST(CpuNormalizationOps, MvnRandomShapesAndAxesMatchRef) {
  std::mt19937 rng(631);
  for (int i = 0; i < 48; ++i) {
    const int64_t rank = 1 + i % 5;
    Shape xs = RandomShape(rng, rank, rank <= 2 ? 60 : 11);
    if (i % 4 == 0) xs[static_cast<size_t>(Pick(rng, 0, rank - 1))] = 1;  // a unit dim to drop
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (Pick(rng, 0, 1)) axes.push_back(Pick(rng, 0, 1) ? d : d - rank);
    }
    if (axes.empty()) axes.push_back(Pick(rng, 0, rank - 1));
    const OpTest t = MvnTest(RandomTensor(DataType::kFloat, xs, rng, -2, 3, /*edges=*/i % 9 == 0), &axes,
                             i % 2 ? 13 : 9, 1 + (i / 2) % 2);
    ExpectEveryVariantMatchesRef(t, "cpu.f32_mean_variance_normalization__", ".9", "case " + std::to_string(i) +
                                                                                     ": " + DescribeCase(t));
  }
}

// The default axes [0, 2, 3]; statistics over rows (innermost run reduced) and over columns, one and several chunks
// of them (innermost run kept); empty tensors.
TEST(CpuNormalizationOps, MvnLayoutsAndEmptyTensorsMatchRef) {
  std::mt19937 rng(632);
  const std::vector<int64_t> first{0}, middle{1}, last{-1};
  for (int threads : {1, 2}) {
    EXPECT_TRUE(MatchesRef(MvnTest(RandomTensor(DataType::kFloat, {3, 5, 17, 19}, rng), nullptr, 13, threads), "cpu"));
    EXPECT_TRUE(MatchesRef(MvnTest(RandomTensor(DataType::kFloat, {6, 2500}, rng), &first, 13, threads), "cpu"));
    EXPECT_TRUE(MatchesRef(MvnTest(RandomTensor(DataType::kFloat, {3, 40, 70}, rng), &middle, 9, threads), "cpu"));
    EXPECT_TRUE(MatchesRef(MvnTest(RandomTensor(DataType::kFloat, {30, 3000}, rng), &last, 13, threads), "cpu"));
  }
  for (const Shape& xs : {Shape{0, 3, 4, 5}, Shape{2, 3, 0, 5}}) {
    EXPECT_TRUE(MatchesRef(MvnTest(RandomTensor(DataType::kFloat, xs, rng), nullptr, 13, 2), "cpu"))
        << ShapeToString(xs);
  }
}

// Statistics over 1, 2, 3 and 7 close values, along rows and along columns: the one-pass variance cancels, so
// only ref's own roundings give ref's result.
TEST(CpuNormalizationOps, MvnFewCloseValuesMatchRef) {
  std::mt19937 rng(634);
  const std::vector<int64_t> nchw{0, 2, 3}, first{0}, last{-1};
  struct Case {
    Shape x;
    const std::vector<int64_t>* axes;
  };
  for (const Case& c : {Case{{1, 4, 1, 1}, &nchw}, Case{{2, 3, 1, 1}, &nchw}, Case{{3, 5, 1, 1}, &nchw},
                        Case{{1, 2, 7, 1}, &nchw}, Case{{2, 37}, &first}, Case{{7, 20}, &first},
                        Case{{40, 3}, &last}, Case{{5, 7}, &last}, Case{{1, 1}, &last}}) {
    const OpTest t = MvnTest(RandomTensor(DataType::kFloat, c.x, rng, 4.99, 5.01), c.axes, 13, 1);
    ExpectEveryVariantMatchesRef(t, "cpu.f32_mean_variance_normalization__", ".9", ShapeToString(c.x));
  }
}

TEST(CpuNormalizationOps, MvnBadInputsNameTheNode) {
  std::mt19937 rng(633);
  ExpectBadInput(MvnTest(RandomTensor(DataType::kFloat, {2, 3, 4}, rng), nullptr, 13, 1),
                 "axis 3 is out of range for rank 3");
}

// ---- LRN ---------------------------------------------------------------------------------------------------------

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
