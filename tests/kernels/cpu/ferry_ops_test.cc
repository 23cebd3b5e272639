// The cpu kernels of Ferry's own ops (domain ai.ferry: FusedConv, BlockedConv, BlockedPool, ReorderToBlocked,
// ReorderFromBlocked) against ref: random configurations over every activation, Z and bias, group kinds, strides,
// pads, dilations, channel counts that are not multiples of the block, blocks 8 and 16; blocked inputs carry
// random (finite) values in their padding channels, which every kernel must ignore; the configurations the
// kernels refuse, with their reasons; layout round trips; dynamic shapes run concurrently.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/isa.h"
#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"
#include "kernels/ref/blocked_layout.h"

namespace ferry::testing {
namespace {

const std::string kFerry = "ai.ferry";

// The stored shape of a blocked tensor: [N, ceil(C/b), D..., b], or [N, D..., C] channels-last (block 0).
Shape Blocked(const Shape& logical, int64_t block) { return ref::BlockedShape(logical, block); }

struct Activation {
  std::string name;
  std::vector<float> params;
};

Activation RandomActivation(std::mt19937& rng) {
  static const Activation kAll[] = {{"", {}},
                                    {"Relu", {}},
                                    {"LeakyRelu", {0.1f}},
                                    {"Clip", {-0.5f, 0.75f}},
                                    {"Clip", {0.0f, 6.0f}},
                                    {"Clip", {-std::numeric_limits<float>::infinity(), 0.25f}},
                                    {"Sigmoid", {}},
                                    {"Tanh", {}},
                                    {"HardSigmoid", {0.2f, 0.5f}},
                                    {"HardSigmoid", {0.5f, 0.1f}},
                                    {"HardSwish", {}},
                                    {"Silu", {}},
                                    {"Mish", {}},
                                    {"LeakyRelu", {}},  // no params: the defaults
                                    {"Clip", {}},
                                    {"HardSigmoid", {}}};
  return kAll[Pick(rng, 0, static_cast<int64_t>(std::size(kAll)) - 1)];
}

void AddActivation(OpTest& t, const Activation& a) {
  if (a.name.empty() && a.params.empty()) return;
  t.attributes.push_back(Str("activation", a.name));
  if (!a.params.empty()) t.attributes.push_back(Floats("activation_params", a.params));
}

// Conv geometry: kernel, strides, dilations, pads and an input extent that fits, per spatial dim.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads, in;
};

Window RandomWindow(std::mt19937& rng, int64_t rank, int64_t max_kernel, bool allow_dilation) {
  Window w;
  w.pads.assign(static_cast<size_t>(2 * rank), 0);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = Pick(rng, 1, max_kernel);
    const int64_t dil = allow_dilation && k <= 3 && Pick(rng, 0, 3) == 0 ? 2 : 1;
    w.kernel.push_back(k);
    w.strides.push_back(Pick(rng, 1, 2));
    w.dilations.push_back(dil);
    const int64_t eff = (k - 1) * dil + 1;
    w.pads[static_cast<size_t>(d)] = Pick(rng, 0, eff / 2);
    w.pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, eff / 2);
    w.in.push_back(eff + Pick(rng, 0, rank == 3 ? 3 : 9));
  }
  return w;
}

void AddWindow(OpTest& t, const Window& w) {
  t.attributes.push_back(Ints("strides", w.strides));
  t.attributes.push_back(Ints("dilations", w.dilations));
  t.attributes.push_back(Ints("pads", w.pads));
}

// One random FusedConv: rank 1-3, group 1 / grouped / depthwise, every activation, B and Z present or not.
OpTest RandomFusedConv(std::mt19937& rng) {
  const int64_t rank = Pick(rng, 0, 9) < 2 ? 1 : (Pick(rng, 0, 9) < 8 ? 2 : 3);
  const int64_t kind = Pick(rng, 0, 3);  // 0-1 group 1, 2 grouped, 3 depthwise
  int64_t group = 1, cg = Pick(rng, 1, 20), mg = Pick(rng, 1, 24);
  if (kind == 2) {
    group = Pick(rng, 2, 4);
    cg = Pick(rng, 1, 8);
    mg = Pick(rng, 1, 8);
  }
  if (kind == 3) {
    group = Pick(rng, 2, 40);
    cg = 1;
    mg = 1;
  }
  const Window win = RandomWindow(rng, rank, rank == 3 ? 2 : 4, true);
  const int64_t batch = Pick(rng, 1, 2);
  Shape xs{batch, cg * group}, ws{mg * group, cg};
  xs.insert(xs.end(), win.in.begin(), win.in.end());
  ws.insert(ws.end(), win.kernel.begin(), win.kernel.end());
  Shape ys{batch, mg * group};
  for (int64_t d = 0; d < rank; ++d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t eff = (win.kernel[i] - 1) * win.dilations[i] + 1;
    ys.push_back((win.in[i] + win.pads[i] + win.pads[i + static_cast<size_t>(rank)] - eff) / win.strides[i] + 1);
  }
  OpTest t{.op = "FusedConv", .domain = kFerry, .opset = 1};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng)));
  Tensor w = RandomTensor(DataType::kFloat, ws, rng);
  t.inputs.push_back(Pick(rng, 0, 2) > 0 ? Const("w", w) : In("w", w));
  const bool bias = Pick(rng, 0, 1), z = Pick(rng, 0, 1);
  if (bias) t.inputs.push_back(Const("b", RandomTensor(DataType::kFloat, {mg * group}, rng)));
  if (z) {
    if (!bias) t.inputs.push_back(Omitted());
    t.inputs.push_back(In("z", RandomTensor(DataType::kFloat, ys, rng)));
  }
  if (group > 1) t.attributes.push_back(Int("group", group));
  AddWindow(t, win);
  AddActivation(t, RandomActivation(rng));
  ConvTolerance(t, cg, win.kernel);
  t.threads = static_cast<int>(Pick(rng, 1, 2));
  return t;
}

TEST(CpuFerryOpsFusedConv, RandomConfigurationsMatchRef) {
  std::mt19937 rng(20250101);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomFusedConv(rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

// Every activation on the plain-activation path (a large pointwise conv) and the reordered one, with Z.
TEST(CpuFerryOpsFusedConv, EveryActivationOnBothLayoutPaths) {
  std::mt19937 rng(9);
  const Activation all[] = {{"Relu", {}},         {"LeakyRelu", {0.02f}},       {"Clip", {0.0f, 6.0f}},
                            {"Sigmoid", {}},      {"Tanh", {}},                 {"HardSigmoid", {0.2f, 0.5f}},
                            {"HardSwish", {}},    {"Silu", {}},                 {"Gelu", {}},
                            {"GeluTanh", {}},     {"Mish", {}},                 {"", {}}};
  for (const Activation& a : all) {
    for (const int64_t k : {1, 3}) {
      const Shape xs{1, 16, 20, 20}, ws{24, 16, k, k}, ys{1, 24, 20, 20};
      OpTest t{.op = "FusedConv",
               .domain = kFerry,
               .opset = 1,
               .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -3, 3)),
                          Const("w", RandomTensor(DataType::kFloat, ws, rng)),
                          Const("b", RandomTensor(DataType::kFloat, {24}, rng)),
                          In("z", RandomTensor(DataType::kFloat, ys, rng, -3, 3))},
               .attributes = {Ints("pads", {k / 2, k / 2, k / 2, k / 2})}};
      AddActivation(t, a);
      ConvTolerance(t, 16, {k, k});
      t.atol *= 3;  // inputs in [-3, 3)
      for (int threads : {1, 2}) {
        t.threads = threads;
        EXPECT_TRUE(MatchesRef(t, "cpu")) << a.name << " k=" << k << " threads=" << threads;
      }
    }
  }
}

TEST(CpuFerryOpsFusedConv, NoInputChannelsGiveTheActivationOfBiasPlusZ) {
  std::mt19937 rng(4);
  OpTest t{.op = "FusedConv",
           .domain = kFerry,
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 0, 5, 5}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {4, 0, 3, 3}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {4}, rng)),
                      In("z", RandomTensor(DataType::kFloat, {2, 4, 3, 3}, rng))},
           .attributes = {Str("activation", "Tanh")}};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

// One random BlockedConv that oneDNN runs with a jit kernel: blocks 8 and 16: group 1 (C >= block, or plain_input
// with C < block, or a pointwise conv), 2-D depthwise, or grouped with C/group and M/group multiples of the block;
// channels-last (block 0): any of these but plain_input, grouped with any group size.
OpTest RandomBlockedConv(std::mt19937& rng) {
  const int64_t block = std::vector<int64_t>{16, 8, 0}[static_cast<size_t>(Pick(rng, 0, 2))];
  int64_t kind = Pick(rng, 0, 5);  // 0-1 group 1, 2 plain_input, 3 pointwise small C, 4 depthwise, 5 grouped
  if (block == 0 && kind == 2) kind = 0;
  const int64_t rank = kind == 2 || (kind == 4 && block > 0) || Pick(rng, 0, 9) < 8 ? 2 : (Pick(rng, 0, 1) ? 1 : 3);
  const int64_t b = block > 0 ? block : 16;  // channel counts around a block
  const int64_t channels_choice[] = {b, 24, 40, 3 * b, b + 1};
  int64_t group = 1, cg = channels_choice[Pick(rng, 0, 4)], mg = channels_choice[Pick(rng, 0, 4)];
  bool plain_input = false;
  Window win = RandomWindow(rng, rank, rank == 3 ? 2 : (kind == 2 ? 7 : 4), block != 8 && kind != 2);
  if (kind == 2) {
    plain_input = true;
    cg = Pick(rng, 1, block - 1);
    mg = channels_choice[Pick(rng, 0, 4)];
  } else if (kind == 3) {
    cg = Pick(rng, 1, b - 1);
    for (auto& s : win.strides) s = 1;
    for (auto& k : win.kernel) k = 1;
    for (auto& d : win.dilations) d = 1;
    std::fill(win.pads.begin(), win.pads.end(), 0);
  } else if (kind == 4) {
    group = channels_choice[Pick(rng, 0, 4)];
    if (Pick(rng, 0, 2) == 0) group = Pick(rng, 2, 7);
    cg = 1;
    mg = 1;
  } else if (kind == 5) {
    group = Pick(rng, 2, 3);
    cg = block > 0 ? block * Pick(rng, 1, 2) : Pick(rng, 1, 12);
    mg = block > 0 ? block * Pick(rng, 1, 2) : Pick(rng, 1, 12);
  }
  const int64_t batch = Pick(rng, 1, 2);
  const int64_t channels = cg * group, out_channels = mg * group;
  Shape xs{batch, channels}, ws{out_channels, cg}, ys{batch, out_channels};
  xs.insert(xs.end(), win.in.begin(), win.in.end());
  ws.insert(ws.end(), win.kernel.begin(), win.kernel.end());
  for (int64_t d = 0; d < rank; ++d) {
    const size_t i = static_cast<size_t>(d);
    const int64_t eff = (win.kernel[i] - 1) * win.dilations[i] + 1;
    ys.push_back((win.in[i] + win.pads[i] + win.pads[i + static_cast<size_t>(rank)] - eff) / win.strides[i] + 1);
  }
  OpTest t{.op = "BlockedConv", .domain = kFerry, .opset = 1};
  // Blocked X: its padding channels hold random values the kernel must ignore.
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, plain_input ? xs : Blocked(xs, block), rng)));
  Tensor w = RandomTensor(DataType::kFloat, ws, rng);
  t.inputs.push_back(Pick(rng, 0, 3) > 0 ? Const("w", w) : In("w", w));
  const bool bias = Pick(rng, 0, 2) > 0, z = Pick(rng, 0, 1);
  if (bias) t.inputs.push_back(Const("b", RandomTensor(DataType::kFloat, {out_channels}, rng)));
  if (z) {
    if (!bias) t.inputs.push_back(Omitted());
    t.inputs.push_back(In("z", RandomTensor(DataType::kFloat, Blocked(ys, block), rng)));
  }
  t.attributes.push_back(Int("block", block));
  if (plain_input) t.attributes.push_back(Int("plain_input", 1));
  if (group > 1) t.attributes.push_back(Int("group", group));
  AddWindow(t, win);
  AddActivation(t, RandomActivation(rng));
  ConvTolerance(t, cg, win.kernel);
  t.threads = static_cast<int>(Pick(rng, 1, 2));
  return t;
}

// oneDNN implements the 16-channel blocked convolution and pooling with AVX-512 only: on a host without it
// (AMD EPYC with AVX2, say) it would run its reference implementation, which these kernels refuse by design
// (their shape predicates), so the strict tests that also draw block 16 cannot pass there. They run in full on
// AVX-512 hosts; RefusedConfigurationsFallBackToRef covers the refusal everywhere.
#define FERRY_SKIP_BLOCK16_WITHOUT_AVX512()                                                                     \
  do {                                                                                                          \
    if (!DetectHostIsa().contains(IsaSet{Isa::kAvx512f})) {                                                     \
      GTEST_SKIP() << "oneDNN has no native 16-channel blocked kernels without AVX-512 on this host";           \
    }                                                                                                           \
  } while (0)

// Strict: every configuration runs on cpu (its shape predicate has checked that oneDNN picks a jit kernel for
// it, so this also proves the generated configurations are all fast ones) and matches ref.
TEST(CpuFerryOpsBlockedConv, RandomConfigurationsMatchRef) {
  FERRY_SKIP_BLOCK16_WITHOUT_AVX512();
  std::mt19937 rng(777);
  for (int i = 0; i < 80; ++i) {
    const OpTest t = RandomBlockedConv(rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

// MobileNet / ResNet-like layers, both blocks: every output element (padding channels included: zeros) as ref.
// Where oneDNN offers brgconv, the ungrouped spatial ones among them run it on nhwc between two reorders (conv.cc).
TEST(CpuFerryOpsBlockedConv, NetworkLikeLayersMatchRef) {
  FERRY_SKIP_BLOCK16_WITHOUT_AVX512();
  std::mt19937 rng(31);
  struct Case {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, pads;
    bool plain_input;
  };
  const Case cases[] = {{{1, 3, 32, 32}, {24, 3, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, true},       // stem, plain X
                        {{1, 3, 33, 31}, {40, 3, 7, 7}, 1, {2, 2}, {3, 3, 3, 3}, true},       // 7x7 stem
                        {{1, 24, 14, 14}, {24, 1, 3, 3}, 24, {1, 1}, {1, 1, 1, 1}, false},    // depthwise
                        {{2, 40, 15, 15}, {40, 1, 5, 5}, 40, {2, 2}, {2, 2, 2, 2}, false},    // depthwise 5x5 s2
                        {{1, 24, 14, 14}, {40, 24, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, false},    // pointwise 24 -> 40
                        {{1, 40, 14, 14}, {24, 40, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, false},    // pointwise 40 -> 24
                        {{1, 64, 14, 14}, {64, 64, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, false},    // 3x3
                        {{1, 64, 14, 14}, {64, 64, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, false},    // strided 3x3
                        {{2, 40, 15, 15}, {24, 40, 3, 3}, 1, {2, 2}, {1, 1, 1, 1}, false},    // and partial blocks
                        {{1, 64, 14, 14}, {128, 64, 1, 1}, 1, {2, 2}, {0, 0, 0, 0}, false},   // strided 1x1
                        {{1, 64, 12, 12}, {64, 16, 3, 3}, 4, {1, 1}, {1, 1, 1, 1}, false}};   // grouped by 4
  for (const Case& c : cases) {
    for (int64_t block : {8, 16, 0}) {
      if (c.plain_input && (block == 0 || c.x[1] >= block)) continue;
      const Shape ys = {c.x[0], c.w[0], (c.x[2] + c.pads[0] + c.pads[2] - c.w[2]) / c.strides[0] + 1,
                        (c.x[3] + c.pads[1] + c.pads[3] - c.w[3]) / c.strides[1] + 1};
      for (bool with_z : {false, true}) {
        OpTest t{.op = "BlockedConv",
                 .domain = kFerry,
                 .opset = 1,
                 .inputs = {In("x", RandomTensor(DataType::kFloat, c.plain_input ? c.x : Blocked(c.x, block), rng)),
                            Const("w", RandomTensor(DataType::kFloat, c.w, rng)),
                            Const("b", RandomTensor(DataType::kFloat, {c.w[0]}, rng))},
                 .attributes = {Int("block", block), Int("group", c.group), Ints("strides", c.strides),
                                Ints("pads", c.pads), Str("activation", with_z ? "Relu" : "HardSwish")}};
        if (with_z) t.inputs.push_back(In("z", RandomTensor(DataType::kFloat, Blocked(ys, block), rng)));
        if (c.plain_input) t.attributes.push_back(Int("plain_input", 1));
        ConvTolerance(t, c.w[1], {c.w[2], c.w[3]});
        for (int threads : {1, 2}) {
          t.threads = threads;
          EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t) << " block=" << block;
        }
      }
    }
  }
}

// The padding channels of Y are zeros even where act(0 + Z's padding) is not (HardSigmoid(0) = 0.5).
TEST(CpuFerryOpsBlockedConv, PaddingChannelsOfYAreZero) {
  FERRY_SKIP_BLOCK16_WITHOUT_AVX512();
  std::mt19937 rng(12);
  for (int64_t group : {1, 20}) {
    const Shape xs{1, 20, 6, 6}, ws{20, 20 / group, 3, 3};
    OpTest t{.op = "BlockedConv",
             .domain = kFerry,
             .opset = 1,
             .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked(xs, 16), rng)),
                        Const("w", RandomTensor(DataType::kFloat, ws, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {20}, rng)),
                        In("z", RandomTensor(DataType::kFloat, Blocked(xs, 16), rng, 1, 2))},
             .attributes = {Int("block", 16), Int("group", group), Ints("pads", {1, 1, 1, 1}),
                            Str("activation", "HardSigmoid"), Floats("activation_params", {0.2f, 0.5f})}};
    const auto got = RunOn(t, {"cpu"}, true, 1);
    const Tensor& y = got[0].second;
    ASSERT_EQ(y.shape(), (Shape{1, 2, 6, 6, 16}));
    for (int64_t i = 0; i < 36; ++i) {
      for (int64_t lane = 4; lane < 16; ++lane) {
        ASSERT_EQ(y.data<float>()[(36 + i) * 16 + lane], 0.0f) << "position " << i << " lane " << lane;
      }
    }
  }
}

// SiLU runs as a pass over Y after oneDNN's primitive (activation_pass.h), not as its post-op: after the sum of Z,
// on every plan (grouped, depthwise, 1x1, strided; 2 threads), with the padding channels still zero.
TEST(CpuFerryOpsBlockedConv, SiluAfterThePrimitiveMatchesRefAndKeepsThePaddingZero) {
  FERRY_SKIP_BLOCK16_WITHOUT_AVX512();
  std::mt19937 rng(13);
  struct Case {
    int64_t group, kernel, stride;
  };
  for (const Case& c : {Case{1, 3, 1}, Case{20, 3, 1}, Case{1, 1, 1}, Case{1, 3, 2}}) {
    const Shape xs{1, 20, 9, 9}, ws{20, 20 / c.group, c.kernel, c.kernel};
    const int64_t pad = c.kernel / 2, out = (9 + 2 * pad - c.kernel) / c.stride + 1;
    const Shape ys{1, 20, out, out};
    OpTest t{.op = "BlockedConv",
             .domain = kFerry,
             .opset = 1,
             .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked(xs, 16), rng)),
                        Const("w", RandomTensor(DataType::kFloat, ws, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {20}, rng)),
                        In("z", RandomTensor(DataType::kFloat, Blocked(ys, 16), rng))},
             .attributes = {Int("block", 16), Int("group", c.group), Ints("pads", {pad, pad, pad, pad}),
                            Ints("strides", {c.stride, c.stride}), Str("activation", "Silu")},
             .threads = 2};
    ConvTolerance(t, 20 / c.group, {c.kernel, c.kernel});
    EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
    const auto got = RunOn(t, {"cpu"}, true, 2);
    const Tensor& y = got[0].second;
    for (int64_t i = 0; i < out * out; ++i) {
      for (int64_t lane = 4; lane < 16; ++lane) {
        ASSERT_EQ(y.data<float>()[(out * out + i) * 16 + lane], 0.0f) << "position " << i << " lane " << lane;
      }
    }
  }
}

TEST(CpuFerryOpsBlockedConv, DynamicShapesBuildPrimitivesPerShapeAndRunConcurrently) {
  std::mt19937 rng(8);
  OpTest t{.op = "BlockedConv",
           .domain = kFerry,
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 9, 9, 16}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {24, 24, 3, 3}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {24}, rng))},
           .attributes = {Int("block", 16), Ints("strides", {2, 1}), Str("auto_pad", "SAME_UPPER"),
                          Str("activation", "Relu")},
           .rtol = 1e-4,
           .atol = 3e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{1, 2, 9, 9, 16}, Shape{3, 2, 5, 12, 16}, Shape{2, 2, 16, 16, 16}, Shape{1, 2, 9, 9, 16}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuFerryOpsBlockedConv, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(5);
  auto conv = [&](Shape xs, Shape ws, int64_t group, int64_t block, bool plain_input) {
    OpTest t{.op = "BlockedConv",
             .domain = kFerry,
             .opset = 1,
             .inputs = {In("x", RandomTensor(DataType::kFloat, plain_input ? xs : Blocked(xs, block), rng)),
                        Const("w", RandomTensor(DataType::kFloat, ws, rng))},
             .attributes = {Int("block", block), Int("group", group), Ints("pads", {1, 1, 1, 1})}};
    if (plain_input) t.attributes.push_back(Int("plain_input", 1));
    return t;
  };
  // Depthwise with a channel multiplier, and groups of 8 channels blocked by 16: oneDNN's reference code.
  ExpectRefusedAndFallsBack(conv({1, 16, 6, 6}, {32, 1, 3, 3}, 16, 16, false), "not multiples of the block 16");
  ExpectRefusedAndFallsBack(conv({1, 64, 6, 6}, {64, 8, 3, 3}, 8, 16, false), "not multiples of the block 16");
  // A blocked X with fewer channels than the block under a spatial kernel; plain_input with C >= block.
  ExpectRefusedAndFallsBack(conv({1, 3, 6, 6}, {16, 3, 3, 3}, 1, 16, false), "plain_input = 1 is the fast form");
  ExpectRefusedAndFallsBack(conv({1, 16, 6, 6}, {16, 16, 3, 3}, 1, 16, true), "plain_input with C = 16 >= block");
  // A 1-D depthwise convolution (oneDNN's jit depthwise kernels are 2-D).
  OpTest dw1d = conv({1, 24, 10}, {24, 1, 3}, 24, 16, false);
  dw1d.attributes = {Int("block", 16), Int("group", 24)};
  ExpectRefusedAndFallsBack(dw1d, "1-D depthwise convolution");
  // Caught only by asking oneDNN (W alone passes the rules): a large dilated kernel blocked by 8, grouped (an
  // ungrouped one runs brgconv on nhwc where oneDNN has it, conv.cc).
  OpTest dilated = conv({1, 64, 14, 14}, {64, 16, 5, 5}, 4, 8, false);
  dilated.attributes = {Int("block", 8), Int("group", 4), Ints("dilations", {3, 3}), Ints("pads", {6, 6, 6, 6})};
  ExpectRefusedAndFallsBack(dilated, "on its slow reference implementation (ref:any)");
  // Channels-last with a plain X.
  OpTest nhwc_plain = conv({1, 3, 6, 6}, {16, 3, 3, 3}, 1, 0, true);
  nhwc_plain.attributes = {Int("block", 0), Int("plain_input", 1)};
  ExpectRefusedAndFallsBack(nhwc_plain, "plain_input with channels-last");
  // A block oneDNN has no layout for.
  OpTest block4 = conv({1, 8, 6, 6}, {8, 8, 3, 3}, 1, 4, false);
  ExpectRefusedAndFallsBack(block4, "block = 4 is not implemented on cpu");
}

TEST(CpuFerryOpsFusedConv, RefusedActivationsFallBackToRef) {
  std::mt19937 rng(6);
  OpTest t{.op = "FusedConv",
           .domain = kFerry,
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 4, 6, 6}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {4, 4, 3, 3}, rng))},
           .attributes = {Str("activation", "Clip"), Floats("activation_params", {1.0f, -1.0f})}};
  ExpectRefusedAndFallsBack(t, "Clip with min > max");
}

// --- layout reorders ---

TEST(CpuFerryOpsReorder, RandomShapesMatchRefBothWays) {
  std::mt19937 rng(21);
  for (int i = 0; i < 40; ++i) {
    const int64_t block = std::vector<int64_t>{16, 8, 0}[static_cast<size_t>(Pick(rng, 0, 2))];
    const int64_t rank = Pick(rng, 3, 5);
    const int64_t channel_choices[] = {1, 3, 8, 16, 17, 24, 40};
    Shape logical{Pick(rng, 1, 2), channel_choices[Pick(rng, 0, 6)]};
    for (int64_t d = 2; d < rank; ++d) logical.push_back(Pick(rng, 1, rank == 5 ? 4 : 9));
    const int threads = static_cast<int>(Pick(rng, 1, 2));
    OpTest to{.op = "ReorderToBlocked",
              .domain = kFerry,
              .opset = 1,
              .inputs = {In("x", RandomTensor(DataType::kFloat, logical, rng))},
              .attributes = {Int("block", block)},
              .rtol = 0,
              .atol = 0,
              .threads = threads};
    EXPECT_TRUE(MatchesRef(to, "cpu")) << DescribeCase(to);
    OpTest from{.op = "ReorderFromBlocked",
                .domain = kFerry,
                .opset = 1,
                .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked(logical, block), rng))},
                .attributes = {Int("block", block), Int("channels", logical[1])},
                .rtol = 0,
                .atol = 0,
                .threads = threads};
    EXPECT_TRUE(MatchesRef(from, "cpu")) << DescribeCase(from);
  }
}

// Plain -> blocked writes zeros into the padding channels; blocked -> plain gives the input back.
TEST(CpuFerryOpsReorder, RoundTripAndZeroPadding) {
  std::mt19937 rng(22);
  for (int64_t block : {8, 16}) {
    const Shape logical{2, 19, 5, 7};
    const Tensor x = RandomTensor(DataType::kFloat, logical, rng, -1, 1, true);
    OpTest to{.op = "ReorderToBlocked",
              .domain = kFerry,
              .opset = 1,
              .inputs = {In("x", x)},
              .attributes = {Int("block", block)}};
    const Tensor blocked = RunOn(to, {"cpu"}, true, 2)[0].second;
    ASSERT_EQ(blocked.shape(), Blocked(logical, block));
    const int64_t blocks = blocked.dim(1), plane = 35;
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t i = 0; i < plane; ++i) {
        for (int64_t lane = 19 % block; lane < block; ++lane) {
          const int64_t at = ((n * blocks + blocks - 1) * plane + i) * block + lane;
          ASSERT_EQ(blocked.data<float>()[at], 0.0f);
        }
      }
    }
    OpTest from{.op = "ReorderFromBlocked",
                .domain = kFerry,
                .opset = 1,
                .inputs = {In("x", blocked)},
                .attributes = {Int("block", block), Int("channels", 19)}};
    const Tensor back = RunOn(from, {"cpu"}, true, 2)[0].second;
    EXPECT_TRUE(TensorsClose(back, x, 0, 0));
  }
  // Channels-last: [N, H, W, C], no padding.
  const Tensor x = RandomTensor(DataType::kFloat, {2, 19, 5, 7}, rng, -1, 1, true);
  OpTest to{.op = "ReorderToBlocked", .domain = kFerry, .opset = 1, .inputs = {In("x", x)},
            .attributes = {Int("block", 0)}};
  const Tensor nhwc = RunOn(to, {"cpu"}, true, 2)[0].second;
  ASSERT_EQ(nhwc.shape(), (Shape{2, 5, 7, 19}));
  for (int64_t c = 0; c < 19; ++c) {  // element (1, c, 3, 4)
    const float got = nhwc.data<float>()[((1 * 5 + 3) * 7 + 4) * 19 + c];
    const float want = x.data<float>()[((19 + c) * 5 + 3) * 7 + 4];
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << c;
  }
  OpTest from{.op = "ReorderFromBlocked", .domain = kFerry, .opset = 1, .inputs = {In("x", nhwc)},
              .attributes = {Int("block", 0), Int("channels", 19)}};
  EXPECT_TRUE(TensorsClose(RunOn(from, {"cpu"}, true, 2)[0].second, x, 0, 0));
}

TEST(CpuFerryOpsReorder, RefusedRanksFallBackToRef) {
  std::mt19937 rng(23);
  OpTest t{.op = "ReorderToBlocked",
           .domain = kFerry,
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 5}, rng))},
           .attributes = {Int("block", 8)}};
  ExpectRefusedAndFallsBack(t, "logical rank 2 is not implemented on cpu");
}

// --- pools ---

// One random BlockedPool: every mode, 1-3 spatial dims, strides, pads, ceil_mode, count_include_pad, no window
// without an input element and no dilations (refused; see below); blocked X with random padding channels. Block 16
// only where the host has AVX-512 (oneDNN has no native 16-channel kernels without it).
OpTest RandomBlockedPool(std::mt19937& rng) {
  const bool avx512 = DetectHostIsa().contains(IsaSet{Isa::kAvx512f});
  const int64_t block = std::vector<int64_t>{16, 8, 0}[static_cast<size_t>(Pick(rng, avx512 ? 0 : 1, 2))];
  const char* modes[] = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  const std::string mode = modes[Pick(rng, 0, 9) < 8 ? Pick(rng, 0, 1) : Pick(rng, 2, 3)];
  const int64_t rank = Pick(rng, 0, 9) < 7 ? 2 : (Pick(rng, 0, 1) ? 1 : 3);
  const int64_t channels = std::vector<int64_t>{3, 8, 16, 24, 40}[static_cast<size_t>(Pick(rng, 0, 4))];
  Shape logical{Pick(rng, 1, 2), channels};
  OpTest t{.op = "BlockedPool", .domain = kFerry, .opset = 1};
  t.attributes = {Int("block", block), Str("mode", mode)};
  if (mode == "MaxPool" || mode == "AveragePool") {
    std::vector<int64_t> kernel, strides, dilations, pads(static_cast<size_t>(2 * rank));
    const bool with_dilations = Pick(rng, 0, 1);  // all 1: dilated pools are refused (oneDNN's ref pooling)
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t k = Pick(rng, 1, 3), dil = 1;
      kernel.push_back(k);
      strides.push_back(Pick(rng, 1, 3));
      dilations.push_back(dil);
      const int64_t eff = (k - 1) * dil + 1;
      // pads <= (k - 1) * dil with an input at least the window: every window holds an input element.
      pads[static_cast<size_t>(d)] = Pick(rng, 0, eff - 1);
      pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, eff - 1);
      logical.push_back(eff + Pick(rng, 0, rank == 3 ? 3 : 8));
    }
    t.attributes.push_back(Ints("kernel_shape", kernel));
    t.attributes.push_back(Ints("strides", strides));
    t.attributes.push_back(Ints("pads", pads));
    if (with_dilations) t.attributes.push_back(Ints("dilations", dilations));
    if (Pick(rng, 0, 1)) t.attributes.push_back(Int("ceil_mode", 1));
    if (mode == "AveragePool" && Pick(rng, 0, 1)) t.attributes.push_back(Int("count_include_pad", 1));
  } else {
    for (int64_t d = 0; d < rank; ++d) logical.push_back(Pick(rng, 1, rank == 3 ? 4 : 9));
  }
  // Max pools see edge values (NaN, ±inf, ...): ref skips NaN in windows and propagates it in global max.
  const bool edges = mode == "MaxPool" || mode == "GlobalMaxPool";
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, Blocked(logical, block), rng, -1, 1, edges)));
  t.rtol = 1e-5;
  t.atol = 1e-5;
  t.threads = static_cast<int>(Pick(rng, 1, 2));
  return t;
}

TEST(CpuFerryOpsBlockedPool, RandomConfigurationsMatchRef) {
  std::mt19937 rng(99);
  for (int i = 0; i < 80; ++i) {
    const OpTest t = RandomBlockedPool(rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

// ResNet's 3x3/2 max pool with pad 1, ceil_mode average pools whose last window overhangs the end padding, and the
// global pools of a classifier head.
TEST(CpuFerryOpsBlockedPool, NetworkLikePoolsMatchRef) {
  const bool avx512 = DetectHostIsa().contains(IsaSet{Isa::kAvx512f});
  std::mt19937 rng(98);
  for (int64_t block : {8, 16, 0}) {
    if (block == 16 && !avx512) continue;  // oneDNN has no native 16-channel kernels without AVX-512
    const Tensor x = RandomTensor(DataType::kFloat, Blocked({2, 24, 13, 13}, block), rng);
    std::vector<std::vector<onnx::AttributeProto>> cases = {
        {Str("mode", "MaxPool"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})},
        {Str("mode", "AveragePool"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Int("ceil_mode", 1),
         Ints("pads", {1, 1, 1, 1})},
        {Str("mode", "AveragePool"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Int("ceil_mode", 1),
         Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", 1)},
        {Str("mode", "AveragePool"), Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2}), Int("ceil_mode", 1)},
        {Str("mode", "MaxPool"), Ints("kernel_shape", {2, 2}), Str("auto_pad", "SAME_UPPER")},
        {Str("mode", "GlobalAveragePool")},
        {Str("mode", "GlobalMaxPool")}};
    for (auto& attrs : cases) {
      attrs.push_back(Int("block", block));
      OpTest t{.op = "BlockedPool", .domain = kFerry, .opset = 1, .inputs = {In("x", x)}, .attributes = attrs};
      for (int threads : {1, 2}) {
        t.threads = threads;
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
      }
    }
  }
}

// `t` on 1 and 2 threads against ref, on each of BlockedPool's variants the host can run: AVX-512 (where it has
// AVX-512F), AVX2 (the session's ISA narrowed to AVX2) and the portable one (narrowed to none).
void ExpectEveryPoolVariantMatchesRef(OpTest t) {
  SCOPED_TRACE(DescribeCase(t));
  const IsaSet host = DetectHostIsa();
  for (int threads : {1, 2}) {
    t.threads = threads;
    if (host.contains(IsaSet{Isa::kAvx512f, Isa::kAvx2})) {
      EXPECT_TRUE(MatchesRefWithKernel(t, "", "cpu.f32_blocked_pool__onednn_avx512.1"));
    }
    if (host.contains(IsaSet{Isa::kAvx2})) {
      EXPECT_TRUE(MatchesRefWithKernel(t, "avx2,fma", "cpu.f32_blocked_pool__onednn_avx2.1"));
    }
    EXPECT_TRUE(MatchesRefWithKernel(t, "none", "cpu.f32_blocked_pool__onednn.1"));
  }
}

// The global average sums in double in ref's order, 16 lanes at a time on AVX-512, 8 on AVX2 and lane by lane
// elsewhere: every variant gives ref's bits, for blocks 16 and 8 and channels-last (24 channels: a 16-lane chunk
// and a masked 8-lane one; 7 and 40 channels), planes whose size is and is not a multiple of the four partial sums.
TEST(CpuFerryOpsBlockedPool, GlobalAverageHasRefsBitsOnEveryIsa) {
  std::mt19937 rng(96);
  for (int64_t block : {16, 8, 0}) {
    for (const Shape& logical : {Shape{2, 24, 13, 13}, Shape{1, 40, 4, 8}, Shape{3, 7, 1, 3}}) {
      OpTest t{.op = "BlockedPool",
               .domain = kFerry,
               .opset = 1,
               .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked(logical, block), rng, -100, 100))},
               .attributes = {Int("block", block), Str("mode", "GlobalAveragePool")},
               .rtol = 0,
               .atol = 0};
      ExpectEveryPoolVariantMatchesRef(t);
    }
  }
}

// 2-D MaxPool on nChw16c and nChw8c: the own loops of the AVX-512 and AVX2 variants and the portable variant
// (oneDNN and its exactness pass) all give ref's values exactly, NaN, ±inf and signed zeros in the input included;
// windows clipped by pads on every side, ceil_mode, GoogLeNet's 3x3 stride-1 branch pool and strides larger than
// the window. Block 16 needs AVX-512 (oneDNN has no native 16-channel kernels without it).
TEST(CpuFerryOpsBlockedPool, MaxPool2dIsExactOnEveryIsa) {
  std::mt19937 rng(95);
  const std::vector<std::vector<onnx::AttributeProto>> cases = {
      {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})},
      {Ints("kernel_shape", {3, 2}), Ints("strides", {1, 2}), Ints("pads", {2, 0, 1, 1}), Int("ceil_mode", 1)},
      {Ints("kernel_shape", {2, 2}), Ints("strides", {3, 3})},
      {Ints("kernel_shape", {3, 3}), Ints("strides", {1, 1}), Ints("pads", {1, 1, 1, 1}), Int("ceil_mode", 1)}};
  const bool avx512 = DetectHostIsa().contains(IsaSet{Isa::kAvx512f});
  // The wide plane has runs of outputs whose windows lie inside the row (the own loops do four at a time).
  for (int64_t block : {16, 8}) {
    if (block == 16 && !avx512) continue;
    for (const Shape& x : {Shape{2, 20, 11, 9}, Shape{1, 20, 7, 30}}) {
      for (const auto& attrs : cases) {
        OpTest t{.op = "BlockedPool",
                 .domain = kFerry,
                 .opset = 1,
                 .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked(x, block), rng, -1, 1, true))},
                 .attributes = attrs,
                 .rtol = 0,
                 .atol = 0};
        t.attributes.push_back(Int("block", block));
        t.attributes.push_back(Str("mode", "MaxPool"));
        ExpectEveryPoolVariantMatchesRef(t);
      }
    }
  }
}

TEST(CpuFerryOpsBlockedPool, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(97);
  // A 1x1 window with pads of 1: the first and last windows hold only padding.
  OpTest t{.op = "BlockedPool",
           .domain = kFerry,
           .opset = 1,
           .inputs = {In("x", RandomTensor(DataType::kFloat, Blocked({1, 5, 2, 6}, 8), rng))},
           .attributes = {Int("block", 8), Str("mode", "MaxPool"), Ints("kernel_shape", {1, 1}),
                          Ints("pads", {1, 0, 1, 0})}};
  ExpectRefusedAndFallsBack(t, "a window that holds no input element");
  t.attributes = {Int("block", 8), Str("mode", "AveragePool"), Ints("kernel_shape", {1, 1}),
                  Ints("pads", {1, 0, 1, 0})};
  ExpectRefusedAndFallsBack(t, "a window that holds no input element");
  // Dilated pools: oneDNN's reference code.
  t.attributes = {Int("block", 8), Str("mode", "MaxPool"), Ints("kernel_shape", {2, 2}), Ints("dilations", {1, 2})};
  ExpectRefusedAndFallsBack(t, "with dilations would run on oneDNN's slow reference pooling");
  t.attributes = {Int("block", 12), Str("mode", "GlobalMaxPool")};
  t.inputs = {In("x", RandomTensor(DataType::kFloat, {1, 1, 4, 4, 12}, rng))};
  ExpectRefusedAndFallsBack(t, "block = 12 is not implemented on cpu");
}

// A rough per-call timing, not a test: ./ferry_tests --gtest_also_run_disabled_tests
// --gtest_filter='CpuFerryOpsBench.*'. A ResNet 56x56x64 3x3 conv + bias (+ Relu), 1 thread: Conv (plain tensors,
// reordered in and out by the kernel), FusedConv (plain, reordered), BlockedConv (nChw16c or nhwc, no reorder);
// a MobileNet-V2 depthwise 3x3 on 144x56x56.
TEST(CpuFerryOpsBench, DISABLED_BlockedVsPlainConv56x56x64) {
  std::mt19937 rng(1);
  const Tensor x = RandomTensor(DataType::kFloat, {1, 64, 56, 56}, rng);
  const Tensor xb = RandomTensor(DataType::kFloat, Blocked({1, 64, 56, 56}, 16), rng);
  const Tensor w = RandomTensor(DataType::kFloat, {64, 64, 3, 3}, rng);
  const Tensor b = RandomTensor(DataType::kFloat, {64}, rng);
  auto time = [&](const OpTest& t, const char* name) {
    const std::string bytes = OneNodeModel(t);
    auto s = SessionFor(bytes, {"cpu"}, true, 1);
    const auto feeds = Feeds(t);
    for (int i = 0; i < 5; ++i) s->Run(feeds);
    double best = 1e30;  // the best of 10 rounds of 20 calls (the machine is shared)
    for (int round = 0; round < 10; ++round) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) s->Run(feeds);
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count() / 20);
    }
    std::printf("%-44s %.3f ms/call\n", name, best);
  };
  const std::vector<onnx::AttributeProto> pads = {Ints("pads", {1, 1, 1, 1})};
  OpTest conv{.op = "Conv", .inputs = {In("x", x), Const("w", w), Const("b", b)}, .attributes = pads};
  time(conv, "Conv (plain, reorders in/out)");
  OpTest fused{.op = "FusedConv",
               .domain = kFerry,
               .opset = 1,
               .inputs = {In("x", x), Const("w", w), Const("b", b)},
               .attributes = {Ints("pads", {1, 1, 1, 1}), Str("activation", "Relu")}};
  time(fused, "FusedConv + Relu (plain, reorders in/out)");
  OpTest blocked{.op = "BlockedConv",
                 .domain = kFerry,
                 .opset = 1,
                 .inputs = {In("x", xb), Const("w", w), Const("b", b)},
                 .attributes = {Ints("pads", {1, 1, 1, 1}), Str("activation", "Relu"), Int("block", 16)}};
  time(blocked, "BlockedConv + Relu (nChw16c, no reorder)");
  const Tensor xd = RandomTensor(DataType::kFloat, {1, 144, 56, 56}, rng);
  const Tensor xdb = RandomTensor(DataType::kFloat, Blocked({1, 144, 56, 56}, 16), rng);
  const Tensor wd = RandomTensor(DataType::kFloat, {144, 1, 3, 3}, rng);
  const Tensor bd = RandomTensor(DataType::kFloat, {144}, rng);
  OpTest dw{.op = "Conv",
            .inputs = {In("x", xd), Const("w", wd), Const("b", bd)},
            .attributes = {Ints("pads", {1, 1, 1, 1}), Int("group", 144)}};
  time(dw, "Conv depthwise 144x56x56 (plain)");
  OpTest dwb{.op = "BlockedConv",
             .domain = kFerry,
             .opset = 1,
             .inputs = {In("x", xdb), Const("w", wd), Const("b", bd)},
             .attributes = {Ints("pads", {1, 1, 1, 1}), Int("group", 144), Str("activation", "Clip"),
                            Floats("activation_params", {0.0f, 6.0f}), Int("block", 16)}};
  time(dwb, "BlockedConv depthwise 144x56x56 + Clip");
  OpTest nhwc = blocked;
  nhwc.inputs[0] = In("x", RandomTensor(DataType::kFloat, Blocked({1, 64, 56, 56}, 0), rng));
  nhwc.attributes.back() = Int("block", 0);
  time(nhwc, "BlockedConv + Relu (nhwc, no reorder)");
  OpTest dwn = dwb;
  dwn.inputs[0] = In("x", RandomTensor(DataType::kFloat, Blocked({1, 144, 56, 56}, 0), rng));
  dwn.attributes.back() = Int("block", 0);
  time(dwn, "BlockedConv depthwise 144x56x56 + Clip (nhwc)");
  OpTest to{.op = "ReorderToBlocked", .domain = kFerry, .opset = 1, .inputs = {In("x", x)},
            .attributes = {Int("block", 16)}};
  time(to, "ReorderToBlocked 1x64x56x56");
}

}  // namespace
}  // namespace ferry::testing
