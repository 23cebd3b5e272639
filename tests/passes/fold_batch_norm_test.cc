// fold_batch_norm: Conv / ConvTranspose -> BatchNormalization (inference) => one Conv with folded weights.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/onnx_export.h"
#include "passes/pass_list.h"
#include "pass_test_util.h"

namespace ferry {
namespace {

using pass_test::kF;
using pass_test::Net;
using pass_test::NodesOf;
using pass_test::Optimized;
using pass_test::OpList;

// A conv, BN and friends with random weights; names carry a per-node counter.
struct BnNet : Net {
  using Net::Net;

  // Conv (or ConvTranspose) with random weights, `pad` on every side; returns the output name.
  std::string Conv(const std::string& x, int64_t c, int64_t m, int64_t k, int64_t group = 1, bool bias = true,
                   bool transpose = false, const std::string& weights = "") {
    const std::string id = std::to_string(++counter);
    std::string w = weights;
    if (w.empty()) {
      w = "w" + id;
      if (transpose) Weights(w, {c, m / group, k, k}, -0.3f, 0.3f);
      else Weights(w, {m, c / group, k, k}, -0.3f, 0.3f);
    }
    const std::string y = (transpose ? "convt" : "conv") + id;
    const std::string op = transpose ? "ConvTranspose" : "Conv";
    auto& n = bias ? b.Node(op, {x, w, "b" + id}, {y}, op + "_" + id) : b.Node(op, {x, w}, {y}, op + "_" + id);
    if (bias) Weights("b" + id, {m}, -0.1f, 0.1f);
    pass_test::IntsAttr(n, "pads", {k / 2, k / 2, k / 2, k / 2});
    if (group != 1) testing::ModelBuilder::IntAttr(n, "group", group);
    return y;
  }
  // BatchNormalization over `m` channels with random parameters (var > 0); `training_mode` < 0: no attribute.
  onnx::NodeProto& BatchNorm(const std::string& x, int64_t m, std::string* y, int64_t training_mode = -1) {
    const std::string id = std::to_string(++counter);
    Weights("scale" + id, {m}, 0.5f, 1.5f);
    Weights("beta" + id, {m}, -0.5f, 0.5f);
    Weights("mean" + id, {m}, -0.5f, 0.5f);
    Weights("var" + id, {m}, 0.1f, 1.0f);
    *y = "bn" + id;
    auto& n = b.Node("BatchNormalization", {x, "scale" + id, "beta" + id, "mean" + id, "var" + id}, {*y},
                     "BatchNormalization_" + id);
    pass_test::FloatAttr(n, "epsilon", 1e-3f);
    if (training_mode >= 0) testing::ModelBuilder::IntAttr(n, "training_mode", training_mode);
    return n;
  }
  std::string Bn(const std::string& x, int64_t m) {
    std::string y;
    BatchNorm(x, m, &y);
    return y;
  }
};

const passes::Pass& FoldPass() {
  for (const auto& p : passes::AllPasses()) {
    if (p->name() == "fold_batch_norm") return *p;
  }
  throw std::runtime_error("no fold_batch_norm pass");
}

std::vector<std::string> InitializerNames(const ir::Model& m) {
  std::vector<std::string> out;
  for (const ir::Value* v : m.graph->initializers()) out.push_back(v->name());
  return out;
}

// x -> Conv(3x3, bias) -> BN -> Relu.
std::string ConvBnRelu(bool bias = true) {
  BnNet net;
  net.b.Input("x", kF, {1, 4, 6, 6});
  net.b.Output(net.Op("Relu", {net.Bn(net.Conv("x", 4, 8, 3, 1, bias), 8)}), kF, {});
  return net.b.Bytes();
}

TEST(FoldBatchNorm, ConvBnBecomesOneConvWithNewInitializers) {
  const auto m = Optimized(ConvBnRelu(), 2, {});  // portable mode: standard ONNX out
  EXPECT_EQ(ir::DumpGraph(*m->graph),
            "graph g (x: float32[1,4,6,6]) -> (Relu3: float32[1,8,6,6]) {\n"
            "  %w1_folded = initializer float32[8,4,3,3]\n"
            "  %b1_folded = initializer float32[8]\n"
            "  %bn2 = Conv(%x, %w1_folded, %b1_folded) {pads=[1,1,1,1]}   # Conv_1, opset 17\n"
            "  %Relu3 = Relu(%bn2)   # Relu_3, opset 17\n"
            "}\n");
  // Without a bias, one is made; the BN's parameters are gone from the exported model too.
  const auto nobias = Optimized(ConvBnRelu(false), 2, {});
  EXPECT_EQ(OpList(*nobias), "Conv Relu");
  EXPECT_EQ(InitializerNames(*nobias), (std::vector<std::string>{"w1_folded", "Conv_1_bias_folded"}));
  onnx::ModelProto proto;
  ir::ExportModelProto(*nobias, &proto);
  EXPECT_EQ(proto.graph().initializer_size(), 2);
  // With the cpu backend the folded conv then takes the Relu: one FusedConv.
  EXPECT_EQ(OpList(*Optimized(ConvBnRelu(), 2)), "ai.ferry::FusedConv");
  // Level 1 does not fold.
  EXPECT_EQ(OpList(*Optimized(ConvBnRelu(), 1, {})), "Conv BatchNormalization Relu");
}

TEST(FoldBatchNorm, SameOutputsAsUnfolded) {
  for (const std::vector<std::string>& backends : {std::vector<std::string>{"ref"}, {"cpu", "ref"}}) {
    SCOPED_TRACE(backends.size());
    for (bool bias : {true, false}) pass_test::ExpectSameOutputs(ConvBnRelu(bias), 2, backends, 1e-4, 1e-5);
  }
}

// Grouped and depthwise Conv, grouped ConvTranspose (with and without bias), at BN opsets 9 and 17.
std::string GroupedModel(int64_t opset) {
  BnNet net(opset);
  net.b.Input("x", kF, {2, 6, 7, 7});
  std::string h = net.Bn(net.Conv("x", 6, 6, 3, 6), 6);                        // depthwise
  h = net.Bn(net.Conv(h, 6, 4, 3, 2, false), 4);                               // grouped, no bias
  h = net.Bn(net.Conv(h, 4, 6, 3, 2, true, true), 6);                          // ConvTranspose, group 2: W [4, 3]
  h = net.Bn(net.Conv(h, 6, 9, 1, 3, false, true), 9);                         // ConvTranspose, group 3: W [6, 3]
  h = net.Bn(net.Conv(h, 9, 5, 3, 1, true, true), 5);                          // ConvTranspose, group 1
  net.b.Output(h, kF, {});
  return net.b.Bytes();
}

TEST(FoldBatchNorm, GroupedConvAndConvTranspose) {
  for (int64_t opset : {9, 17}) {
    SCOPED_TRACE(opset);
    const auto m = Optimized(GroupedModel(opset), 2, {});
    EXPECT_EQ(OpList(*m), "Conv Conv ConvTranspose ConvTranspose ConvTranspose");
    EXPECT_EQ(m->graph->initializers().size(), 10u);  // W' and B' of each, nothing else
    EXPECT_EQ(m->graph->outputs()[0]->name(), "bn10");  // the graph output keeps its name
    for (const std::vector<std::string>& backends : {std::vector<std::string>{"ref"}, {"cpu", "ref"}}) {
      pass_test::ExpectSameOutputs(GroupedModel(opset), 2, backends, 1e-4, 1e-5);
      pass_test::ExpectSamePortableOutputs(GroupedModel(opset), 2, backends, 1e-4, 1e-5);  // as written to ONNX
    }
  }
}

TEST(FoldBatchNorm, IdempotentAndChainsFoldInOneRun) {
  BnNet net;
  net.b.Input("x", kF, {1, 3, 5, 5});
  net.b.Output(net.Bn(net.Bn(net.Conv("x", 3, 4, 3), 4), 4), kF, {});  // Conv -> BN -> BN
  const std::string bytes = net.b.Bytes();
  auto m = pass_test::Import(bytes);
  const auto ctx = pass_test::Context(2, {"cpu", "ref"});
  EXPECT_TRUE(FoldPass().Apply(*m, ctx));
  EXPECT_EQ(OpList(*m), "Conv");
  EXPECT_EQ(InitializerNames(*m), (std::vector<std::string>{"w1_folded_2", "b1_folded_2"}));
  const std::string once = ir::DumpGraph(*m->graph);
  EXPECT_FALSE(FoldPass().Apply(*m, ctx));
  EXPECT_EQ(ir::DumpGraph(*m->graph), once);
  pass_test::ExpectSameOutputs(bytes, 2, {"cpu", "ref"}, 1e-4, 1e-5);
}

TEST(FoldBatchNorm, SharedWeightsAreCopiedNotChanged) {
  BnNet net;
  net.b.Input("x", kF, {1, 4, 5, 5});
  net.Weights("w", {4, 4, 3, 3}, -0.3f, 0.3f);
  const std::string a = net.Bn(net.Conv("x", 4, 4, 3, 1, false, false, "w"), 4);
  const std::string c = net.Conv(a, 4, 4, 3, 1, false, false, "w");  // the same W, no BN after it
  net.b.Output(c, kF, {});
  const std::string bytes = net.b.Bytes();
  const auto m = Optimized(bytes, 2, {});
  EXPECT_EQ(OpList(*m), "Conv Conv");
  const auto convs = NodesOf(*m, "Conv");
  EXPECT_EQ(convs[0]->input(1)->name(), "w_folded");
  EXPECT_EQ(convs[1]->input(1)->name(), "w");  // still read: kept, unchanged
  EXPECT_EQ(InitializerNames(*m), (std::vector<std::string>{"w", "w_folded", "Conv_1_bias_folded"}));
  pass_test::ExpectSameOutputs(bytes, 2, {"ref"}, 1e-4, 1e-5);
}

TEST(FoldBatchNorm, TrainingModeIsLeftAlone) {
  BnNet net;
  net.b.Input("x", kF, {2, 3, 5, 5});
  std::string y;
  net.BatchNorm(net.Conv("x", 3, 4, 3), 4, &y, /*training_mode=*/1);
  net.b.Output(y, kF, {});
  EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2, {})), "Conv BatchNormalization");

  // Before opset 14 a BN that outputs its running statistics trains (the ref kernel's rule).
  BnNet old(9);
  old.b.Input("x", kF, {2, 3, 5, 5});
  auto& bn = old.BatchNorm(old.Conv("x", 3, 4, 3), 4, &y);
  bn.add_output("running_mean");
  bn.add_output("running_var");
  old.b.Output(y, kF, {});
  EXPECT_EQ(OpList(*Optimized(old.b.Bytes(), 2, {})), "Conv BatchNormalization");
}

TEST(FoldBatchNorm, NonConstantWeightsOrParametersAreLeftAlone) {
  for (const char* fed : {"w1", "b1", "mean2"}) {
    SCOPED_TRACE(fed);
    BnNet net;
    net.b.Input("x", kF, {1, 3, 5, 5});
    net.b.Output(net.Bn(net.Conv("x", 3, 4, 3), 4), kF, {});
    // Also a graph input: a feed may override the initializer, so it is no constant.
    auto* in = net.b.graph().add_input();
    in->set_name(fed);
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(kF);
    for (const auto& init : net.b.graph().initializer()) {
      if (init.name() == fed) {
        for (int64_t d : init.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
      }
    }
    const auto m = Optimized(net.b.Bytes(), 2, {});
    EXPECT_EQ(OpList(*m), "Conv BatchNormalization");
    EXPECT_EQ(m->graph->initializers().size(), 6u);
  }
}

TEST(FoldBatchNorm, SecondReaderOrGraphOutputConvIsLeftAlone) {
  BnNet net;
  net.b.Input("x", kF, {1, 3, 5, 5});
  const std::string c = net.Conv("x", 3, 4, 3);
  net.b.Output(net.Bn(c, 4), kF, {});
  net.b.Output(net.Op("Relu", {c}), kF, {});  // a second reader of the conv output
  EXPECT_EQ(OpList(*Optimized(net.b.Bytes(), 2, {})), "Conv BatchNormalization Relu");

  BnNet out;
  out.b.Input("x", kF, {1, 3, 5, 5});
  const std::string c2 = out.Conv("x", 3, 4, 3);
  out.b.Output(out.Bn(c2, 4), kF, {});
  out.b.Output(c2, kF, {});  // the conv output is a result
  EXPECT_EQ(OpList(*Optimized(out.b.Bytes(), 2, {})), "Conv BatchNormalization");
}

TEST(FoldBatchNorm, FrozenNodesAreLeftAlone) {
  for (const char* pin : {"Conv", "BatchNormalization", "Conv_1", "BatchNormalization_2"}) {
    SCOPED_TRACE(pin);
    const auto m = Optimized(ConvBnRelu(), 2, {"cpu", "ref"}, {pin});
    // Not folded into the conv; beside a pinned conv, fuse_scale_shift may still make BN -> Relu one ScaleShift.
    EXPECT_EQ(NodesOf(*m, "BatchNormalization").size() + NodesOf(*m, "ScaleShift").size(), 1u);
  }
}

TEST(FoldBatchNorm, OddModelsAreSkippedNotCrashed) {
  // Parameters of the wrong size, and a BN reading a Conv whose W is not 4-D float.
  BnNet net;
  net.b.Input("x", kF, {1, 3, 5, 5});
  const std::string c = net.Conv("x", 3, 4, 3);
  net.Weights("s", {2}, 0.5f, 1.5f);
  net.b.Node("BatchNormalization", {c, "s", "s", "s", "s"}, {"y"}, "bad_bn");
  net.b.Output("y", kF, {});
  auto m = pass_test::Import(net.b.Bytes());
  EXPECT_FALSE(FoldPass().Apply(*m, pass_test::Context(2, {})));
}

}  // namespace
}  // namespace ferry
