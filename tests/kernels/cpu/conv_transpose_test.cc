// The cpu ConvTranspose kernel (oneDNN) against ref: random 1-D/2-D/3-D configurations over strides, dilations,
// asymmetric pads, output_padding, output_shape (smaller and larger than the natural extent), auto_pad, group
// and depthwise, W/B constant or inputs, bias absent; dynamic shapes; the configurations it refuses.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

OpTest RandomConvTranspose(std::mt19937& rng) {
  const int64_t rank = Pick(rng, 0, 9) < 2 ? 1 : (Pick(rng, 0, 9) < 8 ? 2 : 3);
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
    const int64_t x = Pick(rng, 1, rank == 3 ? 4 : 7);
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
