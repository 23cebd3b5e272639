// The cpu ConvTranspose kernel (oneDNN) against ref: random 1-D/2-D/3-D configurations over strides, dilations,
// asymmetric pads, output_padding, output_shape (smaller and larger than the natural extent), auto_pad, group
// and depthwise, W/B constant or inputs, bias absent; 1-D (which oneDNN runs as 2-D over a unit height) and 3-D on
// their own, at sizes oneDNN's jit path takes; empty batches; dynamic shapes; Prepare's errors; the configurations
// it refuses.
#include <tuple>

#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

// A random ConvTranspose of `rank` spatial dims (0: 1-D, 2-D or 3-D at random).
OpTest RandomConvTranspose(std::mt19937& rng, int64_t rank = 0) {
  if (rank == 0) rank = Pick(rng, 0, 9) < 2 ? 1 : (Pick(rng, 0, 9) < 8 ? 2 : 3);
  const int64_t kind = Pick(rng, 0, 3);  // 0-1 plain, 2 grouped, 3 depthwise
  int64_t group = 1, cg = Pick(rng, 1, 5), mg = Pick(rng, 1, 5);
  if (kind == 2) group = Pick(rng, 2, 3);
  if (kind == 3) {
    group = Pick(rng, 2, 6);
    cg = 1;
    mg = Pick(rng, 1, 2);
  }
  const int64_t batch = Pick(rng, 1, 3);
  // 0-4 explicit pads (+ output_padding), 5 output_shape, 6 SAME_UPPER, 7 SAME_LOWER, 8 VALID, 9 none
  const int64_t mode = Pick(rng, 0, 9);
  const bool use_out_pad = mode <= 4 && Pick(rng, 0, 1);
  std::vector<int64_t> kernel, strides, dilations, pads(static_cast<size_t>(2 * rank)), in, out_pad, out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = Pick(rng, 1, rank == 3 ? 2 : 4);
    const int64_t s = Pick(rng, 1, 3), dil = Pick(rng, 0, 2) == 0 ? 2 : 1;
    const int64_t x = Pick(rng, 1, rank == 3 ? 4 : (rank == 1 ? 30 : 7));
    kernel.push_back(k);
    strides.push_back(s);
    dilations.push_back(dil);
    in.push_back(x);
    const int64_t eff = (k - 1) * dil + 1;
    const int64_t natural = s * (x - 1) + eff;
    // output_padding below the stride (the ONNX rule); it may exceed the end pad (output past every tap).
    out_pad.push_back(use_out_pad ? Pick(rng, 0, s - 1) : 0);
    int64_t pb = Pick(rng, 0, 2), pe = Pick(rng, 0, 2);
    while (pb + pe >= natural + out_pad.back()) pb > 0 ? --pb : --pe;  // keep the output non-empty
    pads[static_cast<size_t>(d)] = pb;
    pads[static_cast<size_t>(d + rank)] = pe;
    out_shape.push_back(std::max<int64_t>(1, natural + Pick(rng, -3, 2)));  // smaller or larger than natural
  }
  Shape xs{batch, cg * group}, ws{cg * group, mg};
  xs.insert(xs.end(), in.begin(), in.end());
  ws.insert(ws.end(), kernel.begin(), kernel.end());
  OpTest t{.op = "ConvTranspose"};
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
  if (mode <= 4) {
    t.attributes.push_back(Ints("pads", pads));
    if (use_out_pad) t.attributes.push_back(Ints("output_padding", out_pad));
  }
  if (mode == 5) t.attributes.push_back(Ints("output_shape", out_shape));
  if (mode == 6) t.attributes.push_back(Str("auto_pad", "SAME_UPPER"));
  if (mode == 7) t.attributes.push_back(Str("auto_pad", "SAME_LOWER"));
  if (mode == 8) t.attributes.push_back(Str("auto_pad", "VALID"));
  ConvTolerance(t, cg, kernel);
  t.threads = static_cast<int>(Pick(rng, 1, 2));
  return t;
}

TEST(CpuConvTranspose, RandomConfigurationsMatchRef) {
  std::mt19937 rng(424242);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomConvTranspose(rng);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << DescribeCase(t);
  }
}

TEST(CpuConvTranspose, OneDAndThreeDMatchRef) {
  std::mt19937 rng(777);
  for (int64_t rank : {1, 3}) {
    for (int i = 0; i < 40; ++i) {
      OpTest t = RandomConvTranspose(rng, rank);
      if (i % 2) t.threads = 2;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << rank << "-D case " << i << ": " << DescribeCase(t);
    }
  }
}

// Channel counts oneDNN blocks by 8 (its jit deconvolution rather than the gemm fallback), strides, pads,
// output_padding, groups and dilations, 1 and 2 threads.
TEST(CpuConvTranspose, OneDAndThreeDBlockedChannelsMatchRef) {
  std::mt19937 rng(31);
  struct Case {
    Shape x, w;
    std::vector<onnx::AttributeProto> attrs;
  };
  const std::vector<Case> cases = {
      {{1, 16, 50}, {16, 8, 4}, {Ints("strides", {2}), Ints("pads", {1, 1})}},
      {{2, 16, 37}, {16, 8, 3}, {Ints("strides", {2}), Ints("pads", {1, 0}), Ints("output_padding", {1})}},
      {{1, 32, 20}, {32, 8, 5}, {Int("group", 2), Ints("strides", {3}), Ints("pads", {2, 1})}},
      {{1, 16, 25}, {16, 8, 3}, {Ints("strides", {1}), Ints("dilations", {2}), Ints("pads", {2, 2})}},
      {{1, 16, 24}, {16, 16, 4}, {Ints("strides", {2}), Str("auto_pad", "SAME_UPPER")}},
      {{1, 16, 24}, {16, 8, 4}, {Ints("strides", {4}), Ints("output_shape", {101})}},  // past every tap
      {{1, 16, 4, 6, 6}, {16, 8, 3, 3, 3}, {Ints("strides", {1, 2, 2}), Ints("pads", {1, 1, 1, 1, 1, 1}),
                                            Ints("output_padding", {0, 1, 1})}},
      {{1, 8, 4, 5, 5}, {8, 8, 3, 3, 3}, {Ints("strides", {2, 2, 2}), Ints("pads", {1, 0, 1, 1, 1, 0})}},
      {{2, 16, 3, 4, 4}, {16, 4, 2, 2, 2}, {Int("group", 4), Ints("strides", {2, 2, 2})}},
      {{1, 8, 3, 4, 5}, {8, 8, 3, 3, 3}, {Ints("dilations", {2, 1, 2}), Str("auto_pad", "SAME_LOWER"),
                                          Ints("strides", {2, 2, 2})}},
  };
  for (const Case& c : cases) {
    int64_t group = 1;
    for (const auto& a : c.attrs) {
      if (a.name() == "group") group = a.i();
    }
    for (int threads : {1, 2}) {
      OpTest t{.op = "ConvTranspose",
               .inputs = {In("x", RandomTensor(DataType::kFloat, c.x, rng)),
                          Const("w", RandomTensor(DataType::kFloat, c.w, rng)),
                          Const("b", RandomTensor(DataType::kFloat, {c.w[1] * group}, rng))},
               .attributes = c.attrs,
               .threads = threads};
      ConvTolerance(t, c.x[1] / group, std::vector<int64_t>(c.w.begin() + 2, c.w.end()));
      EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
    }
  }
}

TEST(CpuConvTranspose, EmptyBatch) {
  std::mt19937 rng(5);
  for (const auto& [xs, ws, strides] :
       {std::tuple{Shape{0, 4, 9}, Shape{4, 3, 3}, std::vector<int64_t>{2}},
        std::tuple{Shape{0, 4, 3, 4, 5}, Shape{4, 2, 2, 3, 3}, std::vector<int64_t>{2, 1, 2}},
        std::tuple{Shape{0, 4, 5, 5}, Shape{4, 2, 3, 3}, std::vector<int64_t>{2, 2}}}) {
    OpTest t{.op = "ConvTranspose",
             .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng)),
                        Const("w", RandomTensor(DataType::kFloat, ws, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {ws[1]}, rng))},
             .attributes = {Ints("strides", strides)},
             .threads = 2};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
  }
  // A dynamic batch that is empty on one run and not on the next.
  OpTest t{.op = "ConvTranspose",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 8, 6, 4, 4}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {8, 8, 3, 3, 3}, rng))},
           .attributes = {Ints("strides", {2, 2, 2}), Ints("pads", {1, 1, 1, 1, 1, 1})},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{0, 8, 6, 4, 4}, Shape{2, 8, 3, 5, 4}, Shape{0, 8, 2, 2, 2}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
}

// The shapes reach the kernel only at run time (symbolic dims), so its Prepare is what rejects them.
TEST(CpuConvTranspose, PrepareErrorsNameTheNode) {
  std::mt19937 rng(8);
  // A model of `x`, `w` and `b` (their ranks; dims symbolic) run with the same-named feeds.
  const auto expect_error = [](const Tensor& x, const Tensor& w, const Tensor& b, const std::string& part,
                               std::vector<onnx::AttributeProto> attrs = {}) {
    OpTest t{.op = "ConvTranspose", .inputs = {In("x", x), In("w", w), In("b", b)}, .attributes = std::move(attrs)};
    t.attributes.push_back(Ints("strides", std::vector<int64_t>(x.shape().size() - 2, 2)));
    try {
      SessionFor(DynamicOneNodeModel(t), {"cpu"}, true, 1)->Run(Feeds(t));
      ADD_FAILURE() << "expected an InvalidArgumentError containing '" << part << "'";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const auto f = [&](Shape s) { return RandomTensor(DataType::kFloat, std::move(s), rng); };
  // W's input channels are not X's (1-D).
  expect_error(f({1, 3, 7}), f({4, 2, 3}), f({2}), "does not match X");
  // The bias is not one value per output channel (3-D).
  expect_error(f({1, 4, 7, 2, 2}), f({4, 2, 3, 1, 1}), f({3}), "bias B");
  // kernel_shape is not W's spatial shape (3-D).
  expect_error(f({1, 4, 3, 3, 3}), f({4, 2, 3, 3, 3}), f({2}), "does not match the weight's spatial shape",
               {Ints("kernel_shape", {2, 2, 2})});
}

TEST(CpuConvTranspose, OutputPastEveryTapHoldsTheBias) {
  std::mt19937 rng(9);
  // output_padding beyond the end pad, and an output_shape larger than the natural extent.
  for (const auto& attrs :
       {std::vector<onnx::AttributeProto>{Ints("strides", {2, 2}), Ints("output_padding", {1, 1})},
        std::vector<onnx::AttributeProto>{Ints("strides", {2, 1}), Ints("output_shape", {13, 9})}}) {
    OpTest t{.op = "ConvTranspose",
             .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 5, 5}, rng)),
                        Const("w", RandomTensor(DataType::kFloat, {3, 4, 3, 3}, rng)),
                        Const("b", RandomTensor(DataType::kFloat, {4}, rng))},
             .attributes = attrs,
             .rtol = 1e-4,
             .atol = 1e-4};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << DescribeCase(t);
  }
}

TEST(CpuConvTranspose, DynamicShapesAndConcurrentRuns) {
  std::mt19937 rng(13);
  OpTest t{.op = "ConvTranspose",
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 4, 6, 6}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {4, 3, 3, 3}, rng)),
                      Const("b", RandomTensor(DataType::kFloat, {6}, rng))},
           .attributes = {Int("group", 2), Ints("strides", {2, 2}), Ints("pads", {1, 0, 1, 2}),
                          Ints("output_padding", {1, 0})},
           .rtol = 1e-4,
           .atol = 1e-4,
           .threads = 2};
  std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
  for (Shape s : {Shape{1, 4, 6, 6}, Shape{2, 4, 3, 9}, Shape{1, 4, 10, 4}}) {
    runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
  }
  ExpectDynamicMatchesRef(t, runs, false);
  ExpectDynamicMatchesRef(t, runs, true);
}

TEST(CpuConvTranspose, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(17);
  OpTest t{.op = "ConvTranspose",
           .opset = 10,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 4, 4}, rng)),
                      Const("w", RandomTensor(DataType::kFloat, {2, 3, 3, 3}, rng))},
           .attributes = {Str("auto_pad", "SAME_UPPER"), Ints("strides", {2, 2})}};
  ExpectRefusedAndFallsBack(t, "ConvTranspose-1: auto_pad=SAME_UPPER is not implemented on cpu (opset < 11)");
  t.attributes = {Ints("output_shape", {8, 8}), Ints("strides", {2, 2})};
  ExpectRefusedAndFallsBack(t, "ConvTranspose-1: output_shape is not implemented on cpu (opset < 11)");
  // Explicit pads at opset 10 run on cpu.
  t.attributes = {Ints("pads", {1, 0, 0, 1}), Ints("strides", {2, 2})};
  t.rtol = t.atol = 1e-4;
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

}  // namespace
}  // namespace ferry::testing
