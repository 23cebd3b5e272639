// ONNX Runtime's com.microsoft.nchwc ops (kernels/nchwc_layout.h, kernels/ref/nchwc.cc, and the cpu kernels they
// share with ai.ferry's blocked ops): hand-computed values on cpu and ref, cpu against ref on random inputs for both
// block sizes (FERRY_NCHWC_BLOCK sets it, so the 8-block path is tested on an AVX-512 host too), and the messages
// of shapes that contradict the block. The Python test (tests/python/test_ort_contrib_nchwc.py) runs the files ONNX
// Runtime itself writes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

// Sets FERRY_NCHWC_BLOCK for the scope (kernels read it when the session creates them).
class ScopedBlock {
 public:
  explicit ScopedBlock(const std::string& value) {
    if (const char* old = std::getenv("FERRY_NCHWC_BLOCK")) old_ = old, had_ = true;
    setenv("FERRY_NCHWC_BLOCK", value.c_str(), 1);
  }
  ~ScopedBlock() {
    if (had_) {
      setenv("FERRY_NCHWC_BLOCK", old_.c_str(), 1);
    } else {
      unsetenv("FERRY_NCHWC_BLOCK");
    }
  }

 private:
  std::string old_;
  bool had_ = false;
};

Tensor Values(Shape shape, const std::vector<float>& v) { return Tensor::FromVector(DataType::kFloat, shape, v); }

OpTest Nchwc(const std::string& op, std::vector<OpInput> inputs, std::vector<onnx::AttributeProto> attrs = {}) {
  return OpTest{.op = op,
                .domain = "com.microsoft.nchwc",
                .opset = 1,
                .inputs = std::move(inputs),
                .attributes = std::move(attrs),
                .rtol = 1e-4,
                .atol = 1e-5};
}

// Output 0 of `t` on `backend` alone (fallback forbidden).
Tensor RunNode(const OpTest& t, const std::string& backend) { return RunOn(t, {backend}, true, 1).at(0).second; }

void ExpectValues(const OpTest& t, const Shape& shape, const std::vector<float>& want) {
  for (const std::string backend : {"cpu", "ref"}) {
    const Tensor y = RunNode(t, backend);
    EXPECT_TRUE(TensorsClose(y, Values(shape, want), 1e-6, 1e-6)) << t.op << " on " << backend;
  }
}

TEST(OrtContribNchwc, ReorderInputPadsTheLastBlockWithZeros) {
  ScopedBlock block("8");
  // X [1, 3, 1, 2] = 0..5 (channel-major) -> Y [1, 8, 1, 2] stored [1, 1, 1, 2, 8]: position w holds lanes c.
  ExpectValues(Nchwc("ReorderInput", {In("x", Values({1, 3, 1, 2}, {0, 1, 2, 3, 4, 5}))}), {1, 8, 1, 2},
               {0, 2, 4, 0, 0, 0, 0, 0, 1, 3, 5, 0, 0, 0, 0, 0});
  // channels_last: X [1, 1, 2, 3] NHWC = 0..5 -> the same positions with lanes 0,1,2 and 3,4,5.
  ExpectValues(Nchwc("ReorderInput", {In("x", Values({1, 1, 2, 3}, {0, 1, 2, 3, 4, 5}))}, {Int("channels_last", 1)}),
               {1, 8, 1, 2}, {0, 1, 2, 0, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0, 0, 0});
}

TEST(OrtContribNchwc, ReorderOutputDropsThePaddingChannels) {
  ScopedBlock block("8");
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);  // position 0: lanes 0..7, position 1: lanes 8..15
  ExpectValues(Nchwc("ReorderOutput", {In("x", Values({1, 8, 1, 2}, x))}, {Int("channels", 3)}), {1, 3, 1, 2},
               {0, 8, 1, 9, 2, 10});
  ExpectValues(
      Nchwc("ReorderOutput", {In("x", Values({1, 8, 1, 2}, x))}, {Int("channels", 3), Int("channels_last", 1)}),
      {1, 1, 2, 3}, {0, 1, 2, 8, 9, 10});
}

TEST(OrtContribNchwc, ConvPlainInputWithOihwBoWeights) {
  ScopedBlock block("8");
  // X plain [1, 1, 1, 1] = 2 (C = 1 < 8); W [8, 1, 1, 1] OIHWBo = m + 1; B = 0.5: Y[m] = 2 (m + 1) + 0.5.
  std::vector<float> w(8), b(8, 0.5f), want(8);
  for (int m = 0; m < 8; ++m) w[m] = static_cast<float>(m + 1), want[m] = 2.0f * (m + 1) + 0.5f;
  ExpectValues(Nchwc("Conv", {In("x", Values({1, 1, 1, 1}, {2})), Const("w", Values({8, 1, 1, 1}, w)),
                              Const("b", Values({8}, b))}),
               {1, 8, 1, 1}, want);
}

TEST(OrtContribNchwc, ConvBlockedInputWithSumThenActivation) {
  ScopedBlock block("8");
  // X blocked [1, 8, 1, 1] = 1 everywhere; W [8, 8, 1, 1] OIHWBiBo: element (o, i) at [i * 8 + o] = 10 o + i, so
  // Conv[o] = 80 o + 28; Sum[o] = -100 for o = 0, else 1: Y = Relu(Conv + Sum) = 0, 109, 189, ...
  std::vector<float> w(64), sum(8, 1.0f), want(8);
  for (int o = 0; o < 8; ++o) {
    for (int i = 0; i < 8; ++i) w[i * 8 + o] = static_cast<float>(10 * o + i);
  }
  sum[0] = -100;
  for (int o = 0; o < 8; ++o) want[o] = o == 0 ? 0.0f : 80.0f * o + 28 + 1;
  ExpectValues(Nchwc("Conv",
                     {In("x", Values({1, 8, 1, 1}, std::vector<float>(8, 1.0f))), Const("w", Values({8, 8, 1, 1}, w)),
                      Omitted(), In("sum", Values({1, 8, 1, 1}, sum))},
                     {Str("activation", "Relu")}),
               {1, 8, 1, 1}, want);
}

TEST(OrtContribNchwc, GlobalAveragePoolAndUpsampleHandValues) {
  ScopedBlock block("8");
  // X [1, 8, 1, 2]: position 0 lanes 0..7, position 1 lanes 8..15: the mean of lane c is c + 4.
  std::vector<float> x(16), mean(8);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(i);
  for (int c = 0; c < 8; ++c) mean[c] = c + 4.0f;
  ExpectValues(Nchwc("GlobalAveragePool", {In("x", Values({1, 8, 1, 2}, x))}), {1, 8, 1, 1}, mean);
  // Nearest, scales [1, 1, 1, 2]: positions 0, 0, 1, 1.
  std::vector<float> near;
  for (int p : {0, 0, 1, 1}) {
    for (int c = 0; c < 8; ++c) near.push_back(x[p * 8 + c]);
  }
  ExpectValues(Nchwc("Upsample", {In("x", Values({1, 8, 1, 2}, x))}, {Ints("scales", {1, 1, 1, 2})}), {1, 8, 1, 4},
               near);
  // Linear, align_corners, scales [1, 1, 1, 3]: output w = 0..5 reads s = w / 5, weights (1 - s, s) of positions 0, 1.
  std::vector<float> lin;
  for (int ow = 0; ow < 6; ++ow) {
    const float s = ow * 1.0f / 5.0f;
    for (int c = 0; c < 8; ++c) lin.push_back((1 - s) * x[c] + s * x[8 + c]);
  }
  ExpectValues(Nchwc("Upsample", {In("x", Values({1, 8, 1, 2}, x))},
                     {Ints("scales", {1, 1, 1, 3}), Str("mode", "linear"),
                      Str("coordinate_transformation_mode", "align_corners")}),
               {1, 8, 1, 6}, lin);
}

// cpu against ref at both block sizes: every conv form ORT's transformer writes, the pools, the reorders.
TEST(OrtContribNchwc, CpuMatchesRefForBothBlocks) {
  for (const int b : {8, 16}) {
    ScopedBlock block(std::to_string(b));
    std::mt19937 rng(27 + b);
    const auto random = [&](Shape s) { return RandomTensor(DataType::kFloat, std::move(s), rng); };
    const int64_t c = 2 * b;
    const std::vector<OpTest> cases = {
        Nchwc("Conv", {In("x", random({2, c, 9, 11})), Const("w", random({c, c, 3, 3})), Const("b", random({c}))},
              {Ints("pads", {1, 1, 1, 1}), Ints("strides", {2, 2}), Str("activation", "HardSwish")}),
        Nchwc("Conv",
              {In("x", random({1, 3, 10, 10})), Const("w", random({c, 3, 3, 3})), Omitted(),
               In("sum", random({1, c, 8, 8}))},
              {Str("activation", "LeakyRelu"), Floats("activation_params", {0.2f})}),
        Nchwc("Conv", {In("x", random({1, c, 7, 7})), Const("w", random({c, 1, 3, 3})), Const("b", random({c}))},
              {Int("group", c), Ints("pads", {1, 1, 1, 1}), Ints("dilations", {2, 2}), Str("activation", "Clip"),
               Floats("activation_params", {0, 6})}),
        Nchwc("Conv", {In("x", random({1, c, 6, 6})), Const("w", random({c, b, 1, 1}))}, {Int("group", 2)}),
        Nchwc("MaxPool", {In("x", random({1, c, 9, 9}))},
              {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Int("ceil_mode", 1)}),
        Nchwc("AveragePool", {In("x", random({1, c, 9, 9}))},
              {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1}), Int("count_include_pad", 1)}),
        Nchwc("AveragePool", {In("x", random({1, c, 9, 9}))},
              {Ints("kernel_shape", {2, 2}), Ints("pads", {1, 1, 0, 0}), Ints("strides", {2, 2})}),
        Nchwc("GlobalMaxPool", {In("x", random({2, c, 5, 3}))}),
        Nchwc("GlobalAveragePool", {In("x", random({2, c, 5, 3}))}),
        Nchwc("ReorderInput", {In("x", random({2, b + 4, 3, 5}))}),
        Nchwc("ReorderInput", {In("x", random({2, 3, 5, b + 4}))}, {Int("channels_last", 1)}),
        Nchwc("ReorderOutput", {In("x", random({2, c, 3, 5}))}, {Int("channels", c - 3)}),
        Nchwc("ReorderOutput", {In("x", random({2, c, 3, 5}))}, {Int("channels", c - 1), Int("channels_last", 1)}),
        Nchwc(
            "Upsample", {In("x", random({1, c, 3, 4}))},
            {Ints("scales", {1, 1, 4, 2}), Str("mode", "linear"), Str("coordinate_transformation_mode", "half_pixel")}),
    };
    for (const OpTest& t : cases) EXPECT_TRUE(MatchesRef(t, "cpu")) << t.op << ", block " << b;
  }
}

void ExpectRefused(const OpTest& t, const std::vector<std::string>& parts) {
  for (const std::string backend : {"cpu", "ref"}) {
    try {
      RunNode(t, backend);
      ADD_FAILURE() << t.op << " on " << backend << ": expected a refusal";
    } catch (const Error& e) {
      for (const std::string& part : parts) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << backend << ": " << e.what();
      }
    }
  }
}

TEST(OrtContribNchwc, ShapesThatContradictTheBlockAreRefused) {
  ScopedBlock block("8");
  std::mt19937 rng(5);
  const auto random = [&](Shape s) { return RandomTensor(DataType::kFloat, std::move(s), rng); };
  // A blocked X of 12 channels (not a multiple of 8) for a pool: named with the node, the input and the block.
  ExpectRefused(Nchwc("MaxPool", {In("x", random({1, 12, 4, 4}))}, {Ints("kernel_shape", {2, 2})}),
                {"node 'node'", "input X", "12 channels, expected a multiple of the NCHWc block 8"});
  // ReorderOutput of 3 channels from 16: 3 rounds up to 8.
  ExpectRefused(Nchwc("ReorderOutput", {In("x", random({1, 16, 2, 2}))}, {Int("channels", 3)}),
                {"input X", "has 16 channels, expected 3 rounded up to the NCHWc block 8 (8)"});
  // A Conv whose X does not have W[1] * group channels.
  ExpectRefused(Nchwc("Conv", {In("x", random({1, 16, 4, 4})), Const("w", random({8, 8, 1, 1}))}),
                {"input X", "16 channels, expected W[1] * group = 8"});
}

TEST(OrtContribNchwc, BadBlockOverrideIsRefused) {
  ScopedBlock block("7");
  try {
    RunNode(Nchwc("GlobalMaxPool", {In("x", Values({1, 8, 1, 1}, std::vector<float>(8, 0.0f)))}), "ref");
    ADD_FAILURE() << "expected FERRY_NCHWC_BLOCK = 7 to be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("FERRY_NCHWC_BLOCK = '7': expected 8 or 16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ferry::testing
