// The cpu Conv kernel (oneDNN) against ref: random 1-D/2-D/3-D configurations over every attribute path it
// accepts, the plain-activation path, dynamic shapes (primitives built at run time, per shape), concurrent runs,
// empty tensors, and the configurations it refuses.
#include "core/isa.h"
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

// One random Conv: group 1, grouped or depthwise; rank 1-3; strides, dilations, asymmetric pads or auto_pad;
// W and B constant or graph inputs; B sometimes absent; batch 1-3; 1 or 2 threads.
OpTest RandomConv(std::mt19937& rng) {
  const int64_t rank = Pick(rng, 0, 9) < 2 ? 1 : (Pick(rng, 0, 9) < 8 ? 2 : 3);
  const int64_t kind = Pick(rng, 0, 3);  // 0-1 plain, 2 grouped, 3 depthwise
  int64_t group = 1, cg = Pick(rng, 1, 5), mg = Pick(rng, 1, 6);
  if (kind == 2) group = Pick(rng, 2, 3);
  if (kind == 3) {
    group = Pick(rng, 2, 8);
    cg = 1;
    mg = Pick(rng, 1, 2);
  }
  const int64_t batch = Pick(rng, 1, 3);
  const int64_t pad_mode = Pick(rng, 0, 9);  // 0-5 explicit pads, 6 SAME_UPPER, 7 SAME_LOWER, 8 VALID, 9 none
  std::vector<int64_t> kernel, strides, dilations, pads(static_cast<size_t>(2 * rank)), in;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = Pick(rng, 1, rank == 1 ? 5 : (rank == 2 ? 4 : 2));
    const int64_t s = Pick(rng, 1, 3), dil = Pick(rng, 0, 2) == 0 ? 2 : 1;
    kernel.push_back(k);
    strides.push_back(s);
    dilations.push_back(dil);
    const int64_t eff = (k - 1) * dil + 1;
    int64_t lo = eff;
    if (pad_mode <= 5) {
      pads[static_cast<size_t>(d)] = Pick(rng, 0, 2);
      pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, 2);
      lo = std::max<int64_t>(1, eff - pads[static_cast<size_t>(d)] - pads[static_cast<size_t>(d + rank)]);
    } else if (pad_mode <= 7) {
      lo = 1;
    }
    in.push_back(lo + Pick(rng, 0, rank == 3 ? 3 : 7));
  }
  Shape xs{batch, cg * group}, ws{mg * group, cg};
  xs.insert(xs.end(), in.begin(), in.end());
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  OpTest t{.op = "Conv"};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng)));
  Tensor w = RandomTensor(DataType::kFloat, ws, rng);
  t.inputs.push_back(Pick(rng, 0, 2) > 0 ? Const("w", w) : In("w", w));
  const int64_t bias = Pick(rng, 0, 2);  // 0 absent, 1 const, 2 input
  if (bias > 0) {
    Tensor b = RandomTensor(DataType::kFloat, {mg * group}, rng);
    t.inputs.push_back(bias == 1 ? Const("b", b) : In("b", b));
  }
  if (group > 1 || Pick(rng, 0, 1)) t.attributes.push_back(Int("group", group));
  t.attributes.push_back(Ints("strides", strides));
  t.attributes.push_back(Ints("dilations", dilations));
  if (Pick(rng, 0, 1)) t.attributes.push_back(Ints("kernel_shape", kernel));
  if (pad_mode <= 5) t.attributes.push_back(Ints("pads", pads));
  if (pad_mode == 6) t.attributes.push_back(Str("auto_pad", "SAME_UPPER"));
  if (pad_mode == 7) t.attributes.push_back(Str("auto_pad", "SAME_LOWER"));
  if (pad_mode == 8) t.attributes.push_back(Str("auto_pad", "VALID"));
  ConvTolerance(t, cg, kernel);
  t.threads = static_cast<int>(Pick(rng, 1, 2));
  return t;
}

TEST(CpuConv, RandomConfigurationsMatchRef) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomConv(rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuConv, ResNetLikeShapesMatchRef) {
  std::mt19937 rng(7);
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads;
  };
  // Pointwise stride-1 on a large plane (plain NCHW path, 2-D and 1-D), a strided 1x1, a 3x3, a 7x7 stem.
  const Case cases[] = {{{2, 16, 20, 20}, {24, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}},
                        {{1, 8, 300}, {12, 8, 1}, {1}, {0, 0}},
                        {{1, 32, 16, 16}, {64, 32, 1, 1}, {2, 2}, {0, 0, 0, 0}},
                        {{1, 32, 14, 14}, {32, 32, 3, 3}, {1, 1}, {1, 1, 1, 1}},
                        {{1, 3, 32, 32}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}}};
  for (const Case& c : cases) {
    for (bool constant : {true, false}) {
      OpTest t{.op = "Conv",
               .inputs = {In("x", RandomTensor(DataType::kFloat, c.x, rng)),
                          constant ? Const("w", RandomTensor(DataType::kFloat, c.w, rng))
                                   : In("w", RandomTensor(DataType::kFloat, c.w, rng)),
                          Const("b", RandomTensor(DataType::kFloat, {c.w[0]}, rng))},
               .attributes = {Ints("strides", c.strides), Ints("pads", c.pads)},
               .rtol = 1e-4,
               .atol = 1e-4 * 3};  // reductions up to 32*9 = 288 terms
      for (int threads : {1, 2}) {
        t.threads = threads;
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
      }
    }
  }
}

TEST(CpuConv, DynamicShapesBuildPrimitivesPerShapeAndRunConcurrently) {
  std::mt19937 rng(11);
  OpTest t{.op = "Conv",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 4, 9, 9}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {6, 2, 3, 3}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {6}, rng))},
           .attributes = {Int("group", 2), Ints("strides", {2, 1}), Str("auto_pad", "SAME_UPPER")},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{1, 4, 9, 9}, Shape{3, 4, 5, 12}, Shape{2, 4, 16, 16}, Shape{1, 4, 9, 9}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
  // W as a graph input with a dynamic shape too.
  t.inputs[1] = In("w", RandomTensor(DataType::kFloat, {6, 2, 3, 3}, rng));
  for (auto& r : runs) r.push_back({"w", RandomTensor(DataType::kFloat, {6, 2, 3, 3}, rng)});
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuConv, EmptyTensors) {
  std::mt19937 rng(3);
  // Zero batch: an empty output.
  OpTest t{.op = "Conv",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {0, 3, 5, 5}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {4, 3, 3, 3}, rng))},
           .attributes = {Ints("pads", {1, 1, 1, 1})}};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
  // No input channels: the output is the bias.
  t.inputs = {In("x", RandomTensor(DataType::kFloat, {2, 0, 5, 5}, rng)),
              Const("w", RandomTensor(DataType::kFloat, {4, 0, 3, 3}, rng)),
              Const("b", RandomTensor(DataType::kFloat, {4}, rng))};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

// 3x3 stride-1 convolutions with at least 32 input and output channels, 64 output positions over the batch and
// constant weights: oneDNN's Winograd kernels on AVX-512 hosts (conv.cc), the direct ones elsewhere. Output channels
// not a multiple of 16, no padding, a non-square plane, batch > 1.
TEST(CpuConv, WinogradShapesMatchRef) {
  std::mt19937 rng(19);
  struct Case {
    Shape x, w;
    std::vector<int64_t> pads;
  };
  const Case cases[] = {{{1, 64, 14, 14}, {64, 64, 3, 3}, {1, 1, 1, 1}},
                        {{2, 32, 9, 11}, {48, 32, 3, 3}, {0, 0, 0, 0}},
                        {{2, 256, 7, 7}, {256, 256, 3, 3}, {1, 1, 1, 1}}};
  for (const Case& c : cases) {
    OpTest t{.op = "Conv",
             .inputs = {In("x", RandomTensor(DataType::kFloat, c.x, rng)),
                        Const("w", RandomTensor(DataType::kFloat, c.w, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {c.w[0]}, rng))},
             .attributes = {Ints("pads", c.pads)}};
    ConvTolerance(t, c.w[1], {3, 3});
    for (int threads : {1, 2}) {
      t.threads = threads;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
    }
  }
}

// `t`'s one-node model with its first input's leading dim made symbolic ("N").
std::string SymbolicBatchModel(const OpTest& t) {
  onnx::ModelProto m;
  m.ParseFromString(OneNodeModel(t));
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_param("N");
  return m.SerializeAsString();
}

// With a symbolic batch the kernel plans for batch 1 at creation, for the session's thread count: the weights are
// packed then (Winograd's transform is slow: ~90 ms for 512x512x3x3), and a batch-1 run packs nothing more. On
// AVX-512 the packed copy is in the Winograd domain (4x4 tiles for 3x3 taps: 16/9 of the weights or more), whose
// layout oneDNN 2.6 chooses by thread count for some shapes (256 channels at 14x14, as in ResNet-50's layer3). 7x7
// planes at batch 1 (ResNet-50's layer4) run Winograd too (conv.cc, "Small planes").
TEST(CpuConv, SymbolicBatchPacksWeightsOnceAtCreation) {
  std::mt19937 rng(23);
  const bool avx512 = DetectHostIsa().contains(IsaSet{Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl});
  for (const auto& [channels, size] : {std::pair<int64_t, int64_t>{256, 14}, {64, 7}}) {
    OpTest t{.op = "Conv",
             .inputs = {In("x", RandomTensor(DataType::kFloat, {1, channels, size, size}, rng)),
                        Const("w", RandomTensor(DataType::kFloat, {channels, channels, 3, 3}, rng))},
             .attributes = {Ints("pads", {1, 1, 1, 1})}};
    const std::string bytes = SymbolicBatchModel(t);
    const int64_t weight_bytes = channels * channels * 9 * 4;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::to_string(channels) + " channels at " + std::to_string(size) + "x" + std::to_string(size) +
                   ", threads " + std::to_string(threads));
      auto session = SessionFor(bytes, {"cpu"}, true, threads);
      const int64_t packed = session->kernel_held_bytes();
      EXPECT_GE(packed, weight_bytes);
      if (avx512) {
        EXPECT_GE(packed, weight_bytes * 16 / 9) << "no Winograd copy packed at creation";
      }
      session->Run(Feeds(t));
      EXPECT_EQ(session->kernel_held_bytes(), packed) << "the batch-1 run packed another copy";
    }
  }
}

TEST(CpuConv, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(5);
  // Conv-1's SAME_* with a stride > 1 (the output size rule changed in opset 11).
  OpTest same{.op = "Conv",
              .opset = 10,
              .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 7, 7}, rng)),
                         Const("w", RandomTensor(DataType::kFloat, {3, 2, 3, 3}, rng))},
              .attributes = {Str("auto_pad", "SAME_UPPER"), Ints("strides", {2, 2})}};
  ExpectRefusedAndFallsBack(same, "Conv-1: auto_pad=SAME_UPPER with strides > 1 is not implemented on cpu");
  // ... while at stride 1 opset 10 runs on cpu.
  same.attributes = {Str("auto_pad", "SAME_LOWER")};
  same.rtol = same.atol = 1e-4;
  EXPECT_TRUE(MatchesRef(same, "cpu"));
  // A 4-D convolution.
  OpTest four_d{.op = "Conv",
                .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 3, 3, 3, 3}, rng)),
                           Const("w", RandomTensor(DataType::kFloat, {2, 2, 2, 2, 2, 2}, rng))}};
  ExpectRefusedAndFallsBack(four_d, "Conv: 4-D convolution (X of rank 6) is not implemented on cpu");
  // float64 is not a cpu Conv type.
  OpTest f64{.op = "Conv",
             .inputs = {In("x", RandomTensor(DataType::kDouble, {1, 1, 4, 4}, rng)),
                        Const("w", RandomTensor(DataType::kDouble, {1, 1, 2, 2}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
