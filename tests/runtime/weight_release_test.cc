// Weights freed once packed (OpKernel::ReleaseConstantInput, Executor's `release`): an initializer every reader
// has packed is dropped from the session, results stay those of ref, and an initializer that another kernel, a
// graph output or a feed may still need is kept.
#include <gtest/gtest.h>

#include <cmath>

#include "core/buffer_pool.h"
#include "ferry/session.h"
#include "testing/model_builder.h"
#include "testing/random_values.h"

namespace ferry {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int64_t kK = 96, kN = 80;

// y = MatMul(x, W) [+ extra use of W]; x: float[M, K] with M symbolic, W: float[K, N].
std::string Model(const std::string& extra) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {-1, kK}, "M");
  b.Node("MatMul", {"x", "W"}, {"y"});
  b.FloatInitializer("W", {kK, kN}, testing::UniformFloats(kK * kN, 7));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  if (extra == "second_matmul") {  // a second reader that packs too
    b.Node("MatMul", {"x", "W"}, {"y2"});
    b.graph().add_output()->set_name("y2");
    b.graph().mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  } else if (extra == "ref_reader") {  // a reader that reads the data at run time
    b.Node("Abs", {"W"}, {"w_abs"});
    b.graph().add_output()->set_name("w_abs");
    b.graph().mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  } else if (extra == "output") {  // W itself is a graph output
    b.graph().add_output()->set_name("W");
    b.graph().mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, std::vector<std::string> backends, bool pin_abs = false) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.threads = 1;
  o.optimization_level = 0;  // keeps Abs(W) from being folded into a constant
  if (pin_abs) o.pins = {{"Abs", "ref"}};
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

double MaxRelDiff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    worst = std::max(worst, std::abs(x - y) / std::max(1e-6, std::abs(y)));
  }
  return worst;
}

const int64_t kWeightBytes = kK * kN * 4;
// Where oneDNN keeps these MatMuls' weights in the plain layout (an AVX2-only AMD EPYC, say), nothing is packed,
// so nothing can be released: the tests of the release have nothing to check there.
constexpr const char* kPlainOnThisCpu = "oneDNN keeps the plain weight layout for these MatMuls on this CPU";

TEST(WeightRelease, PackedWeightsAreFreedAndResultsMatchRef) {
  for (const std::string extra : {"", "second_matmul"}) {
    SCOPED_TRACE(extra.empty() ? "one reader" : extra);
    const std::string model = Model(extra);
    auto cpu = Create(model, {"cpu", "ref"});
    auto ref = Create(model, {"ref"});
    if (cpu->kernel_held_bytes() == 0) GTEST_SKIP() << kPlainOnThisCpu;
    EXPECT_EQ(cpu->PredictMemory().weights_bytes, 0);  // freed: the kernels hold packed copies
    EXPECT_GE(cpu->kernel_held_bytes(), kWeightBytes);
    EXPECT_EQ(ref->PredictMemory().weights_bytes, kWeightBytes);
    for (int64_t m : {1, 64, 7}) {  // shapes other than the packing hint, some needing the plain layout
      Tensor x = Tensor::FromVector(DataType::kFloat, {m, kK}, testing::UniformFloats(static_cast<size_t>(m * kK), 3));
      auto got = cpu->Run({{"x", x}});
      auto want = ref->Run({{"x", x}});
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_LT(MaxRelDiff(got[i].second, want[i].second), 1e-4) << m;
    }
  }
}

TEST(WeightRelease, WeightsAnotherReaderNeedsAreKept) {
  for (const std::string extra : {"ref_reader", "output"}) {
    SCOPED_TRACE(extra);
    auto cpu = Create(Model(extra), {"cpu", "ref"}, extra == "ref_reader");
    EXPECT_EQ(cpu->PredictMemory().weights_bytes, kWeightBytes);
    Tensor x = Tensor::FromVector(DataType::kFloat, {2, kK}, testing::UniformFloats(2 * kK, 5));
    auto out = cpu->Run({{"x", x}});
    ASSERT_EQ(out.size(), 2u);
    const Tensor& second = out[1].second;  // |W| or W: read from the kept data
    ASSERT_EQ(second.shape(), (Shape{kK, kN}));
    const auto w = testing::UniformFloats(kK * kN, 7);
    EXPECT_EQ(second.data<float>()[5], extra == "output" ? w[5] : std::abs(w[5]));
  }
}

// What session creation frees (weights packed by their kernels, the import's copies) leaves the process instead of
// waiting in the buffer pool, and the first run's activations leave the pool once the arena has been planned.
TEST(WeightRelease, CreationAndTheFirstRunLeaveNothingInThePool) {
  constexpr int64_t kBigK = 1024, kBigN = 512;  // 2 MiB of weights: pooled-size blocks
  testing::ModelBuilder b;
  b.InputSym("x", kF, {-1, kBigK}, "M");
  b.Node("MatMul", {"x", "W"}, {"h"});
  b.Node("Relu", {"h"}, {"r"});
  b.Node("MatMul", {"r", "W2"}, {"y"});
  b.FloatInitializer("W", {kBigK, kBigN}, testing::UniformFloats(kBigK * kBigN, 7));
  b.FloatInitializer("W2", {kBigN, kBigK}, testing::UniformFloats(kBigK * kBigN, 8));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  const std::string model = b.Bytes();
  ReleasePooledBuffers();
  auto cpu = Create(model, {"cpu", "ref"});
  if (cpu->kernel_held_bytes() == 0) GTEST_SKIP() << kPlainOnThisCpu;
  EXPECT_EQ(cpu->PredictMemory().weights_bytes, 0);
  EXPECT_EQ(PooledBytes(), 0u) << "weights freed at creation went to the pool";
  // 2 MiB activations
  Tensor x = Tensor::FromVector(DataType::kFloat, {512, kBigK}, testing::UniformFloats(512 * kBigK, 3));
  for (int run = 0; run < 3; ++run) {
    auto out = cpu->Run({{"x", x}});
    ASSERT_EQ(out[0].second.shape(), (Shape{512, kBigK}));
    // Run 0 planned the arena and emptied the pool of its activations; later runs take them from the arena.
    EXPECT_EQ(PooledBytes(), 0u) << "run " << run;
  }
  EXPECT_FALSE(cpu->arenas().empty());
}

}  // namespace
}  // namespace ferry
