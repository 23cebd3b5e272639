// SessionOptions::deterministic (docs/determinism.md): outputs bitwise identical across runs of one session and
// across sessions with the same options; for `ref`, also across thread counts. Small models only, so this runs
// everywhere; the generated real models are checked in tests/models/determinism_models_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "testing/model_builder.h"

namespace ferry {
namespace {

using Outputs = std::vector<std::pair<std::string, Tensor>>;
using Inputs = std::vector<std::pair<std::string, Tensor>>;

SessionOptions Deterministic(std::vector<std::string> backends, int threads) {
  SessionOptions options;
  options.backends = std::move(backends);
  options.threads = threads;
  options.deterministic = true;
  return options;
}

// "" when `got` equals `want` bit for bit, else what differs first.
std::string BitwiseDifference(const Outputs& got, const Outputs& want) {
  if (got.size() != want.size()) {
    return "output count " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const Tensor& g = got[i].second;
    const Tensor& w = want[i].second;
    if (g.dtype() != w.dtype() || g.shape() != w.shape()) return "output '" + got[i].first + "': type or shape";
    if (std::memcmp(g.raw_data(), w.raw_data(), w.nbytes()) != 0) return "output '" + got[i].first + "': values";
  }
  return "";
}

Tensor RandomTensor(Shape shape, uint32_t seed) {
  Tensor t(DataType::kFloat, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Three runs of one session, then one run of a second session with `other_threads`: all bitwise equal.
void ExpectDeterministic(const std::string& model, const std::vector<std::string>& backends, const Inputs& inputs,
                         int threads, int other_threads) {
  auto session = Session::Create(model, Deterministic(backends, threads));
  const Outputs first = session->Run(inputs);
  for (int run = 1; run < 3; ++run) {
    EXPECT_EQ(BitwiseDifference(session->Run(inputs), first), "") << "run " << run << " of one session";
  }
  auto other = Session::Create(model, Deterministic(backends, other_threads));
  EXPECT_EQ(BitwiseDifference(other->Run(inputs), first), "")
      << "a second session, threads " << threads << " vs " << other_threads;
}

TEST(Determinism, NeedsAFixedThreadCount) {
  const std::string model = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";
  SessionOptions options;
  options.deterministic = true;
  EXPECT_THROW(Session::Create(model, options), InvalidArgumentError);
  options.threads = 1;
  EXPECT_NO_THROW(Session::Create(model, options));
}

TEST(Determinism, QuickstartCnn) {
  const std::string model = std::string(FERRY_SOURCE_DIR) + "/models/quickstart_cnn.onnx";
  const Inputs inputs{{"input", RandomTensor({1, 3, 32, 32}, 1)}};
  {
    SCOPED_TRACE("cpu,ref");
    ExpectDeterministic(model, {"cpu", "ref"}, inputs, 2, 2);
  }
  {
    SCOPED_TRACE("ref, threads 2 vs 1");
    ExpectDeterministic(model, {"ref"}, inputs, 2, 1);
  }
}

// Reductions whose rows are long enough that the parallel loops split them (ReduceSum over both axes, Softmax,
// LayerNormalization) and a MatMul big enough for ref's GEMM to cut its task grid by the thread count.
std::string ReductionModel() {
  constexpr int64_t kRows = 64, kCols = 4096, kN = 256;
  testing::ModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {kRows, kCols});
  b.Output("row_sum", onnx::TensorProto::FLOAT, {kRows});
  b.Output("col_sum", onnx::TensorProto::FLOAT, {kCols});
  b.Output("softmax", onnx::TensorProto::FLOAT, {kRows, kCols});
  b.Output("layer_norm", onnx::TensorProto::FLOAT, {kRows, kCols});
  b.Output("product", onnx::TensorProto::FLOAT, {kRows, kN});
  std::vector<float> scale(kCols), bias(kCols), w(static_cast<size_t>(kCols * kN));
  for (size_t i = 0; i < scale.size(); ++i) {
    scale[i] = 1.0f + 0.001f * static_cast<float>(i % 97);
    bias[i] = 0.01f * static_cast<float>(i % 13);
  }
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i * 7919 % 201) - 100) / 1024.0f;
  b.FloatInitializer("scale", {kCols}, scale).FloatInitializer("bias", {kCols}, bias);
  b.FloatInitializer("w", {kCols, kN}, w);
  b.Int64Initializer("axis1", {1}, {1}).Int64Initializer("axis0", {1}, {0});
  auto& rs = b.Node("ReduceSum", {"x", "axis1"}, {"row_sum"});
  testing::ModelBuilder::IntAttr(rs, "keepdims", 0);
  auto& cs = b.Node("ReduceSum", {"x", "axis0"}, {"col_sum"});
  testing::ModelBuilder::IntAttr(cs, "keepdims", 0);
  b.Node("Softmax", {"x"}, {"softmax"});
  b.Node("LayerNormalization", {"x", "scale", "bias"}, {"layer_norm"});
  b.Node("MatMul", {"x", "w"}, {"product"});
  return testing::WriteTempFile(b.Bytes(), "reductions.onnx");
}

TEST(Determinism, ReductionsSoftmaxLayerNormMatMul) {
  const std::string model = ReductionModel();
  const Inputs inputs{{"x", RandomTensor({64, 4096}, 7)}};
  {
    SCOPED_TRACE("cpu,ref");
    ExpectDeterministic(model, {"cpu", "ref"}, inputs, 2, 2);
  }
  for (int threads : {1, 3, 4}) {
    SCOPED_TRACE("ref, threads 2 vs " + std::to_string(threads));
    ExpectDeterministic(model, {"ref"}, inputs, 2, threads);
  }
}

TEST(Determinism, UnseededRandomNormalIsTheSameInEverySession) {
  testing::ModelBuilder b;
  b.Output("y", onnx::TensorProto::FLOAT, {1000});
  auto& n = b.Node("RandomNormal", {}, {"y"});
  auto* shape = n.add_attribute();
  shape->set_name("shape");
  shape->set_type(onnx::AttributeProto::INTS);
  shape->add_ints(1000);
  const std::string model = testing::WriteTempFile(b.Bytes(), "random_normal.onnx");
  for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.front());
    ExpectDeterministic(model, backends, {}, 2, 1);
  }
}

// Dropout in training mode without a seed draws a random mask: per run normally, fixed in deterministic mode.
TEST(Determinism, UnseededTrainingDropoutIsFixed) {
  testing::ModelBuilder b(13);
  b.Input("x", onnx::TensorProto::FLOAT, {4096});
  b.Input("training", onnx::TensorProto::BOOL, {});
  b.Output("y", onnx::TensorProto::FLOAT, {4096});
  b.Output("mask", onnx::TensorProto::BOOL, {4096});
  b.FloatInitializer("ratio", {}, {0.5f});
  b.Node("Dropout", {"x", "ratio", "training"}, {"y", "mask"});
  const std::string model = testing::WriteTempFile(b.Bytes(), "dropout.onnx");
  Tensor training(DataType::kBool, {});
  training.data<bool>()[0] = true;
  const Inputs inputs{{"x", RandomTensor({4096}, 3)}, {"training", training}};
  ExpectDeterministic(model, {"cpu", "ref"}, inputs, 2, 1);

  SessionOptions random;
  random.threads = 1;
  auto session = Session::Create(model, random);
  EXPECT_NE(BitwiseDifference(session->Run(inputs), session->Run(inputs)), "")
      << "without deterministic mode an unseeded training Dropout draws a new mask each run";
}

}  // namespace
}  // namespace ferry
