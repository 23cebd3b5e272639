// The cpu Conv kernel after the session released its constant W (OpKernel::ReleaseConstantInput, docs/memory.md,
// "Freeing weights once packed"): the kernel, created from the cpu registry and driven directly, runs from its
// packed copy, and a signature whose primitive wants another weight layout packs from W unpacked from that copy.
// Then the session: a CNN's convolution weights are freed at creation and results stay those of ref, and Winograd
// weights (a one-way transform) only when X's shape is fully static; convolutions reading one initializer share
// its packed copy.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/isa.h"
#include "ferry/session.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"
#include "testing/model_builder.h"
#include "testing/random_values.h"

namespace ferry {
namespace {

// Deterministic data: small values of both signs.
Tensor Ramp(Shape shape, float step) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = std::fmod(step * static_cast<float>(i), 2.0f) - 1.0f;
  return t;
}

// Y = Conv(X, W) for a 1x1 convolution (no padding, stride 1): Y[m, p] = sum_c W[m, c] X[c, p], batch 1.
std::vector<float> Pointwise(const Tensor& x, const Tensor& w) {
  const int64_t c = x.shape()[1], m = w.shape()[0], plane = x.shape()[2] * x.shape()[3];
  std::vector<float> y(static_cast<size_t>(m * plane), 0.0f);
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t i = 0; i < c; ++i) {
      const float wv = w.data<float>()[o * c + i];
      for (int64_t p = 0; p < plane; ++p) y[static_cast<size_t>(o * plane + p)] += wv * x.data<float>()[i * plane + p];
    }
  }
  return y;
}

// A Conv node whose X is declared [1, C, 8, 8] (so the kernel plans and packs W at creation), W a constant.
struct ConvNode {
  ir::Graph g;
  ir::Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  Tensor w;

  ConvNode(int64_t c, int64_t m) : w(Ramp({m, c, 1, 1}, 0.11f)) {
    std::vector<ir::Dim> dims{ir::Dim::Static(1), ir::Dim::Static(c), ir::Dim::Static(8), ir::Dim::Static(8)};
    ir::Value* x = g.AddValue("x", ir::TypeInfo::Tensor(DataType::kFloat, dims));
    std::vector<ir::Dim> wdims;
    for (int64_t d : w.shape()) wdims.push_back(ir::Dim::Static(d));
    ir::Value* wv = g.AddValue("w", ir::TypeInfo::Tensor(DataType::kFloat, wdims));
    wv->set_initializer(std::make_shared<const Tensor>(w));
    node = g.AddNode("n1", "Conv", "", {x, wv}, {g.AddValue("y")}, {});
    node->set_opset(17);
    static const KernelRegistry* registry = [] {
      auto* r = new KernelRegistry("cpu");
      cpu::RegisterCpuKernels(*r);
      return r;
    }();
    const SupportResult s = registry->Query(*node, {DataType::kFloat, DataType::kFloat});
    if (!s.supported()) throw UnsupportedError("cpu does not run Conv: " + s.reason);
    kernel = s.kernel->create(*node, KernelOptions{.threads = 1});
  }

  // Prepares for X and runs once, W given as a tensor without data (what the session feeds once it is released).
  Tensor Run(const Tensor& x) {
    const Tensor released = Tensor::Wrap(DataType::kFloat, w.shape(), nullptr, nullptr);
    Value xv(x), wv(released);
    std::vector<InputSpec> specs{InputSpec::Of(&xv, nullptr), InputSpec::Of(&wv, nullptr)};
    PrepareContext pctx(*node, specs, KernelOptions{.threads = 1}, "model 'conv.onnx'");
    kernel->Prepare(pctx);
    const PreparedKernel prepared = pctx.Finish();
    std::vector<const Value*> in{&xv, &wv};
    std::vector<Value> out(1);
    KernelContext ctx(*node, in, out, 1, nullptr);
    ctx.set_prepared(&prepared);
    kernel->Compute(ctx);
    return out[0].tensor();
  }
};

void ExpectNear(const Tensor& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-4 * std::max(1.0f, std::abs(want[i]))) << "at " << i;
  }
}

TEST(CpuConvWeightRelease, RunsFromThePackedCopyAndUnpacksForAnotherLayout) {
  // 8x8 planes run on the blocked layout (weights packed blocked at creation); 32x32 planes on the plain NCHW
  // GEMM path (plain weights: unpacked from the blocked copy), then 8x8 again and 16x16 (blocked: the created copy).
  ConvNode n(24, 40);
  const int64_t packed = n.kernel->held_bytes();
  ASSERT_GE(packed, n.w.nbytes());
  ASSERT_TRUE(n.kernel->ReleaseConstantInput(1));
  EXPECT_FALSE(n.kernel->ReleaseConstantInput(0));
  for (int64_t size : {8, 32, 8, 16}) {
    SCOPED_TRACE(std::to_string(size) + "x" + std::to_string(size));
    const Tensor x = Ramp({1, 24, size, size}, 0.07f);
    ExpectNear(n.Run(x), Pointwise(x, n.w));
  }
  EXPECT_GE(n.kernel->held_bytes(), packed);
}

constexpr int32_t kF = onnx::TensorProto::FLOAT;

// x[N, 16, 12, 12] -> Conv 3x3 (32, bias) -> Relu -> depthwise Conv 3x3 -> Conv 1x1 (8) -> y; with `w1_output`
// the first convolution's W is a graph output too (so it must be kept).
std::string Cnn(bool w1_output) {
  testing::ModelBuilder b;
  b.InputSym("x", kF, {-1, 16, 12, 12}, "N");
  auto pads = [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(1);
  };
  pads(b.Node("Conv", {"x", "w1", "b1"}, {"h1"}));
  b.Node("Relu", {"h1"}, {"r1"});
  onnx::NodeProto& dw = b.Node("Conv", {"r1", "w2"}, {"h2"});
  pads(dw);
  testing::ModelBuilder::IntAttr(dw, "group", 32);
  b.Node("Conv", {"h2", "w3"}, {"y"});
  b.FloatInitializer("w1", {32, 16, 3, 3}, testing::UniformFloats(32 * 16 * 9, 1));
  b.FloatInitializer("b1", {32}, testing::UniformFloats(32, 2));
  b.FloatInitializer("w2", {32, 1, 3, 3}, testing::UniformFloats(32 * 9, 3));
  b.FloatInitializer("w3", {8, 32, 1, 1}, testing::UniformFloats(8 * 32, 4));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  if (w1_output) {
    b.graph().add_output()->set_name("w1");
    b.graph().mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  }
  return b.Bytes();
}

std::unique_ptr<Session> Create(const std::string& bytes, std::vector<std::string> backends, int level) {
  SessionOptions o;
  o.backends = std::move(backends);
  o.threads = 1;
  o.optimization_level = level;
  return Session::CreateFromBytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, o);
}

constexpr int64_t kConvWeightBytes = (32 * 16 * 9 + 32 * 9 + 8 * 32) * 4;

TEST(CpuConvWeightRelease, SessionFreesPackedConvWeightsAndMatchesRef) {
  const std::string model = Cnn(false);
  auto ref = Create(model, {"ref"}, 0);
  for (int level : {0, 3}) {  // plain Conv kernels; FusedConv / BlockedConv after the optimizer
    SCOPED_TRACE("optimization level " + std::to_string(level));
    auto cpu = Create(model, {"cpu"}, level);
    const MemoryPrediction m = cpu->PredictMemory();
    EXPECT_LT(m.weights_bytes, kConvWeightBytes / 2) << "the convolution weights were kept beside their copies";
    EXPECT_GE(m.kernel_bytes, kConvWeightBytes);
    for (int64_t batch : {1, 3, 1}) {  // batch 1 was planned at creation, batch 3 builds other primitives
      const Tensor x = Tensor::FromVector(DataType::kFloat, {batch, 16, 12, 12},
                                          testing::UniformFloats(static_cast<size_t>(batch * 16 * 144), 9));
      const auto got = cpu->Run({{"x", x}}), want = ref->Run({{"x", x}});
      ASSERT_EQ(got.size(), 1u);
      const Tensor& g = got[0].second;
      const Tensor& w = want[0].second;
      ASSERT_EQ(g.shape(), w.shape());
      for (int64_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-3 * std::max(1.0f, std::abs(w.data<float>()[i])))
            << "batch " << batch << " at " << i;
      }
    }
  }
}

TEST(CpuConvWeightRelease, WeightsAGraphOutputNeedsAreKept) {
  auto cpu = Create(Cnn(true), {"cpu"}, 0);
  EXPECT_GE(cpu->PredictMemory().weights_bytes, 32 * 16 * 9 * 4);
  const Tensor x = Tensor::FromVector(DataType::kFloat, {1, 16, 12, 12}, testing::UniformFloats(16 * 144, 9));
  const auto out = cpu->Run({{"x", x}});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[1].second.shape(), (Shape{32, 16, 3, 3}));
  EXPECT_EQ(out[1].second.data<float>()[7], testing::UniformFloats(32 * 16 * 9, 1)[7]);
}

// x[1, 16, 12, 12] -> Conv 3x3 (w) -> Relu -> Conv 3x3 (w again) -> Relu -> Conv 3x3 (w2, same shape) -> y.
std::string SharedWeightsCnn() {
  testing::ModelBuilder b;
  b.Input("x", kF, {1, 16, 12, 12});
  auto conv = [&](const std::string& in, const std::string& w, const std::string& out) {
    onnx::NodeProto& n = b.Node("Conv", {in, w}, {out});
    auto* a = n.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(1);
  };
  conv("x", "w", "h1");
  b.Node("Relu", {"h1"}, {"r1"});
  conv("r1", "w", "h2");
  b.Node("Relu", {"h2"}, {"r2"});
  conv("r2", "w2", "y");
  b.FloatInitializer("w", {16, 16, 3, 3}, testing::UniformFloats(16 * 16 * 9, 6));
  b.FloatInitializer("w2", {16, 16, 3, 3}, testing::UniformFloats(16 * 16 * 9, 7));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  return b.Bytes();
}

// Two convolutions reading one initializer (an unrolled loop's steps, tied weights) hold one packed copy of it; a
// third with other weights of the same shape packs its own, and every result stays ref's.
TEST(CpuConvWeightRelease, ConvolutionsReadingOneInitializerShareItsPackedCopy) {
  constexpr int64_t kW = 16 * 16 * 9 * 4;
  const std::string model = SharedWeightsCnn();
  auto ref = Create(model, {"ref"}, 0);
  for (int level : {0, 3}) {
    SCOPED_TRACE("optimization level " + std::to_string(level));
    auto cpu = Create(model, {"cpu"}, level);
    EXPECT_GE(cpu->kernel_held_bytes(), 2 * kW);
    EXPECT_LT(cpu->kernel_held_bytes(), 3 * kW) << "each reader of w packed its own copy";
    const Tensor x = Tensor::FromVector(DataType::kFloat, {1, 16, 12, 12}, testing::UniformFloats(16 * 144, 8));
    const auto got = cpu->Run({{"x", x}}), want = ref->Run({{"x", x}});
    const Tensor& g = got[0].second;
    const Tensor& w = want[0].second;
    ASSERT_EQ(g.shape(), w.shape());
    for (int64_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-3 * std::max(1.0f, std::abs(w.data<float>()[i])))
          << "at " << i;
    }
  }
}

// x[N or 1, 64, 14, 14] -> Conv 3x3 (64, pads 1): a Winograd convolution on AVX-512 hosts (conv.cc).
std::string WinogradConv(bool symbolic_batch) {
  testing::ModelBuilder b;
  if (symbolic_batch) {
    b.InputSym("x", kF, {-1, 64, 14, 14}, "N");
  } else {
    b.Input("x", kF, {1, 64, 14, 14});
  }
  onnx::NodeProto& conv = b.Node("Conv", {"x", "w"}, {"y"});
  auto* a = conv.add_attribute();
  a->set_name("pads");
  a->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) a->add_ints(1);
  b.FloatInitializer("w", {64, 64, 3, 3}, testing::UniformFloats(64 * 64 * 9, 5));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kF);
  return b.Bytes();
}

// The Winograd domain has no reorder back to plain weights: W is freed when X's shape is fully static (the plan
// built at creation is the only one the session asks for), kept under a symbolic batch (another batch may want
// another Winograd layout, packed from W).
TEST(CpuConvWeightRelease, WinogradWeightsAreFreedOnlyForAFullyStaticX) {
  if (!DetectHostIsa().contains(IsaSet{Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl})) {
    GTEST_SKIP() << "oneDNN's Winograd kernels need AVX-512";
  }
  constexpr int64_t kW = 64 * 64 * 9 * 4;
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic ? "symbolic batch" : "static X");
    const std::string model = WinogradConv(symbolic);
    auto cpu = Create(model, {"cpu"}, 0);
    auto ref = Create(model, {"ref"}, 0);
    const MemoryPrediction m = cpu->PredictMemory();
    EXPECT_GE(m.kernel_bytes, kW * 16 / 9) << "no Winograd copy packed at creation";
    if (symbolic) {
      EXPECT_GE(m.weights_bytes, kW) << "W was freed though another batch may need it";
    } else {
      EXPECT_LT(m.weights_bytes, kW) << "W was kept beside its Winograd copy";
    }
    for (int64_t batch : symbolic ? std::vector<int64_t>{1, 2, 1} : std::vector<int64_t>{1, 1}) {
      const Tensor x = Tensor::FromVector(DataType::kFloat, {batch, 64, 14, 14},
                                          testing::UniformFloats(static_cast<size_t>(batch * 64 * 196), 8));
      const auto got = cpu->Run({{"x", x}}), want = ref->Run({{"x", x}});
      const Tensor& g = got[0].second;
      const Tensor& w = want[0].second;
      ASSERT_EQ(g.shape(), w.shape());
      for (int64_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-3 * std::max(1.0f, std::abs(w.data<float>()[i])))
            << "batch " << batch << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace ferry
