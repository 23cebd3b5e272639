// The depthwise convolution kernel on plain tensors (src/kernels/cpu/depthwise_conv.cc): Conv, ai.ferry FusedConv
// and com.microsoft FusedConv against ref, 1-D to 3-D, strides, dilations, asymmetric and large pads (taps reading
// only padding), channel multipliers, batch > 1, rows longer than one block of outputs, bias and Z, every fused
// activation, both ISA variants, 1 and 2 threads with the same bits; what it leaves to oneDNN's kernel.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"
#include "testing/random_values.h"

namespace ferry::testing {
namespace {

struct DwLayer {
  Shape x;                         // [N, C, spatial...]
  int64_t mult;                    // output channels per input channel
  std::vector<int64_t> kernel;     // one per spatial dim
  std::vector<int64_t> strides;    // empty: 1
  std::vector<int64_t> dilations;  // empty: 1
  std::vector<int64_t> pads;       // begins then ends; empty: 0
};

Shape OutShape(const DwLayer& l) {
  const size_t rank = l.kernel.size();
  Shape y{l.x[0], l.x[1] * l.mult};
  for (size_t i = 0; i < rank; ++i) {
    const int64_t s = l.strides.empty() ? 1 : l.strides[i], d = l.dilations.empty() ? 1 : l.dilations[i];
    const int64_t pb = l.pads.empty() ? 0 : l.pads[i], pe = l.pads.empty() ? 0 : l.pads[rank + i];
    y.push_back((l.x[2 + i] + pb + pe - d * (l.kernel[i] - 1) - 1) / s + 1);
  }
  return y;
}

// op "Conv" (ai.onnx) or "FusedConv" in `domain`; Z only for FusedConv.
OpTest DwCase(const std::string& op, const std::string& domain, const DwLayer& l, bool bias, bool z,
              const std::string& act, const std::vector<float>& params, std::mt19937& rng) {
  OpTest t{.op = op, .domain = domain, .opset = domain.empty() ? 17 : 1};
  const int64_t m = l.x[1] * l.mult;
  Shape ws{m, 1};
  ws.insert(ws.end(), l.kernel.begin(), l.kernel.end());
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, l.x, rng)));
  t.inputs.push_back(Const("w", RandomTensor(DataType::kFloat, ws, rng)));
  if (bias) t.inputs.push_back(Const("b", RandomTensor(DataType::kFloat, {m}, rng)));
  if (z) {
    if (!bias) t.inputs.push_back(Omitted());
    t.inputs.push_back(In("z", RandomTensor(DataType::kFloat, OutShape(l), rng)));
  }
  t.attributes = {Int("group", l.x[1]), Ints("kernel_shape", l.kernel)};
  if (!l.strides.empty()) t.attributes.push_back(Ints("strides", l.strides));
  if (!l.dilations.empty()) t.attributes.push_back(Ints("dilations", l.dilations));
  if (!l.pads.empty()) t.attributes.push_back(Ints("pads", l.pads));
  if (!act.empty()) t.attributes.push_back(Str("activation", act));
  if (!params.empty()) t.attributes.push_back(Floats("activation_params", params));
  ConvTolerance(t, 1, l.kernel);
  return t;
}

const DwLayer kLayers[] = {
    {{1, 6, 49}, 1, {31}, {}, {}, {15, 15}},                   // a Conformer block's Conv1d: most outputs near a pad
    {{2, 5, 40}, 2, {5}, {2}, {2}, {3, 1}},                    // stride, dilation, asymmetric pads, multiplier 2
    {{1, 3, 300}, 1, {7}, {3}, {}, {0, 9}},                    // a row of 100 outputs: two blocks, the last partial
    {{1, 4, 9}, 1, {3}, {}, {}, {6, 6}},                       // pads past the window: outputs reading only zeros
    {{2, 5, 9, 11}, 1, {3, 3}, {2, 3}, {1, 2}, {1, 0, 2, 1}},  // 2-D: strides and dilations on both dims
    {{1, 8, 14, 14}, 3, {5, 5}, {}, {}, {2, 2, 2, 2}},         // 2-D, multiplier 3
    {{1, 4, 5, 6, 7}, 2, {2, 3, 3}, {1, 2, 1}, {}, {1, 0, 1, 0, 1, 1}},  // 3-D
};

std::vector<EwVariant> HostVariants() {
  std::vector<EwVariant> v;
  for (const EwVariant& e : {kEwAvx512, kEwAvx2}) {
    if (EwHostHas(e)) v.push_back(e);
  }
  return v;
}

TEST(CpuDepthwiseConv, ConvMatchesRef) {
  std::mt19937 rng(51);
  const std::vector<EwVariant> variants = HostVariants();
  if (variants.empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  int i = 0;
  for (const EwVariant& v : variants) {
    for (const DwLayer& l : kLayers) {
      OpTest t = DwCase("Conv", "", l, i % 2 == 0, false, "", {}, rng);
      t.threads = 1 + i % 2;
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_depthwise_conv__") + v.impl + ".1"))
          << DescribeCase(t);
      ++i;
    }
  }
}

TEST(CpuDepthwiseConv, FusedConvMatchesRefWithEveryActivation) {
  std::mt19937 rng(52);
  const std::vector<EwVariant> variants = HostVariants();
  if (variants.empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  int i = 0;
  for (const EwVariant& v : variants) {
    for (const auto& [act, params] : kEveryFusedActivation) {
      const DwLayer& l = kLayers[static_cast<size_t>(i) % std::size(kLayers)];
      OpTest t = DwCase("FusedConv", "ai.ferry", l, i % 3 != 0, i % 2 == 0, act, params, rng);
      t.threads = 1 + i % 2;
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_fused_depthwise_conv__") + v.impl + ".1"))
          << act << " " << DescribeCase(t);
      ++i;
    }
  }
}

// Row lengths 1 to 70: every tail of a block (1 to 4 vectors, full and partial) on both variants.
TEST(CpuDepthwiseConv, EveryRowLengthMatchesRef) {
  std::mt19937 rng(57);
  const std::vector<EwVariant> variants = HostVariants();
  if (variants.empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  for (const EwVariant& v : variants) {
    for (int64_t w = 1; w <= 70; ++w) {
      OpTest t = DwCase("FusedConv", "ai.ferry", {{1, 3, w}, 1, {3}, {}, {}, {1, 1}}, true, w % 2 == 0, "Relu", {},
                        rng);
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_fused_depthwise_conv__") + v.impl + ".1"))
          << DescribeCase(t);
    }
  }
}

// ONNX Runtime's FusedConv (its activation names are rows of the same table): the optimizer makes it Ferry's
// FusedConv, which runs the depthwise kernel too.
TEST(CpuDepthwiseConv, OrtFusedConvMatchesRef) {
  std::mt19937 rng(53);
  const std::vector<EwVariant> variants = HostVariants();
  if (variants.empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  for (const EwVariant& v : variants) {
    OpTest t = DwCase("FusedConv", "com.microsoft", kLayers[0], true, true, "Relu", {}, rng);
    const std::string ran = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, v.isa)->placement().nodes.at(0).kernel;
    EXPECT_TRUE(ran == std::string("cpu.f32_ms_fused_depthwise_conv__") + v.impl + ".1" ||
                ran == std::string("cpu.f32_fused_depthwise_conv__") + v.impl + ".1")
        << ran;
    EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, ran)) << DescribeCase(t);
  }
}

// The same results on 1 and 2 threads, bit for bit: each output's sum runs in one fixed order.
TEST(CpuDepthwiseConv, ThreadCountDoesNotChangeTheBits) {
  if (HostVariants().empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  std::mt19937 rng(54);
  const OpTest t = DwCase("FusedConv", "ai.ferry", {{2, 64, 120}, 1, {9}, {}, {}, {4, 4}}, true, true, "Silu", {}, rng);
  const auto one = RunOn(t, {"cpu"}, true, 1);
  const auto two = RunOn(t, {"cpu"}, true, 2);
  EXPECT_TRUE(SameBits(two[0].second, one[0].second));
}

// Not depthwise (an ungrouped conv, a grouped one with two input channels per group), or W's shape unknown before
// the run: oneDNN's kernel; and without AVX2 the registry does not offer it.
TEST(CpuDepthwiseConv, OtherConvolutionsRunOnOneDnn) {
  std::mt19937 rng(55);
  const auto expect = [](const OpTest& t, const std::string& isa, const std::string& kernel) {
    SCOPED_TRACE(DescribeCase(t));
    auto session = SessionFor(OneNodeModel(t), {"cpu"}, true, 1, isa);
    EXPECT_EQ(session->placement().nodes.at(0).kernel, kernel);
  };
  OpTest dense = DwCase("Conv", "", kLayers[0], true, false, "", {}, rng);
  dense.inputs[1] = Const("w", RandomTensor(DataType::kFloat, {6, 6, 31}, rng));
  dense.attributes[0] = Int("group", 1);
  expect(dense, "", "cpu.f32_conv__onednn.1");
  OpTest grouped = DwCase("Conv", "", kLayers[0], true, false, "", {}, rng);
  grouped.inputs[1] = Const("w", RandomTensor(DataType::kFloat, {6, 2, 31}, rng));
  grouped.attributes[0] = Int("group", 3);
  expect(grouped, "", "cpu.f32_conv__onednn.1");
  expect(DwCase("Conv", "", kLayers[0], true, false, "", {}, rng), "none", "cpu.f32_conv__onednn.1");
}

// A W fed at run time (its shape declared): the kernel reads it on every run.
TEST(CpuDepthwiseConv, WeightsFedAtRunTime) {
  const std::vector<EwVariant> variants = HostVariants();
  if (variants.empty()) GTEST_SKIP() << "the depthwise kernel needs AVX2+FMA or AVX-512F";
  std::mt19937 rng(56);
  OpTest t = DwCase("Conv", "", kLayers[1], true, false, "", {}, rng);
  t.inputs[1].constant = false;
  EXPECT_TRUE(
      MatchesRefWithKernel(t, variants[0].isa, std::string("cpu.f32_depthwise_conv__") + variants[0].impl + ".1"));
}

}  // namespace
}  // namespace ferry::testing
