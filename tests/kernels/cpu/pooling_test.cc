// The cpu pooling kernels against ref: MaxPool (with and without Indices, storage_order 0/1) and AveragePool over
// random 1-D/2-D/3-D windows with pads, strides, dilations, ceil_mode, auto_pad and count_include_pad, inputs with
// NaN / ±inf (max skips NaN, a window of only -inf or padding gives -inf), windows that overhang the end padding or
// lie wholly in padding, dynamic shapes run concurrently; each ISA variant (AVX2, scalar) bit for bit, on rows wide
// enough for its vector blocks and tails at strides 1, 2 (deinterleaved) and 3 (gathered), with ±0 ties;
// GlobalAveragePool and GlobalMaxPool (NaN propagates) over ranks 2-5; and the configurations the kernels refuse.
#include "kernels/cpu/conv_test_util.h"
#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

std::string Describe(const OpTest& t) {
  std::string s = t.op + " x" + ShapeToString(t.inputs[0].value.shape());
  for (const auto& a : t.attributes) {
    s += " " + a.name() + "=";
    if (a.type() == onnx::AttributeProto::INTS) {
      s += ShapeToString(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    }
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
    OpTest t = RandomPool(rng, true, i);
    if (i % 2 == 1) t.num_outputs = 2;  // with Indices
    EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t) << " outputs=" << t.num_outputs;
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

// The ISA variants: the --isa list that selects each and the tag in its kernel name.
constexpr EwVariant kPoolVariants[] = {kEwAvx2, kEwScalar};

std::string PoolKernel(const OpTest& t, const EwVariant& v) {
  return std::string("cpu.f32_") + (t.op == "MaxPool" ? "maxpool" : "averagepool") + "__" + v.impl + ".1";
}

// Values drawn from {-0, +0, 1, -1, NaN, -inf, +inf, random}: ties of ±0 and of equal values (the first maximum
// and its index must win), skipped NaNs, windows of only -inf.
Tensor TieTensor(const Shape& s, std::mt19937& rng) {
  Tensor t = RandomTensor(DataType::kFloat, s, rng, -1, 1);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float pool[] = {-0.0f, 0.0f, 1.0f, -1.0f, nan, -inf, inf};
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i) {
    if (Pick(rng, 0, 2) > 0) p[i] = pool[Pick(rng, 0, 6)];
  }
  return t;
}

// One window over rows wide enough for the vector blocks (16 and 8 outputs) and their tails.
OpTest WidePool(std::mt19937& rng, const std::string& op, int64_t rank, int64_t stride, int i) {
  std::vector<int64_t> kernel, strides, pads(static_cast<size_t>(2 * rank)), dilations;
  Shape xs{Pick(rng, 1, 2), Pick(rng, 1, 3)};
  for (int64_t d = 0; d < rank; ++d) {
    const bool last = d == rank - 1;
    const int64_t k = Pick(rng, 1, rank == 3 ? 3 : 5), dil = Pick(rng, 0, 4) == 0 ? 2 : 1;
    kernel.push_back(k);
    strides.push_back(last ? stride : Pick(rng, 1, 2));
    dilations.push_back(dil);
    pads[static_cast<size_t>(d)] = Pick(rng, 0, k - 1);
    pads[static_cast<size_t>(d + rank)] = Pick(rng, 0, k - 1);
    xs.push_back(last ? Pick(rng, 8, 80) * stride / 2 + (k - 1) * dil + 1 : Pick(rng, (k - 1) * dil + 1, 9));
  }
  OpTest t{.op = op, .opset = 19, .rtol = 0, .atol = 0, .threads = 1 + i % 2};
  t.inputs.push_back(In("x", i % 2 ? TieTensor(xs, rng) : RandomTensor(DataType::kFloat, xs, rng, -1, 1, true)));
  t.attributes = {Ints("kernel_shape", kernel), Ints("strides", strides), Ints("pads", pads)};
  if (Pick(rng, 0, 2) == 0) t.attributes.push_back(Ints("dilations", dilations));
  if (Pick(rng, 0, 1)) t.attributes.push_back(Int("ceil_mode", 1));
  if (op == "AveragePool") t.attributes.push_back(Int("count_include_pad", Pick(rng, 0, 1)));
  if (op == "MaxPool" && Pick(rng, 0, 1)) {
    t.num_outputs = 2;
    t.attributes.push_back(Int("storage_order", Pick(rng, 0, 1)));
  }
  return t;
}

TEST(CpuPool, EveryVariantMatchesRefBitForBit) {
  for (const EwVariant& v : kPoolVariants) {
    if (!EwHostHas(v)) {
      GTEST_LOG_(INFO) << "skipping the " << v.impl << " variant: this CPU lacks " << v.isa;
      continue;
    }
    std::mt19937 rng(505);
    int i = 0;
    for (const char* op : {"MaxPool", "AveragePool"}) {
      for (int64_t rank : {1, 2, 3}) {
        for (int64_t stride : {1, 2, 3}) {
          for (int rep = 0; rep < 4; ++rep, ++i) {
            const OpTest t = WidePool(rng, op, rank, stride, i);
            EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, PoolKernel(t, v))) << v.impl << " case " << i << ": "
                                                                        << Describe(t);
            if (rep == 0) {  // ±0 ties exactly: the same sign of zero as ref
              const auto want = RunOn(t, {"ref"}, true, 1);
              const auto got = SessionFor(OneNodeModel(t), {"cpu"}, true, t.threads, v.isa)->Run(Feeds(t));
              ASSERT_EQ(got.size(), want.size());
              for (size_t o = 0; o < got.size(); ++o) EXPECT_TRUE(SameBits(got[o].second, want[o].second));
            }
          }
        }
      }
    }
  }
}

// Windows off the AVX2 variant's common paths: many input rows (9 x 8 depth x height taps), a wide stride
// (gathered), and kernels wider than 16 taps (edge masks per load) at strides 1 and 2.
TEST(CpuPool, WindowsBeyondTheBlockedLoopMatchRef) {
  std::mt19937 rng(707);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    OpTest tall{.op = op,
                .opset = 19,
                .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 10, 9, 21}, rng))},
                .attributes = {Ints("kernel_shape", {9, 8, 3}), Ints("pads", {0, 1, 1, 0, 0, 1})},
                .rtol = 0,
                .atol = 0};
    EXPECT_TRUE(MatchesRef(tall, "cpu")) << Describe(tall);
    OpTest wide{.op = op,
                .opset = 19,
                .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 2, 2000}, rng))},
                .attributes = {Ints("kernel_shape", {2}), Ints("strides", {300}), Ints("pads", {1, 1})},
                .rtol = 0,
                .atol = 0};
    EXPECT_TRUE(MatchesRef(wide, "cpu")) << Describe(wide);
    for (int64_t stride : {1, 2}) {
      OpTest long_kernel{.op = op,
                         .opset = 19,
                         .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 3, 2, 61}, rng))},
                         .attributes = {Ints("kernel_shape", {1, 18}), Ints("strides", {1, stride}),
                                        Ints("pads", {0, 7, 0, 9})},
                         .rtol = 0,
                         .atol = 0};
      EXPECT_TRUE(MatchesRef(long_kernel, "cpu")) << Describe(long_kernel);
    }
  }
}

TEST(CpuPool, MaxPoolIndicesMatchRef) {
  std::mt19937 rng(606);
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, pads;
  };
  const Case cases[] = {
      {{1, 2, 40}, {3}, {2}, {1, 1}},                       // 1-D
      {{1, 64, 56, 56}, {3, 3}, {2, 2}, {1, 1, 1, 1}},      // ResNet stem
      {{2, 3, 9, 37}, {2, 2}, {1, 1}, {0, 0, 1, 1}},        // stride 1, end padding
      {{1, 2, 5, 6, 30}, {2, 3, 3}, {1, 2, 3}, {1, 0, 1, 0, 1, 2}},  // 3-D, gathered
      {{1, 1, 4, 4}, {2, 2}, {1, 1}, {2, 2, 2, 2}},         // windows wholly in padding: index 0
  };
  for (const Case& c : cases) {
    for (int order : {0, 1}) {
      for (int threads : {1, 2}) {
        OpTest t{.op = "MaxPool",
                 .opset = 12,
                 .inputs = {In("x", order ? TieTensor(c.x, rng) : RandomTensor(DataType::kFloat, c.x, rng))},
                 .attributes = {Ints("kernel_shape", c.kernel), Ints("strides", c.strides), Ints("pads", c.pads),
                                Int("storage_order", order)},
                 .num_outputs = 2,
                 .rtol = 0,
                 .atol = 0,
                 .threads = threads};
        EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t);
      }
    }
  }
}

TEST(CpuPool, PrepareErrorsNameTheNode) {
  std::mt19937 rng(81);
  OpTest big{.op = "MaxPool",
             .inputs = {In("x", RandomTensor(DataType::kFloat, {1, 1, 3, 3}, rng))},
             .attributes = {Ints("kernel_shape", {4, 4})}};  // the window does not fit X
  try {
    RunOn(big, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for a 4x4 window over a 3x3 input";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
  } catch (const InvalidModelError& e) {  // shape inference may see it first
    EXPECT_NE(std::string(e.what()).find("node"), std::string::npos) << e.what();
  }
}

TEST(CpuPool, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(71);
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
