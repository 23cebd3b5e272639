// Blocked-layout twins mapped back to the ONNX layout (tools/compare_unblock.h), and `ferry compare --layerwise`
// comparing the values the cpu backend keeps only in a blocked layout at level 3.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/isa.h"
#include "kernels/kernel.h"
#include "testing/model_builder.h"
#include "testing/perturb_backend.h"
#include "tools/compare.h"
#include "tools/compare_format.h"
#include "tools/compare_layerwise.h"
#include "tools/compare_unblock.h"

namespace ferry {
namespace {

using testing::ModelBuilder;

// Plain [N, C, S...] with element i = i, and its twin written by hand from the layout's definition: block b >= 1
// at [n, c / b, s..., c % b] with the padding lanes set to -777; block 0 at [n, s..., c].
struct Pair {
  Tensor plain, twin;
};
Pair MakePair(const Shape& logical, int64_t block) {
  Pair p;
  p.plain = Tensor(DataType::kFloat, logical);
  for (int64_t i = 0; i < p.plain.size(); ++i) p.plain.data<float>()[i] = static_cast<float>(i);
  const int64_t n = logical[0], c = logical[1];
  int64_t s = 1;
  Shape spatial(logical.begin() + 2, logical.end());
  for (int64_t d : spatial) s *= d;
  Shape twin_shape{n};
  const int64_t lanes = block > 0 ? block : c, blocks = block > 0 ? (c + block - 1) / block : 1;
  if (block > 0) twin_shape.push_back(blocks);
  twin_shape.insert(twin_shape.end(), spatial.begin(), spatial.end());
  twin_shape.push_back(lanes);
  p.twin = Tensor(DataType::kFloat, twin_shape);
  for (int64_t i = 0; i < p.twin.size(); ++i) p.twin.data<float>()[i] = -777.0f;
  for (int64_t ni = 0; ni < n; ++ni) {
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t si = 0; si < s; ++si) {
        const int64_t at = ((ni * blocks + ci / lanes) * s + si) * lanes + ci % lanes;
        p.twin.data<float>()[at] = p.plain.data<float>()[(ni * c + ci) * s + si];
      }
    }
  }
  return p;
}

void ExpectSame(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  for (int64_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << "element " << i;
  }
}

TEST(CompareUnblock, BlockOf8WithPaddingLanes) {
  const Pair p = MakePair({2, 12, 3, 5}, 8);
  ASSERT_EQ(p.twin.shape(), (Shape{2, 2, 3, 5, 8}));
  const tools::Unblocked u = tools::UnblockTwin(p.twin, std::vector<int64_t>{2, 12, 3, 5});
  ASSERT_TRUE(u.ok()) << u.problem;
  EXPECT_EQ(u.block, 8);
  ExpectSame(u.tensor, p.plain);
}

TEST(CompareUnblock, BlockOf16WithUnknownBatchAndSpatialDims) {
  const Pair p = MakePair({3, 20, 4, 2}, 16);
  const tools::Unblocked u = tools::UnblockTwin(p.twin, std::vector<int64_t>{-1, 20, -1, -1});
  ASSERT_TRUE(u.ok()) << u.problem;
  EXPECT_EQ(u.block, 16);
  ExpectSame(u.tensor, p.plain);
}

TEST(CompareUnblock, ChannelsLast) {
  const Pair p = MakePair({2, 5, 3, 4}, 0);
  ASSERT_EQ(p.twin.shape(), (Shape{2, 3, 4, 5}));
  // Its channel count comes from the twin itself: an unknown C is fine.
  const tools::Unblocked u = tools::UnblockTwin(p.twin, std::vector<int64_t>{2, -1, 3, 4});
  ASSERT_TRUE(u.ok()) << u.problem;
  EXPECT_EQ(u.block, 0);
  ExpectSame(u.tensor, p.plain);
  // A square case where the twin's shape equals the plain one: still a permutation.
  const Pair q = MakePair({1, 3, 3, 3}, 0);
  const tools::Unblocked v = tools::UnblockTwin(q.twin, std::vector<int64_t>{1, 3, 3, 3});
  ASSERT_TRUE(v.ok()) << v.problem;
  ExpectSame(v.tensor, q.plain);
}

TEST(CompareUnblock, OneAndThreeSpatialDims) {
  for (int64_t block : {0, 8, 16}) {
    const Pair p1 = MakePair({2, 9, 7}, block);
    const tools::Unblocked u1 = tools::UnblockTwin(p1.twin, p1.plain.shape());
    ASSERT_TRUE(u1.ok()) << u1.problem;
    ExpectSame(u1.tensor, p1.plain);
    const Pair p3 = MakePair({1, 17, 2, 3, 2}, block);
    const tools::Unblocked u3 = tools::UnblockTwin(p3.twin, p3.plain.shape());
    ASSERT_TRUE(u3.ok()) << u3.problem;
    ExpectSame(u3.tensor, p3.plain);
  }
}

TEST(CompareUnblock, RefusesWhatItCannotMap) {
  const Pair p = MakePair({1, 12, 2, 2}, 8);
  // A block needs the channel count to drop the padding lanes.
  EXPECT_NE(tools::UnblockTwin(p.twin, std::vector<int64_t>{1, -1, 2, 2}).problem.find("channel count is unknown"),
            std::string::npos);
  // Unknown rank, rank 1.
  EXPECT_NE(tools::UnblockTwin(p.twin, std::vector<int64_t>{}).problem.find("unknown"), std::string::npos);
  EXPECT_FALSE(tools::UnblockTwin(p.twin, std::vector<int64_t>{12}).ok());
  // 12 channels need 2 blocks of 8, not 3; a spatial dim that disagrees; a rank two apart.
  EXPECT_NE(tools::UnblockTwin(p.twin, std::vector<int64_t>{1, 20, 2, 2}).problem.find("got [1,2,2,2,8]"),
            std::string::npos);
  EXPECT_FALSE(tools::UnblockTwin(p.twin, std::vector<int64_t>{1, 12, 2, 3}).ok());
  EXPECT_FALSE(tools::UnblockTwin(p.twin, std::vector<int64_t>{1, 12, 2}).ok());
  // Channels-last with a channel count that disagrees.
  const Pair q = MakePair({1, 6, 2, 2}, 0);
  EXPECT_FALSE(tools::UnblockTwin(q.twin, std::vector<int64_t>{1, 4, 2, 2}).ok());
  // No blocked layout for strings.
  const Tensor s(DataType::kString, {1, 2, 2});
  EXPECT_NE(tools::UnblockTwin(s, std::vector<int64_t>{1, 2, 2}).problem.find("string"), std::string::npos);
}

TEST(CompareUnblock, OtherElementTypesAndEmptyTensors) {
  Tensor plain(DataType::kInt64, {1, 3, 2});
  for (int64_t i = 0; i < plain.size(); ++i) plain.data<int64_t>()[i] = 100 + i;
  Tensor twin(DataType::kInt64, {1, 2, 3});  // channels-last
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t s = 0; s < 2; ++s) twin.data<int64_t>()[s * 3 + c] = plain.data<int64_t>()[c * 2 + s];
  }
  const tools::Unblocked u = tools::UnblockTwin(twin, plain.shape());
  ASSERT_TRUE(u.ok()) << u.problem;
  for (int64_t i = 0; i < plain.size(); ++i) EXPECT_EQ(u.tensor.data<int64_t>()[i], plain.data<int64_t>()[i]);
  const tools::Unblocked e = tools::UnblockTwin(Tensor(DataType::kFloat, {0, 1, 4, 4, 8}), std::vector<int64_t>{0, 3, 4, 4});
  ASSERT_TRUE(e.ok()) << e.problem;
  EXPECT_EQ(e.tensor.shape(), (Shape{0, 3, 4, 4}));
}

TEST(CompareUnblock, TwinNames) {
  EXPECT_EQ(tools::BlockedTwinBase("conv1_out_blocked"), "conv1_out");
  EXPECT_EQ(tools::BlockedTwinBase("x_blocked_2"), "x");
  EXPECT_EQ(tools::BlockedTwinBase("x_blocked_1"), "");
  EXPECT_EQ(tools::BlockedTwinBase("x_blocked_02"), "");
  EXPECT_EQ(tools::BlockedTwinBase("_blocked"), "");
  EXPECT_EQ(tools::BlockedTwinBase("x_blockedx"), "");
  EXPECT_EQ(tools::BlockedTwinBase("x"), "");
  const std::map<std::string, int> values = {{"x", 0}, {"x_blocked", 0}, {"y", 0}};
  EXPECT_EQ(tools::BlockedTwinOf("x_blocked", values), "");  // a value of the model itself
  EXPECT_EQ(tools::BlockedTwinOf("x_blocked_2", values), "x");
  EXPECT_EQ(tools::BlockedTwinOf("y_blocked", values), "y");
  EXPECT_EQ(tools::BlockedTwinOf("z_blocked", values), "");  // z is not a value of the model
}

// ---- layerwise on the cpu backend's blocked chains -------------------------------------------------------------

void Ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// x[1,3,10,10] -> conv1 (3->20, 3x3) -> relu1 -> pool (MaxPool 2x2) -> conv2 (20->20, 3x3) -> relu2 -> y.
// 20 channels: padding lanes in the last block of 8 (4) and of 16 (12).
std::string ConvChainModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {1, 3, 10, 10});
  std::vector<float> w1(20 * 3 * 9), w2(20 * 20 * 9), b1(20);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.3f * std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.2f * std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < b1.size(); ++i) b1[i] = 0.1f * static_cast<float>(i) - 0.5f;
  b.FloatInitializer("w1", {20, 3, 3, 3}, w1);
  b.FloatInitializer("b1", {20}, b1);
  b.FloatInitializer("w2", {20, 20, 3, 3}, w2);
  Ints(b.Node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& pool = b.Node("MaxPool", {"r1"}, {"p"}, "pool");
  Ints(pool, "kernel_shape", {2, 2});
  Ints(pool, "strides", {2, 2});
  Ints(b.Node("Conv", {"p", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c2"}, {"y"}, "relu2");
  b.Output("y", onnx::TensorProto::FLOAT, {1, 20, 5, 5});
  return testing::WriteTempFile(b.Bytes(), "conv_chain.onnx");
}

struct Layerwise {
  std::unique_ptr<ir::Model> original;
  tools::CapturedRun a, b;
  tools::LayerwiseReport report;
  std::string ir_a;  // the graph side A runs
};

Layerwise RunLayerwise(const std::string& model, const std::string& a, const std::string& b,
                       tools::CompareTolerance tol = {}) {
  tools::CompareSetup s;
  s.model = model;
  s.a = tools::ParseCompareConfig(a, "--a");
  s.b = tools::ParseCompareConfig(b, "--b");
  s.tolerance.all = tol;
  s.inputs.spec.ranges["x"] = {-1, 1};
  const tools::CompareSides sides = tools::OpenSides(s);
  Layerwise r;
  r.ir_a = sides.a->DumpIr();
  r.original = tools::LoadOriginalModel(model);
  const auto keep = tools::ProducedValues(*r.original);
  const auto inputs = sides.Inputs(s, 0);
  r.a = tools::CaptureRun(*sides.a, inputs, &keep);
  r.b = tools::CaptureRun(*sides.b, inputs, &keep);
  r.report = tools::CompareLayerwise(*r.original, r.a, r.b, s.tolerance);
  return r;
}

const tools::ValueComparison& Row(const tools::LayerwiseReport& r, const std::string& value) {
  for (const auto& v : r.values) {
    if (v.value == value) return v;
  }
  throw std::runtime_error("no row " + value);
}

// At level 3 the cpu backend keeps r1 (Conv+Relu fused) and p only as blocked twins; both are compared through
// them, in a block of 8 (isa=avx2,fma) and of 16 (AVX-512), A against B and B against A.
TEST(CompareUnblock, LayerwiseComparesBlockedTwins) {
  const std::string model = ConvChainModel();
  for (const std::string config : {"cpu,ref:isa=avx2,fma", "cpu,ref"}) {
    SCOPED_TRACE(config);
    const Layerwise lw = RunLayerwise(model, config, "ref:opt=0");
    if (lw.ir_a.find("BlockedConv") == std::string::npos) {
      GTEST_SKIP() << "the cpu backend asks for no blocked layout on this machine (" << config << ")";
    }
    const tools::LayerwiseReport& r = lw.report;
    ASSERT_EQ(r.values.size(), 5u);  // c1, r1, p, c2, y
    EXPECT_EQ(r.compared, 3) << tools::FormatLayerwise(r);  // r1 and p through their twins, y plain
    EXPECT_EQ(r.through_twin, 2);
    EXPECT_EQ(r.failed, 0) << tools::FormatLayerwise(r);
    EXPECT_FALSE(r.first.has_value());
    for (const std::string v : {"r1", "p"}) {
      const auto& row = Row(r, v);
      EXPECT_TRUE(row.compared) << v << ": " << row.note;
      EXPECT_NE(row.twin_a.find("'" + v + "_blocked'"), std::string::npos) << row.twin_a;
      EXPECT_TRUE(row.twin_b.empty());
      EXPECT_LT(row.stats.max_abs, 1e-4);
      EXPECT_EQ(row.stats.elements, v == "r1" ? 2000 : 500);
    }
    EXPECT_NE(Row(r, "r1").twin_a.find(config == "cpu,ref" && DetectHostIsa().contains(IsaSet{Isa::kAvx512f}) ? "blocked by 16" : "blocked by 8"), std::string::npos)
        << Row(r, "r1").twin_a;
    EXPECT_NE(Row(r, "p").step_a.find("BlockedPool"), std::string::npos) << Row(r, "p").step_a;
    EXPECT_NE(Row(r, "c1").note.find("on A: fused into"), std::string::npos) << Row(r, "c1").note;
    EXPECT_NE(tools::FormatLayerwise(r).find("2 through a blocked-layout twin"), std::string::npos);
    // The other way round: B keeps the twins.
    const Layerwise back = RunLayerwise(model, "ref:opt=0", config);
    EXPECT_EQ(back.report.compared, 3);
    EXPECT_EQ(back.report.through_twin, 2);
    EXPECT_FALSE(Row(back.report, "p").twin_b.empty());
    EXPECT_EQ(back.report.failed, 0) << tools::FormatLayerwise(back.report);
    // Both sides blocked (different layouts when the machine has AVX-512).
    const Layerwise both = RunLayerwise(model, "cpu,ref:isa=avx2,fma", "cpu,ref");
    EXPECT_EQ(both.report.compared, 3);
    EXPECT_FALSE(Row(both.report, "p").twin_a.empty());
    EXPECT_FALSE(Row(both.report, "p").twin_b.empty());
    EXPECT_EQ(both.report.failed, 0) << tools::FormatLayerwise(both.report);
  }
}

// relu2 runs on a backend whose Relu is off by 0.01; everything before it ran blocked on cpu. The first
// divergence is relu2, introduced there: its input c2 (plain, for the Relu) agrees, and so do the twins before.
TEST(CompareUnblock, PerturbedNodeAfterABlockedChainIsFound) {
  testing::EnsurePerturbBackend();
  const Layerwise lw = RunLayerwise(ConvChainModel(), "cpu,compare_perturb,ref:pin=relu2=compare_perturb",
                                    "ref:opt=0");
  const tools::LayerwiseReport& r = lw.report;
  ASSERT_TRUE(r.first.has_value()) << tools::FormatLayerwise(r);
  EXPECT_EQ(r.first->node, "relu2");
  EXPECT_FALSE(r.first->inherited);
  EXPECT_FALSE(r.first->uncertain);
  EXPECT_EQ(r.failed, 1);
  EXPECT_NEAR(r.values[r.first->index].stats.max_abs, 0.01, 1e-5);
  if (lw.ir_a.find("BlockedConv") != std::string::npos) {
    EXPECT_EQ(r.through_twin, 2) << tools::FormatLayerwise(r);  // r1 and p
    EXPECT_EQ(r.compared, 4);                                    // and c2, y
  }
}

// At zero tolerance the blocked convolution's sums differ from ref's: the first divergence is r1, which side A
// computed only as a twin (Conv and Relu fused): it is found there, not later.
TEST(CompareUnblock, DivergenceInsideATwinIsFoundThere) {
  const Layerwise lw = RunLayerwise(ConvChainModel(), "cpu,ref", "ref:opt=0", {0, 0});
  if (lw.ir_a.find("BlockedConv") == std::string::npos) GTEST_SKIP() << "no blocked layout on this machine";
  const tools::LayerwiseReport& r = lw.report;
  if (!r.first) GTEST_SKIP() << "the blocked convolution matched ref bit for bit here";
  EXPECT_EQ(r.first->node, "relu1");
  EXPECT_FALSE(r.values[r.first->index].twin_a.empty());
  EXPECT_TRUE(r.first->uncertain);  // its input c1 was fused away on A
  EXPECT_NE(tools::FormatLayerwise(r).find("[twin A]"), std::string::npos) << tools::FormatLayerwise(r);
  EXPECT_NE(tools::FormatLayerwise(r).find(", as 'r1_blocked'"), std::string::npos) << tools::FormatLayerwise(r);
}

}  // namespace
}  // namespace ferry
