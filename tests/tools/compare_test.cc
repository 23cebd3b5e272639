// ferry compare's library: error statistics, configuration parsing, data folders, the first divergence (with a
// test backend whose Relu is off by 0.01), bisection and the op-focused mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "backends/backend.h"
#include "ferry/error.h"
#include "kernels/kernel.h"
#include "testing/model_builder.h"
#include "testing/perturb_backend.h"
#include "tools/compare.h"
#include "tools/compare_bisect.h"
#include "tools/compare_layerwise.h"
#include "tools/compare_ops.h"
#include "tools/npy.h"

namespace ferry {
namespace {

using testing::ModelBuilder;
using tools::CompareTolerance;
using tools::ErrorStats;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor F(Shape shape, std::vector<float> v) { return Tensor::FromVector(DataType::kFloat, std::move(shape), v); }

// ---- statistics ----------------------------------------------------------------------------------------------

TEST(CompareStats, IdenticalTensorsPass) {
  ErrorStats s = tools::CompareStats(F({2, 2}, {1, -2, 3, 0}), F({2, 2}, {1, -2, 3, 0}), {});
  EXPECT_TRUE(s.pass());
  EXPECT_EQ(s.elements, 4);
  EXPECT_EQ(s.max_abs, 0);
  EXPECT_EQ(s.worst_index, -1);
  EXPECT_DOUBLE_EQ(s.cosine, 1);
}

TEST(CompareStats, FiguresAndTheWorstElement) {
  // b is the reference: errors 0, 0.5, 0.1, 0 -> max abs 0.5 at [0,1], max rel 0.5/2, mean 0.15.
  ErrorStats s = tools::CompareStats(F({2, 2}, {1, 2.5, 3.1, 4}), F({2, 2}, {1, 2, 3, 4}), {0.2, 0});
  EXPECT_FALSE(s.pass());
  EXPECT_EQ(s.mismatched, 1);  // 0.1 is within atol 0.2
  EXPECT_NEAR(s.max_abs, 0.5, 1e-6);
  EXPECT_NEAR(s.max_rel, 0.25, 1e-6);
  EXPECT_NEAR(s.mean_abs, 0.15, 1e-6);
  EXPECT_EQ(s.worst_index, 1);
  EXPECT_EQ(s.worst_coord, (std::vector<int64_t>{0, 1}));
  EXPECT_NEAR(s.worst_a, 2.5, 1e-6);
  EXPECT_NEAR(s.worst_b, 2, 1e-6);
  EXPECT_GT(s.cosine, 0.99);
  EXPECT_LT(s.cosine, 1);
  // rtol scales with |b|: 0.5 <= 0 + 0.3 * 2.
  EXPECT_TRUE(tools::CompareStats(F({2}, {2.5, 4}), F({2}, {2, 4}), {0, 0.3}).pass());
}

TEST(CompareStats, NanAndInfOnOneSideBreach) {
  ErrorStats s = tools::CompareStats(F({4}, {kNaN, kInf, 1, 2}), F({4}, {kNaN, kInf, kNaN, 2}), {});
  EXPECT_FALSE(s.pass());
  EXPECT_EQ(s.mismatched, 1);
  EXPECT_EQ(s.nan_a, 1);
  EXPECT_EQ(s.nan_b, 2);
  EXPECT_EQ(s.inf_a, 1);
  EXPECT_EQ(s.inf_b, 1);
  EXPECT_EQ(s.worst_index, 2);  // the one-sided NaN, although element 3 is exact
  ErrorStats inf = tools::CompareStats(F({2}, {kInf, 1}), F({2}, {-kInf, 1}), {});
  EXPECT_FALSE(inf.pass());
  EXPECT_EQ(inf.worst_index, 0);
  // NaN against NaN and the same infinity agree.
  EXPECT_TRUE(tools::CompareStats(F({2}, {kNaN, -kInf}), F({2}, {kNaN, -kInf}), {}).pass());
}

TEST(CompareStats, CosineOfZeroVectors) {
  EXPECT_DOUBLE_EQ(tools::CompareStats(F({2}, {0, 0}), F({2}, {0, 0}), {}).cosine, 1);
  EXPECT_DOUBLE_EQ(tools::CompareStats(F({2}, {0, 0}), F({2}, {1, 0}), {1, 0}).cosine, 0);
  EXPECT_NEAR(tools::CompareStats(F({2}, {-1, 0}), F({2}, {1, 0}), {5, 0}).cosine, -1, 1e-12);
}

TEST(CompareStats, DtypeShapeAndIntegers) {
  EXPECT_NE(tools::CompareStats(F({2}, {1, 2}), F({1, 2}, {1, 2}), {}).problem.find("shape"), std::string::npos);
  Tensor i = Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{1, 2});
  EXPECT_NE(tools::CompareStats(i, F({2}, {1, 2}), {}).problem.find("dtype int64 vs float32"), std::string::npos);
  Tensor j = Tensor::FromVector(DataType::kInt64, {2}, std::vector<int64_t>{1, 3});
  ErrorStats s = tools::CompareStats(i, j, {10, 10});  // integers compare exactly: no tolerance
  EXPECT_EQ(s.mismatched, 1);
  EXPECT_EQ(s.worst_index, 1);
  EXPECT_EQ(s.max_abs, 1);
}

TEST(CompareStats, PerOutputTolerance) {
  auto [name, tol] = tools::ParsePerOutputTolerance("logits=0.01", 0.5);
  EXPECT_EQ(name, "logits");
  EXPECT_DOUBLE_EQ(tol.atol, 0.01);
  EXPECT_DOUBLE_EQ(tol.rtol, 0.5);
  auto [name2, tol2] = tools::ParsePerOutputTolerance("a=b=1e-3,0", 0.5);  // the last '=' splits
  EXPECT_EQ(name2, "a=b");
  EXPECT_DOUBLE_EQ(tol2.rtol, 0);
  EXPECT_THROW(tools::ParsePerOutputTolerance("logits", 0), InvalidArgumentError);
  EXPECT_THROW(tools::ParsePerOutputTolerance("logits=x", 0), InvalidArgumentError);
  EXPECT_THROW(tools::ParsePerOutputTolerance("logits=-1", 0), InvalidArgumentError);
}

TEST(CompareStats, PerOutputToleranceIsWholeNumbers) {
  EXPECT_DOUBLE_EQ(tools::ParsePerOutputTolerance("y=2.5e-3,1E-2", 0).second.atol, 2.5e-3);
  EXPECT_DOUBLE_EQ(tools::ParsePerOutputTolerance("y=2.5e-3,1E-2", 0).second.rtol, 1e-2);
  EXPECT_DOUBLE_EQ(tools::ParsePerOutputTolerance("y=+0.5", 0).second.atol, 0.5);
  for (const char* bad : {"y=0.1x", "y=0.1,0.2abc", "y= 0.1", "y=inf", "y=nan", "y=1e400", "y=0.1,"}) {
    try {
      tools::ParsePerOutputTolerance(bad, 0);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("got '") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

// ---- configurations ------------------------------------------------------------------------------------------

std::string ConfigError(const std::string& text) {
  try {
    tools::ParseCompareConfig(text, "--a");
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

TEST(CompareConfig, Grammar) {
  auto c = tools::ParseCompareConfig("cpu,ref:opt=2:threads=1", "--a");
  EXPECT_EQ(c.options.backends, (std::vector<std::string>{"cpu", "ref"}));
  EXPECT_EQ(c.options.optimization_level, 2);
  EXPECT_EQ(c.options.threads, 1);
  auto d = tools::ParseCompareConfig(tools::kDefaultConfigB, "--b");
  EXPECT_EQ(d.options.backends, (std::vector<std::string>{"ref"}));
  EXPECT_EQ(d.options.optimization_level, 0);
  EXPECT_EQ(tools::ParseCompareConfig(tools::kDefaultConfigA, "--a").options.optimization_level, 3);
  // After the first ':', commas belong to the option: an ISA list.
  auto e = tools::ParseCompareConfig("cpu,ref:isa=avx2,fma:deterministic:threads=2", "--a");
  EXPECT_EQ(e.options.isa, "avx2,fma");
  EXPECT_TRUE(e.options.deterministic);
  auto f = tools::ParseCompareConfig("cpu,ref:pin=Conv=ref:pin=n1=cpu:plugin=lib/x.so:no-fallback:legalize:no-arena:"
                                     "disable-pass=fuse_conv_bn",
                                     "--a");
  ASSERT_EQ(f.options.pins.size(), 2u);
  EXPECT_EQ(f.options.pins[0], (std::pair<std::string, std::string>{"Conv", "ref"}));
  EXPECT_EQ(f.options.plugins, (std::vector<std::string>{"lib/x.so"}));
  EXPECT_FALSE(f.options.allow_fallback);
  EXPECT_TRUE(f.options.legalize);
  EXPECT_FALSE(f.options.memory_arena);
  EXPECT_EQ(f.options.disabled_passes, (std::vector<std::string>{"fuse_conv_bn"}));
  EXPECT_NE(tools::DescribeConfig(c).find("opt 2, threads 1"), std::string::npos) << tools::DescribeConfig(c);
}

TEST(CompareConfig, ErrorsNameTheToken) {
  EXPECT_NE(ConfigError("cpu:fast").find("unknown option 'fast'"), std::string::npos) << ConfigError("cpu:fast");
  EXPECT_NE(ConfigError("cpu:opt=9").find("'opt=9'"), std::string::npos) << ConfigError("cpu:opt=9");
  EXPECT_NE(ConfigError("cpu:opt").find("'opt' needs a value"), std::string::npos);
  EXPECT_NE(ConfigError("cpu:deterministic=1").find("takes no value"), std::string::npos);
  EXPECT_NE(ConfigError("cpu:deterministic").find("threads=N"), std::string::npos);
  EXPECT_NE(ConfigError("cpu,,ref").find("empty backend"), std::string::npos);
  EXPECT_NE(ConfigError("").find("empty backend"), std::string::npos);
  EXPECT_NE(ConfigError("cpu:pin=Conv").find("pin=NODE_OR_OP=BACKEND"), std::string::npos);
  EXPECT_NE(ConfigError("cpu:opt=9").find("--a 'cpu:opt=9'"), std::string::npos);
}

TEST(CompareConfig, IntegersAreWholeValues) {
  EXPECT_EQ(tools::ParseCompareConfig("cpu:threads=+4", "--a").options.threads, 4);
  for (const char* bad :
       {"cpu:opt=2x", "cpu:opt= 2", "cpu:opt=1.0", "cpu:threads=4abc", "cpu:threads=99999999999999999999"}) {
    const std::string error = ConfigError(bad);
    EXPECT_NE(error.find("bad value in '"), std::string::npos) << bad << ": " << error;
    EXPECT_NE(error.find("expected an integer in"), std::string::npos) << bad << ": " << error;
  }
}

// ---- a test backend with a deliberately wrong Relu: tests/testing/perturb_backend.h ---------------------------

using testing::EnsurePerturbBackend;

std::string TestDir() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = ::testing::TempDir() + "/ferry_compare_" + std::to_string(::getpid()) + "_" + test->name();
  std::filesystem::create_directories(dir);
  return dir;
}

// x -> add1 (Add) -> mul1 (Mul) -> relu_mid (Relu) -> add2 (Add) -> sig (Sigmoid) -> y: the Relu in the middle.
std::string ChainModel() {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {2, 8});
  b.FloatInitializer("c1", {8}, {0.5f, -0.5f, 0.25f, -0.25f, 1, -1, 0.1f, -0.1f});
  b.FloatInitializer("c2", {1}, {1.5f});
  b.FloatInitializer("c3", {1}, {-0.2f});
  b.Node("Add", {"x", "c1"}, {"a1"}, "add1");
  b.Node("Mul", {"a1", "c2"}, {"m1"}, "mul1");
  b.Node("Relu", {"m1"}, {"r1"}, "relu_mid");
  b.Node("Add", {"r1", "c3"}, {"a2"}, "add2");
  b.Node("Sigmoid", {"a2"}, {"y"}, "sig");
  b.Output("y", onnx::TensorProto::FLOAT, {2, 8});
  return testing::WriteTempFile(b.Bytes(), "chain.onnx");
}

tools::CompareSetup MakeSetup(const std::string& model, const std::string& a, const std::string& b) {
  tools::CompareSetup s;
  s.model = model;
  s.a = tools::ParseCompareConfig(a, "--a");
  s.b = tools::ParseCompareConfig(b, "--b");
  s.inputs.spec.ranges["x"] = {-1, 1};
  return s;
}

TEST(Compare, AgreeingConfigurationsPass) {
  const std::string model = ChainModel();
  tools::CompareSetup s = MakeSetup(model, tools::kDefaultConfigA, tools::kDefaultConfigB);
  s.trials = 3;
  const tools::CompareSides sides = tools::OpenSides(s);
  const tools::OutputReport r = tools::CompareOutputs(s, sides);
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.trials, 3);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].name, "y");
  EXPECT_LT(r.outputs[0].stats.max_abs, 1e-6);
}

TEST(Compare, PerturbedReluFailsAndIsTheFirstDivergence) {
  EnsurePerturbBackend();
  const std::string model = ChainModel();
  tools::CompareSetup s = MakeSetup(model, "compare_perturb,ref:opt=0", "ref:opt=0");
  const tools::CompareSides sides = tools::OpenSides(s);
  const tools::OutputReport r = tools::CompareOutputs(s, sides);
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.first_failed_trial, 0);

  const auto original = tools::LoadOriginalModel(model);
  const auto keep = tools::ProducedValues(*original);
  const auto inputs = sides.Inputs(s, 0);
  const tools::CapturedRun a = tools::CaptureRun(*sides.a, inputs, &keep);
  const tools::CapturedRun b = tools::CaptureRun(*sides.b, inputs, &keep);
  const tools::LayerwiseReport lw = tools::CompareLayerwise(*original, a, b, s.tolerance);
  ASSERT_TRUE(lw.first.has_value());
  EXPECT_EQ(lw.first->node, "relu_mid");
  EXPECT_EQ(lw.first->op, "Relu");
  EXPECT_FALSE(lw.first->inherited);  // mul1's output agrees: introduced here
  EXPECT_FALSE(lw.first->uncertain);
  ASSERT_EQ(lw.first->inputs.size(), 1u);
  EXPECT_EQ(lw.first->inputs[0].value, "m1");
  ASSERT_TRUE(lw.first->inputs[0].comparison.has_value());
  EXPECT_TRUE(lw.values[*lw.first->inputs[0].comparison].stats.pass());
  EXPECT_NEAR(lw.values[lw.first->index].stats.max_abs, 0.01, 1e-6);
  EXPECT_NE(lw.values[lw.first->index].step_a.find("compare_perturb"), std::string::npos);
  EXPECT_EQ(lw.compared, 5);
  EXPECT_EQ(lw.failed, 3);  // relu_mid, add2, sig
  const auto rows = lw.TableRows();
  EXPECT_TRUE(std::find(rows.begin(), rows.end(), lw.first->index) != rows.end());
}

TEST(Compare, BisectionWritesAModelThatReproduces) {
  EnsurePerturbBackend();
  const std::string model = ChainModel();
  const std::string dir = TestDir();
  tools::CompareSetup s = MakeSetup(model, "compare_perturb,ref:opt=0", "ref:opt=0");
  const tools::CompareSides sides = tools::OpenSides(s);
  const auto original = tools::LoadOriginalModel(model);
  const auto keep = tools::ProducedValues(*original);
  const auto inputs = sides.Inputs(s, 0);
  const tools::CapturedRun a = tools::CaptureRun(*sides.a, inputs, &keep);
  const tools::CapturedRun b = tools::CaptureRun(*sides.b, inputs, &keep);
  const tools::LayerwiseReport lw = tools::CompareLayerwise(*original, a, b, s.tolerance);
  const std::string out = dir + "/sub.onnx";
  const tools::BisectResult r = tools::Bisect(*original, lw, a, b, s.a, s.b, out);
  ASSERT_TRUE(r.reproduced);
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"relu_mid"}));
  EXPECT_EQ(r.value, "r1");
  EXPECT_EQ(r.data_dir, dir + "/sub_data");
  ASSERT_TRUE(std::filesystem::exists(r.data_dir + "/test_data_set_0/input_0.pb"));

  // The written model, fed from the written folder, diverges again; against the stored side-B outputs too.
  tools::CompareSetup again = MakeSetup(out, "compare_perturb,ref:opt=0", "ref:opt=0");
  again.inputs = tools::ParseInputSource(r.data_dir);
  const tools::CompareSides sides2 = tools::OpenSides(again);
  EXPECT_EQ(sides2.a->inputs().at(0).name, "m1");
  EXPECT_FALSE(tools::CompareOutputs(again, sides2).pass());
  tools::CompareSetup stored = MakeSetup(out, "ref:opt=0", "ref:opt=0");
  stored.reference_dir = r.data_dir;
  EXPECT_TRUE(tools::CompareOutputs(stored, tools::OpenSides(stored)).pass());
}

// A divergence a fusion hides: side A's FusedConv computes the Relu's output; the Conv's own output is
// "fused into" it, and bisection must grow to both nodes to reproduce.
TEST(Compare, FusedNodesAreNotComparedAndBisectionGrows) {
  ModelBuilder b(17);
  b.Input("x", onnx::TensorProto::FLOAT, {1, 8, 6, 6});
  std::vector<float> w(8 * 8 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.3f * std::sin(static_cast<float>(i));
  b.FloatInitializer("w", {8, 8, 3, 3}, w);
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  b.Node("Relu", {"c"}, {"y"}, "relu");
  b.Output("y", onnx::TensorProto::FLOAT, {1, 8, 6, 6});
  const std::string model = testing::WriteTempFile(b.Bytes(), "conv_relu.onnx");
  tools::CompareSetup s = MakeSetup(model, "cpu,ref:opt=2", "ref:opt=0");
  s.tolerance.all = {0, 0};  // any float difference is a breach
  const tools::CompareSides sides = tools::OpenSides(s);
  const auto original = tools::LoadOriginalModel(model);
  const auto keep = tools::ProducedValues(*original);
  const auto inputs = sides.Inputs(s, 0);
  const tools::CapturedRun a = tools::CaptureRun(*sides.a, inputs, &keep);
  const tools::CapturedRun ca = tools::CaptureRun(*sides.b, inputs, &keep);
  const tools::LayerwiseReport lw = tools::CompareLayerwise(*original, a, ca, s.tolerance);
  ASSERT_EQ(lw.values.size(), 2u);
  EXPECT_FALSE(lw.values[0].compared);
  EXPECT_NE(lw.values[0].note.find("on A: fused into"), std::string::npos) << lw.values[0].note;
  EXPECT_TRUE(lw.values[1].compared);
  if (!lw.first) GTEST_SKIP() << "the cpu convolution matched ref bit for bit here";
  EXPECT_EQ(lw.first->node, "relu");
  EXPECT_TRUE(lw.first->uncertain);  // its input was fused away on A
  const tools::BisectResult r = tools::Bisect(*original, lw, a, ca, s.a, s.b, TestDir() + "/sub.onnx");
  ASSERT_TRUE(r.reproduced);
  EXPECT_EQ(r.nodes, (std::vector<std::string>{"conv", "relu"}));
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_FALSE(r.attempts[0].reproduced);  // Relu alone is exact on both sides
}

TEST(Compare, OpsModeFlagsTheWrongKernelOnly) {
  EnsurePerturbBackend();
  const std::string model = ChainModel();
  tools::CompareSetup s = MakeSetup(model, "compare_perturb,ref:opt=0", "ref:opt=0");
  const tools::CompareSides sides = tools::OpenSides(s);
  const auto original = tools::LoadOriginalModel(model);
  const tools::CapturedRun captured = tools::CaptureRun(*sides.b, sides.Inputs(s, 0), nullptr);
  const tools::OpsReport r =
      tools::CompareOps(*original, captured, {"Relu", "Add", "Softmax"}, s.a, s.b, s.tolerance, 4, 7);
  ASSERT_EQ(r.checks.size(), 3u);  // add1, relu_mid, add2
  EXPECT_EQ(r.absent, (std::vector<std::string>{"Softmax"}));
  EXPECT_EQ(r.flagged(), 1);
  for (const auto& c : r.checks) {
    EXPECT_EQ(c.trials, 4);
    EXPECT_EQ(c.pass(), c.node != "relu_mid") << c.node;
    if (c.node == "relu_mid") {
      EXPECT_EQ(c.backend_a, "compare_perturb");
      EXPECT_EQ(c.backend_b, "ref");
      EXPECT_NEAR(c.stats.max_abs, 0.01, 1e-6);
    }
  }
  EXPECT_THROW(tools::CompareOps(*original, captured, {"Conv"}, s.a, s.b, s.tolerance, 1, 0), InvalidArgumentError);
}

// ---- stored references ---------------------------------------------------------------------------------------

TEST(Compare, ReferenceFolderAndNanInIt) {
  const std::string model = ChainModel();
  const std::string dir = TestDir();
  tools::CompareSetup s = MakeSetup(model, "ref:opt=0", "ref:opt=0");
  const auto session = Session::Create(model, s.b.options);
  const auto inputs = tools::MakeTrialInputs(*session, s.inputs, 0, nullptr);
  const auto outputs = session->RunValues(inputs);
  std::filesystem::create_directories(dir + "/ref");
  tools::WriteNpy(dir + "/ref/x.npy", inputs[0].second.tensor());
  tools::WriteNpy(dir + "/ref/y.npy", outputs[0].second.tensor());
  s.reference_dir = dir + "/ref";
  EXPECT_TRUE(tools::CompareOutputs(s, tools::OpenSides(s)).pass());  // inputs from the reference folder

  Tensor bad = outputs[0].second.tensor().Clone();
  bad.data<float>()[5] = kNaN;
  tools::WriteNpy(dir + "/ref/y.npy", bad);
  const tools::OutputReport r = tools::CompareOutputs(s, tools::OpenSides(s));
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.outputs[0].stats.nan_b, 1);
  EXPECT_EQ(r.outputs[0].stats.nan_a, 0);
  EXPECT_EQ(r.outputs[0].stats.worst_index, 5);

  s.reference_dir = dir + "/nothing";
  EXPECT_THROW(tools::OpenSides(s), InvalidArgumentError);
}

TEST(Compare, ZerosAndOnes) {
  const std::string model = ChainModel();
  tools::CompareSetup s = MakeSetup(model, tools::kDefaultConfigA, tools::kDefaultConfigB);
  s.inputs = tools::ParseInputSource("ones");
  const tools::CompareSides sides = tools::OpenSides(s);
  const auto in = sides.Inputs(s, 0);
  ASSERT_EQ(in.size(), 1u);
  for (int64_t i = 0; i < in[0].second.tensor().size(); ++i) EXPECT_EQ(in[0].second.tensor().data<float>()[i], 1.0f);
  EXPECT_TRUE(tools::CompareOutputs(s, sides).pass());
  EXPECT_THROW(tools::ParseInputSource("/no/such/folder"), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
