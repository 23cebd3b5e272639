// BlockedConv's Winograd F(4x4, 3x3) kernel on nChw8c (src/kernels/cpu/winograd_conv.cc): against ref on planes
// that are and are not multiples of the 4x4 tile, asymmetric and large pads, channel counts that are not multiples
// of the block or of the 16-wide panel, batch > 1, chunks of tiles (a plane larger than one chunk), bias and Z,
// every fused activation, 1 and 2 threads; Y's padding channels zero; what it leaves to oneDNN's kernel.
#include <gtest/gtest.h>

#include <random>

#include "core/isa.h"
#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"
#include "kernels/ref/blocked_layout.h"
#include "testing/model_builder.h"
#include "testing/random_values.h"

namespace ferry::testing {
namespace {

constexpr const char* kWinograd = "cpu.f32_blocked_conv__winograd_avx2.1";
constexpr const char* kOneDnn = "cpu.f32_blocked_conv__onednn.1";

Shape Blocked8(const Shape& logical) { return ref::BlockedShape(logical, 8); }

#define FERRY_SKIP_WITHOUT_AVX2()                                   \
  do {                                                              \
    if (!DetectHostIsa().contains(IsaSet{Isa::kAvx2, Isa::kFma})) { \
      GTEST_SKIP() << "the Winograd kernel needs AVX2 and FMA";     \
    }                                                               \
  } while (0)

struct Layer {
  Shape x;  // logical [N, C, H, W]
  int64_t m;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

OpTest WinogradCase(const Layer& l, bool bias, bool z, const std::string& act, std::vector<float> params,
                    std::mt19937& rng) {
  const Shape ys{l.x[0], l.m, l.x[2] + l.pads[0] + l.pads[2] - 2, l.x[3] + l.pads[1] + l.pads[3] - 2};
  OpTest t{.op = "BlockedConv", .domain = "ai.ferry", .opset = 1};
  // X's padding channels hold random values the kernel must ignore.
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, Blocked8(l.x), rng)));
  t.inputs.push_back(Const("w", RandomTensor(DataType::kFloat, {l.m, l.x[1], 3, 3}, rng)));
  if (bias) t.inputs.push_back(Const("b", RandomTensor(DataType::kFloat, {l.m}, rng)));
  if (z) {
    if (!bias) t.inputs.push_back(Omitted());
    t.inputs.push_back(In("z", RandomTensor(DataType::kFloat, Blocked8(ys), rng)));
  }
  t.attributes = {Int("block", 8), Ints("pads", l.pads), Str("activation", act)};
  if (!params.empty()) t.attributes.push_back(Floats("activation_params", params));
  ConvTolerance(t, l.x[1], {3, 3});
  return t;
}

TEST(CpuWinogradConv, LayersMatchRef) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(41);
  const Layer layers[] = {
      {{1, 64, 28, 28}, 64, {1, 1, 1, 1}},  // a ResNet layer, whole tiles
      {{1, 16, 17, 19}, 24, {1, 1, 1, 1}},  // partial tiles on both edges; one 16-wide panel and one 8-wide
      {{2, 20, 19, 17}, 20, {0, 0, 0, 0}},  // no pads, C and M not multiples of 8, batch 2
      {{1, 32, 16, 16}, 40, {2, 0, 1, 2}},  // asymmetric pads, one of 2
      {{1, 48, 20, 20}, 56, {3, 3, 3, 3}},  // pads past the 3x3 window: tiles reading no input at all
      {{1, 96, 64, 64}, 32, {1, 1, 1, 1}},  // 256 tiles: more than one chunk
  };
  int i = 0;
  for (const Layer& l : layers) {
    for (const auto& [act, params] : kEveryFusedActivation) {
      const bool bias = i % 3 != 0, z = i % 2 == 0;
      OpTest t = WinogradCase(l, bias, z, act, params, rng);
      t.threads = 1 + i % 2;
      EXPECT_TRUE(MatchesRefWithKernel(t, "avx2,fma", kWinograd)) << DescribeCase(t);
      ++i;
    }
  }
}

// The same results on 1 and 2 threads, bit for bit: the order of every sum is fixed.
TEST(CpuWinogradConv, ThreadCountDoesNotChangeTheBits) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(42);
  const OpTest t = WinogradCase({{1, 40, 30, 30}, 48, {1, 1, 1, 1}}, true, true, "Relu", {}, rng);
  const auto one = RunOn(t, {"cpu"}, true, 1);
  const auto two = RunOn(t, {"cpu"}, true, 2);
  EXPECT_TRUE(SameBits(two[0].second, one[0].second));
}

// Y's padding channels are zeros even where act(0 + Z's padding) is not (HardSigmoid(0) = 0.5).
TEST(CpuWinogradConv, PaddingChannelsOfYAreZero) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(43);
  OpTest t = WinogradCase({{1, 20, 16, 16}, 20, {1, 1, 1, 1}}, true, true, "HardSigmoid", {0.2f, 0.5f}, rng);
  t.inputs[3] = In("z", RandomTensor(DataType::kFloat, Blocked8({1, 20, 16, 16}), rng, 1, 2));
  auto session = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "avx2,fma");
  ASSERT_EQ(session->placement().nodes.at(0).kernel, kWinograd);
  const auto got = session->Run(Feeds(t));
  const Tensor& y = got[0].second;
  ASSERT_EQ(y.shape(), (Shape{1, 3, 16, 16, 8}));
  for (int64_t i = 0; i < 256; ++i) {
    for (int64_t lane = 4; lane < 8; ++lane) {
      ASSERT_EQ(y.data<float>()[(2 * 256 + i) * 8 + lane], 0.0f) << "position " << i << " lane " << lane;
    }
  }
}

// Its transformed weights are 36/9 of W's (C and M padded to blocks of 8), packed at creation.
TEST(CpuWinogradConv, PacksTheTransformedWeightsAtCreation) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(44);
  const OpTest t = WinogradCase({{1, 64, 28, 28}, 60, {1, 1, 1, 1}}, true, false, "Relu", {}, rng);
  auto session = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, "avx2,fma");
  ASSERT_EQ(session->placement().nodes.at(0).kernel, kWinograd);
  EXPECT_EQ(session->kernel_held_bytes(), int64_t{36} * 64 * 64 * 4);
}

// x[1, 16, 32, 32] -> Conv 3x3 (w) -> Relu -> Conv 3x3 (w again) -> y: at level 3 two Winograd BlockedConvs (an
// unrolled loop's steps, tied weights) that hold one transformed copy of w between them.
TEST(CpuWinogradConv, ReadersOfOneInitializerShareItsTransform) {
  FERRY_SKIP_WITHOUT_AVX2();
  testing::ModelBuilder b;
  b.Input("x", onnx::TensorProto::FLOAT, {1, 16, 32, 32});
  for (const auto& [in, out] : {std::pair<std::string, std::string>{"x", "h"}, {"r", "y"}}) {
    onnx::NodeProto& n = b.Node("Conv", {in, "w"}, {out});
    auto* a = n.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(1);
    if (in == "x") b.Node("Relu", {"h"}, {"r"});
  }
  b.FloatInitializer("w", {16, 16, 3, 3}, testing::UniformFloats(16 * 16 * 9, 6));
  b.graph().add_output()->set_name("y");
  b.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto cpu = SessionFor(b.Bytes(), {"cpu"}, true, 1, "avx2,fma");
  int winograd = 0;
  for (const auto& node : cpu->placement().nodes) winograd += node.kernel == kWinograd;
  EXPECT_EQ(winograd, 2);
  EXPECT_EQ(cpu->kernel_held_bytes(), int64_t{36} * 16 * 16 * 4) << "each reader of w transformed its own copy";
  auto ref = SessionFor(b.Bytes(), {"ref"}, true, 1);
  const Tensor x = Tensor::FromVector(DataType::kFloat, {1, 16, 32, 32}, testing::UniformFloats(16 * 1024, 8));
  const Tensor got = cpu->Run({{"x", x}})[0].second, want = ref->Run({{"x", x}})[0].second;
  EXPECT_TRUE(TensorsClose(got, want, 1e-4, 1e-3));
}

// Left to oneDNN's direct kernel: few tiles (a 7x7 plane is 2x2 tiles), stride 2, fewer than 16 channels, a
// non-constant W; and not offered on a narrowed ISA without AVX2.
TEST(CpuWinogradConv, OtherConvolutionsRunOnOneDnn) {
  FERRY_SKIP_WITHOUT_AVX2();
  std::mt19937 rng(45);
  const auto expect_onednn = [](const OpTest& t, const std::string& isa) {
    SCOPED_TRACE(DescribeCase(t));
    auto session = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, isa);
    EXPECT_EQ(session->placement().nodes.at(0).kernel, kOneDnn);
  };
  expect_onednn(WinogradCase({{1, 64, 7, 7}, 64, {1, 1, 1, 1}}, true, false, "Relu", {}, rng), "avx2,fma");
  OpTest strided = WinogradCase({{1, 32, 32, 32}, 32, {1, 1, 1, 1}}, true, false, "Relu", {}, rng);
  strided.attributes.push_back(Ints("strides", {2, 2}));
  expect_onednn(strided, "avx2,fma");
  expect_onednn(WinogradCase({{1, 8, 32, 32}, 32, {1, 1, 1, 1}}, true, false, "Relu", {}, rng), "avx2,fma");
  OpTest variable = WinogradCase({{1, 32, 32, 32}, 32, {1, 1, 1, 1}}, true, false, "Relu", {}, rng);
  variable.inputs[1].constant = false;
  expect_onednn(variable, "avx2,fma");
  // Without AVX2 the registry does not offer it (whatever runs the node then).
  const OpTest narrowed = WinogradCase({{1, 32, 32, 32}, 32, {1, 1, 1, 1}}, true, false, "Relu", {}, rng);
  auto session = SessionFor(OneNodeModel(narrowed), {"cpu", "ref"}, false, 1, "avx");
  EXPECT_NE(session->placement().nodes.at(0).kernel, kWinograd);
}

}  // namespace
}  // namespace ferry::testing
