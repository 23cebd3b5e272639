// The optimizer's passes, before/after on the IR and for numerical equivalence with the unoptimized graph.
#include <gtest/gtest.h>

#include <random>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ir/onnx_import.h"
#include "passes/pass_manager.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"
#include "testing/model_builder.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::ModelBuilder;

constexpr int32_t kF = onnx::TensorProto::FLOAT;

// A model under construction with helpers for random conv weights.
struct Net {
  ModelBuilder b{17};
  std::mt19937 rng{7};
  int counter = 0;

  std::vector<float> Random(size_t n, float scale) {
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
  }
  // Conv with random weights [m, c/group, k, k] and bias; returns the output name.
  std::string Conv(const std::string& x, int64_t c, int64_t m, int64_t k, int64_t stride = 1, int64_t group = 1,
                   bool bias = true) {
    const std::string id = std::to_string(++counter);
    b.FloatInitializer("w" + id, {m, c / group, k, k}, Random(static_cast<size_t>(m * (c / group) * k * k), 0.3f));
    std::string y = "conv" + id;
    auto& n = bias ? b.Node("Conv", {x, "w" + id, "b" + id}, {y}, "Conv_" + id) : b.Node("Conv", {x, "w" + id}, {y}, "Conv_" + id);
    if (bias) b.FloatInitializer("b" + id, {m}, Random(static_cast<size_t>(m), 0.1f));
    const int64_t p = k / 2;
    auto* pads = n.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(p);
    auto* s = n.add_attribute();
    s->set_name("strides");
    s->set_type(onnx::AttributeProto::INTS);
    s->add_ints(stride);
    s->add_ints(stride);
    if (group != 1) ModelBuilder::IntAttr(n, "group", group);
    return y;
  }
  std::string Op(const std::string& op, std::initializer_list<std::string> in) {
    std::string y = op + std::to_string(++counter);
    b.Node(op, in, {y}, op + "_" + std::to_string(counter));
    return y;
  }
};

std::unique_ptr<ir::Model> Optimized(const std::string& bytes, int level, std::vector<std::string> backends = {"cpu", "ref"},
                                     std::set<std::string, std::less<>> frozen = {}) {
  auto model = ir::ImportModelFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  passes::PassContext ctx;
  ctx.level = level;
  for (const auto& name : backends) ctx.backends.push_back(FindBackend(name));
  ctx.frozen = std::move(frozen);
  passes::OptimizeModel(*model, ctx);
  return model;
}

std::vector<const ir::Node*> NodesOf(const ir::Model& m, const std::string& op) {
  std::vector<const ir::Node*> out;
  for (const auto& n : m.graph->nodes()) {
    if (n->op_type() == op) out.push_back(n.get());
  }
  return out;
}

// Runs the model at level 0 and at `level` on random input and compares.
void ExpectSameOutputs(const std::string& bytes, const Shape& x_shape, int level, int threads = 1) {
  std::mt19937 rng(11);
  const Tensor x = testing::RandomTensor(DataType::kFloat, x_shape, rng);
  SessionOptions o;
  o.threads = threads;
  o.optimization_level = 0;
  auto base = Session::CreateFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o);
  o.optimization_level = level;
  auto opt = Session::CreateFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o);
  const auto want = base->Run({{"x", x}});
  const auto got = opt->Run({{"x", x}});
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-4, 1e-4)) << "output " << want[i].first;
  }
}

// x -> Conv -> Relu -> Conv -> Add(., relu) -> Relu: a residual block.
std::string ResidualBlock(int64_t c) {
  Net net;
  net.b.Input("x", kF, {1, c, 9, 9});
  const std::string r1 = net.Op("Relu", {net.Conv("x", c, c, 3)});
  const std::string c2 = net.Conv(r1, c, c, 3);
  const std::string y = net.Op("Relu", {net.Op("Add", {c2, r1})});
  net.b.Output(y, kF, {});
  return net.b.Bytes();
}

TEST(FuseConv, ResidualBlockBecomesTwoFusedConvs) {
  const auto m = Optimized(ResidualBlock(8), 2);
  const auto fused = NodesOf(*m, "FusedConv");
  ASSERT_EQ(m->graph->nodes().size(), 2u);
  ASSERT_EQ(fused.size(), 2u);
  EXPECT_EQ(fused[0]->GetString("activation", ""), "Relu");
  EXPECT_EQ(fused[0]->input(3), nullptr);
  EXPECT_EQ(fused[1]->GetString("activation", ""), "Relu");
  ASSERT_NE(fused[1]->input(3), nullptr);
  EXPECT_EQ(fused[1]->input(3), fused[0]->output(0));  // Z is the block's input
  EXPECT_EQ(fused[1]->domain(), schemas::kFerryDomain);
  EXPECT_EQ(m->opsets.at(std::string(schemas::kFerryDomain)), 1);
  ExpectSameOutputs(ResidualBlock(8), {1, 8, 9, 9}, 2);
}

TEST(FuseConv, SiluAndClipAndSigmoid) {
  Net net;
  net.b.Input("x", kF, {1, 4, 7, 7});
  const std::string c1 = net.Conv("x", 4, 8, 3);
  const std::string silu = net.Op("Mul", {c1, net.Op("Sigmoid", {c1})});
  net.b.FloatInitializer("lo", {}, {0.0f});
  net.b.FloatInitializer("hi", {}, {6.0f});
  const std::string c2 = net.Conv(silu, 8, 8, 1);
  const std::string clip = "clip";
  net.b.Node("Clip", {c2, "lo", "hi"}, {clip}, "Clip_1");
  const std::string y = net.Op("Sigmoid", {net.Conv(clip, 8, 8, 3, 2, 8)});
  net.b.Output(y, kF, {});
  const std::string bytes = net.b.Bytes();
  const auto m = Optimized(bytes, 2);
  const auto fused = NodesOf(*m, "FusedConv");
  ASSERT_EQ(fused.size(), 3u);
  EXPECT_EQ(m->graph->nodes().size(), 3u);
  EXPECT_EQ(fused[0]->GetString("activation", ""), "Silu");
  EXPECT_EQ(fused[1]->GetString("activation", ""), "Clip");
  EXPECT_EQ(fused[1]->GetFloats("activation_params"), (std::vector<float>{0.0f, 6.0f}));
  EXPECT_EQ(fused[2]->GetString("activation", ""), "Sigmoid");
  ExpectSameOutputs(bytes, {1, 4, 7, 7}, 2);
}

TEST(FuseConv, ConvOutputReadTwiceOrAGraphOutputIsNotFused) {
  Net net;
  net.b.Input("x", kF, {1, 4, 5, 5});
  const std::string c1 = net.Conv("x", 4, 4, 3);
  const std::string r = net.Op("Relu", {c1});
  net.b.Output(r, kF, {});
  net.b.Output(c1, kF, {});
  const auto m = Optimized(net.b.Bytes(), 2);
  EXPECT_TRUE(NodesOf(*m, "FusedConv").empty());
  EXPECT_EQ(NodesOf(*m, "Relu").size(), 1u);
}

TEST(FuseConv, PinnedNodesAreLeftAlone) {
  const auto m = Optimized(ResidualBlock(8), 3, {"cpu", "ref"}, {"Conv"});
  EXPECT_TRUE(NodesOf(*m, "FusedConv").empty());
  EXPECT_TRUE(NodesOf(*m, "BlockedConv").empty());
  SessionOptions o;
  o.pins = {{"Conv", "ref"}};
  const std::string bytes = ResidualBlock(8);
  EXPECT_NO_THROW(Session::CreateFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), o));
}

TEST(FuseConv, RefOnlyFusesOntoRef) {
  const auto m = Optimized(ResidualBlock(8), 3, {"ref"});
  EXPECT_EQ(NodesOf(*m, "FusedConv").size(), 2u);
  EXPECT_TRUE(NodesOf(*m, "BlockedConv").empty());  // ref asks for no blocked layout
}

// A small convolutional network with what MobileNet / EfficientNet / ResNet have: a 3-channel stem, depthwise
// convs, channel counts that are not multiples of a block, squeeze-excitation, residual adds, pools.
std::string SmallCnn() {
  Net net;
  net.b.Input("x", kF, {2, 3, 20, 20});
  std::string h = net.Op("Relu", {net.Conv("x", 3, 24, 3, 2)});                // 24 x 10 x 10
  const std::string dw = net.Conv(h, 24, 24, 3, 1, 24);                          // depthwise
  const std::string se = net.Op("GlobalAveragePool", {dw});
  const std::string s = net.Op("Sigmoid", {net.Conv(net.Op("Relu", {net.Conv(se, 24, 8, 1)}), 8, 24, 1)});
  h = net.Op("Add", {net.Conv(net.Op("Mul", {dw, s}), 24, 24, 1), h});          // residual
  auto& mp = net.b.Node("MaxPool", {h}, {"pooled"}, "MaxPool_1");
  auto* k = mp.add_attribute();
  k->set_name("kernel_shape");
  k->set_type(onnx::AttributeProto::INTS);
  k->add_ints(2);
  k->add_ints(2);
  auto* st = mp.add_attribute();
  st->set_name("strides");
  st->set_type(onnx::AttributeProto::INTS);
  st->add_ints(2);
  st->add_ints(2);
  h = net.Op("Clip", {net.Conv("pooled", 24, 40, 3)});
  const std::string y = net.Op("Flatten", {net.Op("GlobalAveragePool", {h})});
  net.b.Output(y, kF, {});
  net.b.Output(h, kF, {});  // a blocked value that is also a graph output
  return net.b.Bytes();
}

bool HostHasBlockedLayout() {
  return FindBackend("cpu")->activation_block(Target()).has_value();
}

TEST(BlockedLayout, ConvChainsRunBlockedWithReordersOnlyAtTheEdges) {
  if (!HostHasBlockedLayout()) GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2";
  const auto m = Optimized(SmallCnn(), 3);
  for (const auto& n : m->graph->nodes()) {
    EXPECT_NE(n->op_type(), "Conv") << n->Describe();
    EXPECT_NE(n->op_type(), "FusedConv") << n->Describe();
  }
  const auto convs = NodesOf(*m, "BlockedConv");
  ASSERT_EQ(convs.size(), 6u);
  if (*FindBackend("cpu")->activation_block(Target()) > 0) {
    EXPECT_EQ(convs[0]->GetInt("plain_input", 0), 1);  // the 3-channel stem reads plain NCHW
    EXPECT_TRUE(NodesOf(*m, "ReorderToBlocked").empty());
  } else {  // channels-last: the image is reordered once
    EXPECT_EQ(convs[0]->GetInt("plain_input", 0), 0);
    EXPECT_EQ(NodesOf(*m, "ReorderToBlocked").size(), 1u);
  }
  EXPECT_EQ(NodesOf(*m, "BlockedPool").size(), 3u);
  // Only the two graph-facing values go back to plain: the Flatten's input and the Clip output.
  EXPECT_EQ(NodesOf(*m, "ReorderFromBlocked").size(), 2u);
  EXPECT_EQ(NodesOf(*m, "Mul").size(), 1u);  // squeeze-excitation scale on blocked tensors
}

TEST(BlockedLayout, SameOutputsAsUnoptimized) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    ExpectSameOutputs(SmallCnn(), {2, 3, 20, 20}, 3, threads);
  }
  ExpectSameOutputs(ResidualBlock(16), {1, 16, 9, 9}, 3);
  ExpectSameOutputs(ResidualBlock(5), {1, 5, 9, 9}, 3);
}

// Two branches from x summed: the fused conv's Z (the other branch) dies at the sum, so the sum accumulates in
// Z's buffer (KernelContext::ReuseInput); X and Z are different buffers.
std::string TwoBranchSum(int64_t c) {
  Net net;
  net.b.Input("x", kF, {1, c, 8, 8});
  const std::string a = net.Conv("x", c, c, 1);
  const std::string b = net.Conv(net.Op("Relu", {net.Conv("x", c, c, 3)}), c, c, 3);
  net.b.Output(net.Op("Relu", {net.Op("Add", {b, a})}), kF, {});
  return net.b.Bytes();
}

TEST(BlockedLayout, InPlaceResidualSumMatches) {
  for (int64_t c : {8, 16, 20}) {
    SCOPED_TRACE(c);
    for (int level : {2, 3}) ExpectSameOutputs(TwoBranchSum(c), {1, c, 8, 8}, level);
  }
}

void IntsAttr(onnx::NodeProto& n, const char* name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// SqueezeNet's pools: MaxPool 3x3/2 with ceil_mode = 1 between convolutions. With static shapes the kernel's
// shape predicate proves every window reads input, so the pool runs blocked and no reorders surround it.
std::string CeilModePool(int64_t size) {
  Net net;
  net.b.Input("x", kF, {1, 16, size, size});
  const std::string h = net.Op("Relu", {net.Conv("x", 16, 16, 3)});
  auto& mp = net.b.Node("MaxPool", {h}, {"pooled"}, "MaxPool_ceil");
  IntsAttr(mp, "kernel_shape", {3, 3});
  IntsAttr(mp, "strides", {2, 2});
  auto* c = mp.add_attribute();
  c->set_name("ceil_mode");
  c->set_type(onnx::AttributeProto::INT);
  c->set_i(1);
  net.b.Output(net.Conv("pooled", 16, 16, 1), kF, {});
  return net.b.Bytes();
}

TEST(BlockedLayout, CeilModeMaxPoolRunsBlocked) {
  if (!HostHasBlockedLayout()) GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2";
  for (int64_t size : {10, 11}) {
    SCOPED_TRACE(size);
    const auto m = Optimized(CeilModePool(size), 3);
    EXPECT_EQ(NodesOf(*m, "BlockedPool").size(), 1u);
    EXPECT_TRUE(NodesOf(*m, "MaxPool").empty());
    ExpectSameOutputs(CeilModePool(size), {1, 16, size, size}, 3);
  }
}

// An Inception-like merge: branches of `c1` and `c2` channels concatenated along the channels, then a 3x3/1
// MaxPool (pads 1) and a convolution, as GoogLeNet's blocks; the second Concat reads a plain input (x).
std::string BranchConcat(int64_t c1, int64_t c2) {
  Net net;
  net.b.Input("x", kF, {1, 16, 9, 9});
  const std::string a = net.Op("Relu", {net.Conv("x", 16, c1, 1)});
  // 16 inner channels: whole blocks of 8 and of 16 (oneDNN 2.6 blocks only those).
  const std::string b = net.Op("Relu", {net.Conv(net.Conv("x", 16, 16, 1), 16, c2, 3)});
  const std::string cat = "cat";
  ModelBuilder::IntAttr(net.b.Node("Concat", {a, b}, {cat}, "Concat_branches"), "axis", 1);
  auto& mp = net.b.Node("MaxPool", {cat}, {"pooled"}, "MaxPool_branch");
  IntsAttr(mp, "kernel_shape", {3, 3});
  IntsAttr(mp, "pads", {1, 1, 1, 1});
  const std::string y = net.Conv("pooled", c1 + c2, 16, 1);
  ModelBuilder::IntAttr(net.b.Node("Concat", {y, "x"}, {"cat2"}, "Concat_with_input"), "axis", -3);
  net.b.Output("cat2", kF, {});
  return net.b.Bytes();
}

TEST(BlockedLayout, ChannelConcatOfWholeBlocksRunsBlocked) {
  if (!HostHasBlockedLayout()) GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2";
  const auto m = Optimized(BranchConcat(32, 16), 3);
  const auto concats = NodesOf(*m, "Concat");
  ASSERT_EQ(concats.size(), 2u);
  for (const ir::Node* c : concats) {
    for (const ir::Value* v : c->inputs()) EXPECT_EQ(v->type().shape->size(), 5u) << c->Describe();
  }
  // The branches feed the Concat and the pool reads it without leaving the layout; the graph input x is
  // reordered once, and only the graph output goes back to plain.
  EXPECT_EQ(NodesOf(*m, "BlockedPool").size(), 1u);
  EXPECT_EQ(NodesOf(*m, "ReorderFromBlocked").size(), 1u);
  ExpectSameOutputs(BranchConcat(32, 16), {1, 16, 9, 9}, 3);
}

TEST(BlockedLayout, ChannelConcatOfPartialBlocksStaysPlain) {
  if (!HostHasBlockedLayout()) GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2";
  // 20 channels are not whole blocks of 8 or 16: the padding lanes would land inside the result.
  if (*FindBackend("cpu")->activation_block(Target()) > 0) {
    const auto m = Optimized(BranchConcat(20, 16), 3);
    const auto concats = NodesOf(*m, "Concat");
    ASSERT_EQ(concats.size(), 2u);
    EXPECT_EQ(concats[0]->input(0)->type().shape->size(), 4u);
  }
  ExpectSameOutputs(BranchConcat(20, 16), {1, 16, 9, 9}, 3);
  ExpectSameOutputs(BranchConcat(20, 12), {1, 16, 9, 9}, 3, 2);
}

// DenseNet's pre-activation: conv -> Relu -> BatchNormalization -> Relu -> conv. The BN has no conv to fold into
// (fold_batch_norm); blocked, it becomes a Mul and an Add on the blocked tensor.
std::string PreActivationBatchNorm(int64_t c) {
  Net net;
  net.b.Input("x", kF, {1, 16, 8, 8});
  const std::string r = net.Op("Relu", {net.Conv("x", 16, c, 3)});
  const size_t n = static_cast<size_t>(c);
  std::vector<float> var = net.Random(n, 0.5f);
  for (float& v : var) v += 0.6f;  // positive
  net.b.FloatInitializer("bn_scale", {c}, net.Random(n, 1.5f));
  net.b.FloatInitializer("bn_bias", {c}, net.Random(n, 0.5f));
  net.b.FloatInitializer("bn_mean", {c}, net.Random(n, 0.5f));
  net.b.FloatInitializer("bn_var", {c}, var);
  net.b.Node("BatchNormalization", {r, "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn"}, "BN_pre");
  net.b.Output(net.Conv(net.Op("Relu", {"bn"}), c, 16, 1), kF, {});
  return net.b.Bytes();
}

TEST(BlockedLayout, PreActivationBatchNormRunsBlocked) {
  if (!HostHasBlockedLayout()) GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2";
  for (int64_t c : {16, 20}) {  // 20: a partial last block, whose padding lanes the constants keep at 0
    SCOPED_TRACE(c);
    const auto m = Optimized(PreActivationBatchNorm(c), 3);
    EXPECT_TRUE(NodesOf(*m, "BatchNormalization").empty());
    // BN -> Relu is one blocked ScaleShift (fuse_scale_shift, then blocked_layout): one pass over the tensor.
    const auto ss = NodesOf(*m, "ScaleShift");
    ASSERT_EQ(ss.size(), 1u);
    EXPECT_EQ(ss[0]->GetString("activation", ""), "Relu");
    EXPECT_EQ(ss[0]->input(0)->type().shape->size(), 5u);
    EXPECT_EQ(NodesOf(*m, "ReorderFromBlocked").size(), 1u);  // only the graph output
    const auto to_blocked = NodesOf(*m, "ReorderToBlocked");  // only the graph input (16 channels: whole blocks)
    ASSERT_LE(to_blocked.size(), 1u);
    if (!to_blocked.empty()) {
      EXPECT_EQ(to_blocked[0]->input(0)->name(), "x");
    }
    for (const ir::Value* v : m->graph->initializers()) {
      EXPECT_EQ(v->name().rfind("bn_", 0), std::string::npos) << v->name() << " is left unread";
    }
    ExpectSameOutputs(PreActivationBatchNorm(c), {1, 16, 8, 8}, 3);
    ExpectSameOutputs(PreActivationBatchNorm(c), {1, 16, 8, 8}, 3, 2);
  }
}

TEST(BlockedLayout, NoBlockedLayoutWithoutAvx2) {
  auto bytes = SmallCnn();
  auto model = ir::ImportModelFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  passes::PassContext ctx;
  ctx.backends = {FindBackend("cpu"), FindBackend("ref")};
  ctx.target.isa = IsaSet{};
  passes::OptimizeModel(*model, ctx);
  EXPECT_TRUE(NodesOf(*model, "BlockedConv").empty());
}

// GELU as torch exports it (Div, Erf, Add, Mul, Mul) and in the other order (Mul by 0.5 first), with Constant nodes.
std::string GeluModel(bool half_first) {
  Net net;
  net.b.Input("x", kF, {2, 3, 40});
  auto constant = [&](const std::string& name, float v) {
    auto& c = net.b.Node("Constant", {}, {name}, name + "_node");
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  };
  constant("sqrt2", 1.4142135f);
  constant("one", 1.0f);
  constant("half", 0.5f);
  const std::string h = net.Op("Relu", {"x"});  // x of the pattern is an intermediate value
  const std::string a = net.Op("Add", {net.Op("Erf", {net.Op("Div", {h, "sqrt2"})}), "one"});
  const std::string y = half_first ? net.Op("Mul", {net.Op("Mul", {h, "half"}), a})
                                   : net.Op("Mul", {net.Op("Mul", {h, a}), "half"});
  net.b.Output(y, kF, {});
  return net.b.Bytes();
}

TEST(FuseGelu, BothFormsBecomeOneGelu) {
  for (bool half_first : {false, true}) {
    SCOPED_TRACE(half_first);
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
      const auto m = Optimized(GeluModel(half_first), 2, backends);
      ASSERT_EQ(m->graph->nodes().size(), 2u);  // Relu, Gelu: the Constants are gone too
      const auto gelu = NodesOf(*m, "Gelu");
      ASSERT_EQ(gelu.size(), 1u);
      EXPECT_EQ(gelu[0]->domain(), schemas::kFerryDomain);
      EXPECT_EQ(gelu[0]->GetString("approximate", ""), "none");
    }
    ExpectSameOutputs(GeluModel(half_first), {2, 3, 40}, 2);
  }
}

TEST(FuseGelu, WrongConstantsOrSharedIntermediatesAreLeftAlone) {
  Net net;
  net.b.Input("x", kF, {4, 8});
  net.b.FloatInitializer("c", {}, {1.5f});  // not sqrt(2)
  net.b.FloatInitializer("one", {}, {1.0f});
  net.b.FloatInitializer("half", {}, {0.5f});
  const std::string a = net.Op("Add", {net.Op("Erf", {net.Op("Div", {"x", "c"})}), "one"});
  net.b.Output(net.Op("Mul", {net.Op("Mul", {"x", a}), "half"}), kF, {});
  EXPECT_TRUE(NodesOf(*Optimized(net.b.Bytes(), 2), "Gelu").empty());

  Net shared;
  shared.b.Input("x", kF, {4, 8});
  shared.b.FloatInitializer("s", {}, {1.4142135f});
  shared.b.FloatInitializer("one", {}, {1.0f});
  shared.b.FloatInitializer("half", {}, {0.5f});
  const std::string e = shared.Op("Erf", {shared.Op("Div", {"x", "s"})});
  const std::string a2 = shared.Op("Add", {e, "one"});
  shared.b.Output(shared.Op("Mul", {shared.Op("Mul", {"x", a2}), "half"}), kF, {});
  shared.b.Output(e, kF, {});  // the erf is also a result
  EXPECT_TRUE(NodesOf(*Optimized(shared.b.Bytes(), 2), "Gelu").empty());
}

TEST(PassManager, RejectsBadLevelsAndUnknownPasses) {
  auto bytes = ResidualBlock(4);
  auto model = ir::ImportModelFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  passes::PassContext ctx;
  ctx.backends = {FindBackend("ref")};
  ctx.level = 4;
  EXPECT_THROW(passes::OptimizeModel(*model, ctx), InvalidArgumentError);
  ctx.level = 2;
  ctx.disabled = {"no_such_pass"};
  try {
    passes::OptimizeModel(*model, ctx);
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("fuse_conv_add"), std::string::npos) << e.what();
  }
}

TEST(PassManager, DisabledPassDoesNotRun) {
  auto bytes = ResidualBlock(4);
  auto model = ir::ImportModelFromBytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  passes::PassContext ctx;
  ctx.backends = {FindBackend("ref")};
  ctx.disabled = {"fuse_conv_add"};
  const auto report = passes::OptimizeModel(*model, ctx);
  EXPECT_EQ(NodesOf(*model, "Add").size(), 1u);
  EXPECT_EQ(NodesOf(*model, "FusedConv").size(), 1u);  // the first conv's Relu still fuses
  EXPECT_EQ(NodesOf(*model, "Conv").size(), 1u);
  for (const auto& run : report.runs) EXPECT_NE(run.name, "fuse_conv_add");
}

// A transformer FFN as torch exports it: MatMul(x, W1), Add(b1, .) (bias first), GELU's erf formula, MatMul(., W2),
// Add(., b2). `bias_dims` is b1's shape (64 elements: [64], or [1, 1, 64] which becomes a [64] initializer);
// `shared_bias`: b1 reaches the Add through an Identity, as exporters share weights.
std::string Ffn(std::vector<int64_t> bias_dims = {64}, bool shared_bias = false) {
  Net net;
  net.b.Input("x", kF, {2, 16, 32});
  net.b.FloatInitializer("w1", {32, 64}, net.Random(32 * 64, 0.3f));
  auto& b1 = *net.b.graph().add_initializer();
  b1.set_name("b1");
  b1.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : bias_dims) b1.add_dims(d);
  for (float v : net.Random(64, 0.2f)) b1.add_float_data(v);
  net.b.FloatInitializer("w2", {64, 32}, net.Random(64 * 32, 0.3f));
  net.b.FloatInitializer("b2", {32}, net.Random(32, 0.1f));
  net.b.FloatInitializer("sqrt2", {}, {1.4142135f});
  net.b.FloatInitializer("one", {}, {1.0f});
  net.b.FloatInitializer("half", {}, {0.5f});
  const std::string bias = shared_bias ? net.Op("Identity", {"b1"}) : "b1";
  const std::string h = net.Op("Add", {bias, net.Op("MatMul", {"x", "w1"})});
  const std::string a = net.Op("Add", {net.Op("Erf", {net.Op("Div", {h, "sqrt2"})}), "one"});
  const std::string gelu = net.Op("Mul", {net.Op("Mul", {h, a}), "half"});
  net.b.Output(net.Op("Add", {net.Op("MatMul", {gelu, "w2"}), "b2"}), kF, {});
  return net.b.Bytes();
}

TEST(FuseMatMul, LinearBiasGeluBecomesOneFusedMatMul) {
  for (const std::vector<std::string>& backends : {std::vector<std::string>{"cpu", "ref"}, {"ref"}}) {
    SCOPED_TRACE(backends.size());
    const auto m = Optimized(Ffn(), 2, backends);
    const auto fused = NodesOf(*m, "FusedMatMul");
    ASSERT_EQ(m->graph->nodes().size(), 2u);  // nothing else is left: no MatMul, Add, Erf or Gelu
    ASSERT_EQ(fused.size(), 2u);
    EXPECT_EQ(fused[0]->domain(), schemas::kFerryDomain);
    EXPECT_EQ(fused[0]->GetString("activation", ""), "Gelu");
    ASSERT_EQ(fused[0]->num_inputs(), 3u);
    EXPECT_EQ(fused[0]->input(2)->name(), "b1");
    EXPECT_EQ(fused[1]->GetString("activation", ""), "");
    EXPECT_EQ(fused[1]->input(2)->name(), "b2");
    EXPECT_EQ(fused[1]->input(0), fused[0]->output(0));
  }
  for (int level : {2, 3}) ExpectSameOutputs(Ffn(), {2, 16, 32}, level);
  ExpectSameOutputs(Ffn(), {2, 16, 32}, 2, 2);
}

TEST(FuseMatMul, RowShapedOrSharedBiasBecomesAnNInitializer) {
  for (const std::string& bytes : {Ffn({1, 1, 64}), Ffn({64}, true)}) {
    const auto m = Optimized(bytes, 2);
    const auto fused = NodesOf(*m, "FusedMatMul");
    ASSERT_EQ(fused.size(), 2u);
    EXPECT_EQ(m->graph->nodes().size(), 2u);  // the Identity is gone too
    EXPECT_EQ(fused[0]->GetString("activation", ""), "Gelu");
    const ir::Value* c = fused[0]->input(2);
    ASSERT_NE(c->initializer(), nullptr);
    EXPECT_EQ(c->initializer()->shape(), (Shape{64}));
    ExpectSameOutputs(bytes, {2, 16, 32}, 2);
  }
}

TEST(FuseMatMul, OtherBiasShapesAndNonConstantAddendsAreLeftAlone) {
  // A bias that varies along another dim ([16, 64]: per row of each matrix; the product's full shape) or raises
  // the rank ([1, 1, 1, 64]).
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{16, 64}, {1, 1, 1, 64}, {2, 16, 64}}) {
    Net net;
    net.b.Input("x", kF, {2, 16, 32});
    net.b.FloatInitializer("w", {32, 64}, net.Random(32 * 64, 0.3f));
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    auto& b = *net.b.graph().add_initializer();
    b.set_name("b");
    b.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) b.add_dims(d);
    for (float v : net.Random(static_cast<size_t>(count), 0.2f)) b.add_float_data(v);
    net.b.Output(net.Op("Add", {net.Op("MatMul", {"x", "w"}), "b"}), kF, {});
    const auto m = Optimized(net.b.Bytes(), 2);
    EXPECT_TRUE(NodesOf(*m, "FusedMatMul").empty()) << dims.size();
    EXPECT_EQ(NodesOf(*m, "Add").size(), 1u);
  }
  // The Add's other input is a graph input.
  Net net;
  net.b.Input("x", kF, {2, 16, 32});
  net.b.Input("z", kF, {64});
  net.b.FloatInitializer("w", {32, 64}, net.Random(32 * 64, 0.3f));
  net.b.Output(net.Op("Add", {net.Op("MatMul", {"x", "w"}), "z"}), kF, {});
  const auto m = Optimized(net.b.Bytes(), 2);
  EXPECT_TRUE(NodesOf(*m, "FusedMatMul").empty());
  EXPECT_EQ(NodesOf(*m, "MatMul").size(), 1u);
}

TEST(FuseMatMul, ActivationWithoutBiasAndPinnedNodes) {
  Net net;
  net.b.Input("x", kF, {4, 32});
  net.b.FloatInitializer("w", {32, 8}, net.Random(32 * 8, 0.3f));
  net.b.Output(net.Op("Relu", {net.Op("MatMul", {"x", "w"})}), kF, {});
  const std::string bytes = net.b.Bytes();
  const auto m = Optimized(bytes, 2);
  const auto fused = NodesOf(*m, "FusedMatMul");
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0]->GetString("activation", ""), "Relu");
  EXPECT_EQ(fused[0]->input(2), nullptr);
  ExpectSameOutputs(bytes, {4, 32}, 2);
  // Pinned MatMuls stay as they are (and so do their biases and activations).
  const auto pinned = Optimized(Ffn(), 3, {"cpu", "ref"}, {"MatMul"});
  EXPECT_TRUE(NodesOf(*pinned, "FusedMatMul").empty());
  EXPECT_EQ(NodesOf(*pinned, "MatMul").size(), 2u);
  EXPECT_EQ(NodesOf(*pinned, "Gelu").size(), 1u);
}

}  // namespace
}  // namespace ferry
