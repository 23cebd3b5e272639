// The cpu pooling kernels against ref: MaxPool and AveragePool (oneDNN) over random 1-D/2-D/3-D windows with
// pads, strides, dilations, ceil_mode, auto_pad and count_include_pad, inputs with NaN / ±inf (max skips NaN, a
// window of only -inf or padding gives -inf), windows that overhang the end padding or lie wholly in padding,
// dynamic shapes run concurrently; GlobalAveragePool and GlobalMaxPool (NaN propagates) over ranks 2-5; and the
// configurations the kernels refuse.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

std::string Describe(const OpTest& t) {
  std::string s = t.op + " x" + ShapeToString(t.inputs[0].value.shape());
  for (const auto& a : t.attributes) {
    s += " " + a.name() + "=";
    if (a.type() == onnx::AttributeProto::INTS) s += ShapeToString(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    if (a.type() == onnx::AttributeProto::INT) s += std::to_string(a.i());
    if (a.type() == onnx::AttributeProto::STRING) s += a.s();
  }
  return s + " threads=" + std::to_string(t.threads);
}

// One random MaxPool / AveragePool: rank 1-3, kernel, strides, dilations, pads (sometimes as large as the
// window: windows wholly in padding), auto_pad, ceil_mode, count_include_pad; values with edge cases.
OpTest RandomPool(std::mt19937& rng, bool max, int i) {
  const int64_t rank = Pick(rng, 0, 9) < 3 ? 1 : (Pick(rng, 0, 9) < 8 ? 2 : 3);
  const int64_t pad_mode = Pick(rng, 0, 9);  // 0-5 explicit pads, 6 SAME_UPPER, 7 SAME_LOWER, 8 VALID, 9 none
  const bool ceil = Pick(rng, 0, 2) == 0, dilate = Pick(rng, 0, 3) == 0;
  std::vector<int64_t> kernel, strides, dilations, pads(static_cast<size_t>(2 * rank)), in;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t k = Pick(rng, 1, rank == 3 ? 3 : 4), s = Pick(rng, 1, 3), dil = dilate ? Pick(rng, 1, 2) : 1;
    kernel.push_back(k);
    strides.push_back(s);
    dilations.push_back(dil);
    const int64_t eff = (k - 1) * dil + 1;
    int64_t lo = eff;
    if (pad_mode <= 5) {
      const int64_t max_pad = Pick(rng, 0, 4) == 0 ? eff : std::max<int64_t>(0, eff - 1);
      pads[static_cast<size_t>(d)] = Pick(rng, 0, max_pad);
      pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, max_pad);
      lo = std::max<int64_t>(1, eff - pads[static_cast<size_t>(d)] - pads[static_cast<size_t>(d + rank)]);
    } else if (pad_mode <= 7) {
      lo = 1;
    }
    in.push_back(lo + Pick(rng, 0, rank == 3 ? 4 : 9));
  }
  Shape xs{Pick(rng, 1, 2), Pick(rng, 1, 5)};
  xs.insert(xs.end(), in.begin(), in.end());
  OpTest t{.op = max ? "MaxPool" : "AveragePool", .opset = max ? 12 : 19};
  t.inputs.push_back(In("x", RandomTensor(DataType::kFloat, xs, rng, -1, 1, /*edges=*/i % 3 == 0)));
  t.attributes.push_back(Ints("kernel_shape", kernel));
  if (Pick(rng, 0, 3) > 0) t.attributes.push_back(Ints("strides", strides));
  if (dilate) t.attributes.push_back(Ints("dilations", dilations));
  if (pad_mode <= 5) t.attributes.push_back(Ints("pads", pads));
  if (pad_mode == 6) t.attributes.push_back(Str("auto_pad", "SAME_UPPER"));
  if (pad_mode == 7) t.attributes.push_back(Str("auto_pad", "SAME_LOWER"));
  if (pad_mode == 8) t.attributes.push_back(Str("auto_pad", "VALID"));
  if (ceil || Pick(rng, 0, 1)) t.attributes.push_back(Int("ceil_mode", ceil));
  if (!max && Pick(rng, 0, 2) > 0) t.attributes.push_back(Int("count_include_pad", Pick(rng, 0, 1)));
  if (max && Pick(rng, 0, 3) == 0) t.attributes.push_back(Int("storage_order", 1));  // only matters for Indices
  t.rtol = 1e-5;
  t.atol = 1e-5;
  t.threads = 1 + i % 2;
  return t;
}

TEST(CpuPool, RandomMaxPoolMatchesRef) {
  std::mt19937 rng(303);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomPool(rng, true, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t);
  }
}

TEST(CpuPool, RandomAveragePoolMatchesRef) {
  std::mt19937 rng(404);
  for (int i = 0; i < 60; ++i) {
    const OpTest t = RandomPool(rng, false, i);
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t);
  }
}

TEST(CpuPool, CeilModeOverhangAndPaddingOnlyWindows) {
  std::mt19937 rng(21);
  // in 5, kernel 3, stride 2, pads 1/0, ceil_mode: the last window overhangs the end padding (ref divides by
  // the 2 taps inside the padded input with count_include_pad).
  for (int include : {0, 1}) {
    OpTest t{.op = "AveragePool",
             .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 5, 6}, rng))},
             .attributes = {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 0, 0}),
                            Int("ceil_mode", 1), Int("count_include_pad", include)}};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "count_include_pad=" << include;
  }
  // Pads as large as the window: the first outputs see only padding (max -inf, average 0 or NaN).
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (int include : {0, 1}) {
      OpTest t{.op = op,
               .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 4}, rng))},
               .attributes = {Ints("kernel_shape", {2}), Ints("pads", {3, 2})}};
      if (std::string(op) == "AveragePool") t.attributes.push_back(Int("count_include_pad", include));
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
    }
  }
  // Windows of only -inf and NaN, and a real -FLT_MAX maximum.
  Tensor x(DataType::kFloat, {1, 1, 8});
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float v[] = {-inf, -inf, nan, -inf, std::numeric_limits<float>::lowest(), -inf, nan, 1.0f};
  std::copy(std::begin(v), std::end(v), x.data<float>());
  OpTest t{.op = "MaxPool", .inputs = {In("x", x)}, .attributes = {Ints("kernel_shape", {2})}};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuPool, ResNetLikeShapesMatchRef) {
  std::mt19937 rng(31);
  for (int threads : {1, 2}) {
    OpTest stem{.op = "MaxPool",
                .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 64, 56, 56}, rng, -1, 1, true))},
                .attributes = {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})},
                .threads = threads};
    EXPECT_TRUE(MatchesRef(stem, "cpu"));
    OpTest avg{.op = "AveragePool",
               .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 32, 17, 17}, rng))},
               .attributes = {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", 1)},
               .threads = threads};
    EXPECT_TRUE(MatchesRef(avg, "cpu"));
  }
}

TEST(CpuPool, DynamicShapesRunConcurrently) {
  std::mt19937 rng(41);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpTest t{.op = op,
             .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 3, 9, 9}, rng))},
             .attributes = {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 2}), Int("ceil_mode", 1),
                            Ints("pads", {1, 0, 1, 1})},
             .threads = 2};
    std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
    for (Shape s : {Shape{1, 3, 9, 9}, Shape{2, 4, 6, 11}, Shape{1, 1, 20, 3}, Shape{1, 3, 9, 9}}) {
      runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
    }
    ExpectDynamicMatchesRef(t, runs, true);
  }
}

TEST(CpuPool, EmptyTensors) {
  std::mt19937 rng(51);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpTest t{.op = op,
             .inputs = {In("x", RandomTensor(DataType::kFloat, {0, 3, 5, 5}, rng))},
             .attributes = {Ints("kernel_shape", {2, 2})}};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
  }
  for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
    OpTest t{.op = op, .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 0, 5}, rng))}};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
    t.inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 0}, rng))};  // empty planes: -inf, NaN
    EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
  }
}

TEST(CpuPool, RandomGlobalPoolsMatchRef) {
  std::mt19937 rng(61);
  for (int i = 0; i < 40; ++i) {
    const int64_t rank = Pick(rng, 2, 5);
    Shape xs{Pick(rng, 1, 3), Pick(rng, 1, 9)};
    for (int64_t d = 2; d < rank; ++d) xs.push_back(Pick(rng, 1, rank == 5 ? 5 : 13));
    for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
      OpTest t{.op = op,
               .opset = i % 2 ? 1 : 17,
               .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -1, 1, /*edges=*/i % 2 == 0))},
               .rtol = 1e-5,
               .atol = 1e-6,
               .threads = 1 + i % 2};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << op << " " << ShapeToString(xs);
    }
  }
  // Large planes: every lane and the tail.
  for (int threads : {1, 2}) {
    for (const char* op : {"GlobalMaxPool", "GlobalAveragePool"}) {
      OpTest t{.op = op, .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 64, 23, 29}, rng))}, .threads = threads};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
    }
  }
}

TEST(CpuPool, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(71);
  OpTest indices{.op = "MaxPool",
                 .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 6, 6}, rng))},
                 .attributes = {Ints("kernel_shape", {2, 2})},
                 .num_outputs = 2};
  ExpectRefusedAndFallsBack(indices, "MaxPool: the Indices output is not implemented on cpu");
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpTest four_d{.op = op,
                  .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 1, 3, 3, 3, 3}, rng))},
                  .attributes = {Ints("kernel_shape", {2, 2, 2, 2})}};
    ExpectRefusedAndFallsBack(four_d, std::string(op) + ": 4 spatial dims are not implemented on cpu (at most 3)");
  }
  OpTest f64{.op = "GlobalAveragePool", .inputs = {In("x", RandomTensor(DataType::kDouble, {1, 2, 3, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
  OpTest i8{.op = "MaxPool",
            .inputs = {In("x", RandomTensor(DataType::kInt8, {1, 2, 4, 4}, rng, -100, 100))},
            .attributes = {Ints("kernel_shape", {2, 2})}};
  ExpectRefusedAndFallsBack(i8, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
