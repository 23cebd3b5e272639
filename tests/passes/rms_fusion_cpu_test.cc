// fuse_layer_norm's RMSNorm rewrite with the cpu backend: now that cpu has an RMSNormalization kernel (standard and
// ai.ferry), the decomposed RMSNorm that T5 and LLaMA exports write (Pow or Mul square, ReduceMean, Add eps, Sqrt,
// Div(1, ·) or Reciprocal, Mul, [Cast], Mul gamma) is fused with backends cpu,ref, the fused node runs on cpu, and
// level 2 gives level 0's outputs.
#include <gtest/gtest.h>

#include <random>

#include "ferry/session.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

constexpr int32_t kF = onnx::TensorProto::FLOAT;

void ScalarConstant(ModelBuilder& b, const std::string& name, float v) {
  auto& c = b.Node("Constant", {}, {name}, name + "_node");
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(kF);
  a->mutable_t()->add_float_data(v);
}

struct RmsSpec {
  int64_t opset = 14;
  bool llama = false;  // Mul(x, x) and Mul(x, Reciprocal(s)); else T5: Pow(x, 2), Mul(Div(1, s), x) and a Cast
  int64_t width = 64;  // the normalized (last) dim
};

// x [N, 5, width] -> decomposed RMSNorm over the last dim -> Mul by gamma [width] -> y.
std::string RmsModel(const RmsSpec& s) {
  std::mt19937 rng(3);
  ModelBuilder b(s.opset);
  b.InputSym("x", kF, {-1, 5, s.width}, "N");
  ScalarConstant(b, "eps", 1e-6f);
  if (s.llama) {
    b.Node("Mul", {"x", "x"}, {"sq"}, "Square");
  } else {
    ScalarConstant(b, "two", 2.0f);
    b.Node("Pow", {"x", "two"}, {"sq"}, "Pow");
  }
  if (s.opset >= 18) {
    b.Int64Initializer("axes", {1}, {-1});
    b.Node("ReduceMean", {"sq", "axes"}, {"var"}, "ReduceMean");
  } else {
    auto& n = b.Node("ReduceMean", {"sq"}, {"var"}, "ReduceMean");
    auto* a = n.add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(-1);
  }
  b.Node("Add", {"var", "eps"}, {"ve"}, "AddEps");
  b.Node("Sqrt", {"ve"}, {"s"}, "Sqrt");
  std::string n = "n";
  if (s.llama) {
    b.Node("Reciprocal", {"s"}, {"r"}, "Reciprocal");
    b.Node("Mul", {"x", "r"}, {"n"}, "MulR");
  } else {
    ScalarConstant(b, "one", 1.0f);
    b.Node("Div", {"one", "s"}, {"r"}, "DivOne");
    b.Node("Mul", {"r", "x"}, {"n"}, "MulR");
    ModelBuilder::IntAttr(b.Node("Cast", {"n"}, {"nc"}, "Cast"), "to", kF);
    n = "nc";
  }
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  std::vector<float> gamma(static_cast<size_t>(s.width));
  for (float& g : gamma) g = u(rng);
  b.FloatInitializer("gamma", {s.width}, gamma);
  b.Node("Mul", {"gamma", n}, {"y"}, "MulGamma");
  b.Output("y", kF, {});
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, int level, int threads) {
  SessionOptions o;
  o.backends = {"cpu", "ref"};
  o.optimization_level = level;
  o.threads = threads;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

TEST(CpuRmsNormFusion, DecomposedRmsNormFusesOntoCpuAndMatchesLevel0) {
  struct Case {
    RmsSpec spec;
    const char* domain;  // of the fused node
    const char* kernel;  // its kernel's name, without the ISA variant's tag and version
  };
  for (const Case& c : {Case{{14, false, 64}, "ai.ferry", "cpu.f32_ferry_rms_normalization__"},
                        Case{{18, true, 4096}, "ai.ferry", "cpu.f32_ferry_rms_normalization__"},
                        Case{{17, true, 37}, "ai.ferry", "cpu.f32_ferry_rms_normalization__"},
                        Case{{23, false, 64}, "", "cpu.f32_rms_normalization__"},
                        Case{{23, true, 100}, "", "cpu.f32_rms_normalization__"}}) {
    SCOPED_TRACE("opset " + std::to_string(c.spec.opset) + (c.spec.llama ? " llama" : " t5") + " width " +
                 std::to_string(c.spec.width));
    const std::string bytes = RmsModel(c.spec);
    for (int threads : {1, 2}) {
      auto fused = Create(bytes, 2, threads);
      const auto& nodes = fused->placement().nodes;
      ASSERT_EQ(nodes.size(), 1u) << FormatPlacementText(fused->placement(), true);
      EXPECT_EQ(nodes[0].op, "RMSNormalization");
      EXPECT_EQ(nodes[0].domain, c.domain);
      EXPECT_EQ(nodes[0].backend, "cpu");
      EXPECT_EQ(nodes[0].kernel.rfind(c.kernel, 0), 0u) << nodes[0].kernel;
      std::mt19937 rng(11);
      const std::vector<std::pair<std::string, Tensor>> feeds{
          {"x", RandomTensor(DataType::kFloat, {2, 5, c.spec.width}, rng, -2, 2)}};
      const auto want = Create(bytes, 0, 1)->Run(feeds);
      const auto got = fused->Run(feeds);
      ASSERT_EQ(got.size(), want.size());
      // The decomposed graph's ReduceMean and the fused kernel sum the squares in different orders.
      EXPECT_TRUE(TensorsClose(got[0].second, want[0].second, 1e-5, 1e-5)) << "threads " << threads;
    }
  }
}

}  // namespace
}  // namespace ferry::testing
