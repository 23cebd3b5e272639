// ONNX Runtime's remaining com.microsoft CPU ops (group "misc"): a hand-computed value per op on ref (and on cpu
// for com.microsoft::Pad, whose cpu kernel is ONNX Pad's, checked against ref too), one bad input per op and the
// message it gets, and the ops no backend implements (kernels/refused_ops.h): refused at the kernel layer with
// their reason, by every built-in backend.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "kernels/refused_ops.h"
#include "schemas/schema.h"
#include "testing/op_harness.h"

namespace ferry::testing {
namespace {

Tensor F32(Shape shape, std::vector<float> v) {
  return Tensor::FromVector<float>(DataType::kFloat, std::move(shape), v);
}
Tensor I32(Shape shape, std::vector<int32_t> v) {
  return Tensor::FromVector<int32_t>(DataType::kInt32, std::move(shape), v);
}
Tensor I64(Shape shape, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), v);
}
Tensor Str1(std::vector<std::string> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<std::string>(DataType::kString, {n}, v);
}

OpTest Ms(std::string op, std::vector<OpInput> in, std::vector<onnx::AttributeProto> attrs = {}, int outputs = 1) {
  return OpTest{.op = std::move(op),
                .domain = "com.microsoft",
                .opset = 1,
                .inputs = std::move(in),
                .attributes = std::move(attrs),
                .num_outputs = outputs};
}

// Output `i` of `t` on ref alone.
Tensor RefOut(const OpTest& t, size_t i = 0) { return RunOn(t, {"ref"}, true, 1).at(i).second; }

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

// The message running `t` on `backends` fails with ("" when it runs).
std::string ErrorOf(const OpTest& t, const std::vector<std::string>& backends = {"ref"}) {
  try {
    RunOn(t, backends, true, 1);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(t, text)                                      \
  do {                                                             \
    const std::string message_ = ErrorOf(t);                       \
    EXPECT_NE(message_.find(text), std::string::npos) << message_; \
  } while (0)

// ---- CropAndResize -------------------------------------------------------------------------------------------

TEST(OrtContribMisc, CropAndResize) {
  const Tensor x = F32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  auto crop = [&](std::vector<float> roi, std::vector<int32_t> size, std::vector<onnx::AttributeProto> attrs) {
    return Ms("CropAndResize",
              {In("X", x), In("rois", F32({1, 4}, roi)), Const("batch_indices", I32({1}, {0})),
               Const("crop_size", I32({2}, size))},
              attrs);
  };
  // The whole image at its own size is the image; corners; one sample at the box's centre (0.25, 0.25):
  // bilinear (0 1; 3 4) at (0.25, 0.25) = 1.
  EXPECT_EQ(Values<float>(RefOut(crop({0, 0, 1, 1}, {3, 3}, {}))), std::vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(Values<float>(RefOut(crop({0, 0, 1, 1}, {2, 2}, {}))), std::vector<float>({0, 2, 6, 8}));
  EXPECT_FLOAT_EQ(RefOut(crop({0, 0, 0.25f, 0.25f}, {1, 1}, {})).data<float>()[0], 1.0f);
  // nearest: rows / columns 0 and 1 of (0, 0.5) * 2; a box reaching past the image gives extrapolation_value.
  EXPECT_EQ(Values<float>(RefOut(crop({0, 0, 0.5f, 0.5f}, {2, 2}, {Str("mode", "nearest")}))),
            std::vector<float>({0, 1, 3, 4}));
  EXPECT_EQ(Values<float>(RefOut(crop({0, -1, 0, 0}, {1, 2}, {Float("extrapolation_value", 9)}))),
            std::vector<float>({9, 0}));
  // double and float16 (ONNX Runtime's kernel is float only) sample the same points.
  OpTest f64 = crop({0, 0, 0.25f, 0.25f}, {1, 1}, {});
  f64.inputs[0] = In("X", Tensor::FromVector<double>(DataType::kDouble, {1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8}));
  f64.inputs[1] = In("rois", Tensor::FromVector<double>(DataType::kDouble, {1, 4}, {0, 0, 0.25, 0.25}));
  EXPECT_DOUBLE_EQ(RefOut(f64).data<double>()[0], 1.0);
  OpTest f16 = f64;
  std::mt19937 rng(1);
  f16.inputs[0] = In("X", RandomTensor(DataType::kFloat16, {1, 1, 3, 3}, rng));
  f16.inputs[1] = In("rois", Tensor::FromVector<Float16>(DataType::kFloat16, {1, 4},
                                                         {Float16(0.0f), Float16(0.0f), Float16(1.0f), Float16(1.0f)}));
  f16.inputs[3] = Const("crop_size", I32({2}, {3, 3}));
  EXPECT_TRUE(SameBits(RefOut(f16), f16.inputs[0].value));  // the whole image at its size: the image
  OpTest bad = crop({0, 0, 1, 1}, {2, 2}, {});
  bad.inputs[2] = Const("batch_indices", I32({1}, {5}));
  EXPECT_ERROR(bad, "batch_indices[0] = 5 is outside [0, 1)");
  EXPECT_ERROR(crop({0, 0, 1, 1}, {2, 2}, {Str("mode", "cubic")}), "expected 'bilinear' or 'nearest'");
}

// ---- MurmurHash3 ---------------------------------------------------------------------------------------------

TEST(OrtContribMisc, MurmurHash3) {
  // MurmurHash3_x86_32's published vectors: "" with seed 0 is 0, with seed 1 0x514e28b7; "hello" 0x248bfa47.
  const Tensor y = RefOut(Ms("MurmurHash3", {In("X", Str1({"", "hello"}))}));
  EXPECT_EQ(y.dtype(), DataType::kUint32);
  EXPECT_EQ(Values<uint32_t>(y), std::vector<uint32_t>({0u, 0x248bfa47u}));
  const Tensor s = RefOut(Ms("MurmurHash3", {In("X", Str1({""}))}, {Int("seed", 1), Int("positive", 0)}));
  EXPECT_EQ(s.dtype(), DataType::kInt32);
  EXPECT_EQ(static_cast<uint32_t>(s.data<int32_t>()[0]), 0x514e28b7u);
  // An int32 key is its 4 bytes: the same hash as the 4-character string of those bytes.
  const Tensor i = RefOut(Ms("MurmurHash3", {In("X", I32({1}, {0x64636261}))}));
  const Tensor a = RefOut(Ms("MurmurHash3", {In("X", Str1({"abcd"}))}));
  EXPECT_EQ(i.data<uint32_t>()[0], a.data<uint32_t>()[0]);
  EXPECT_ERROR(Ms("MurmurHash3", {In("X", Tensor::FromVector<int8_t>(DataType::kInt8, {1}, {1}))}), "int8");
}

// ---- Tokenizer -----------------------------------------------------------------------------------------------

TEST(OrtContribMisc, Tokenizer) {
  auto tok = [](std::vector<std::string> texts, std::vector<onnx::AttributeProto> attrs) {
    return Ms("Tokenizer", {In("X", Str1(std::move(texts)))}, std::move(attrs));
  };
  const std::vector<onnx::AttributeProto> marked = {Int("mark", 1), Str("pad_value", "#"), Int("mincharnum", 1)};
  auto with = [](std::vector<onnx::AttributeProto> a, onnx::AttributeProto b) {
    a.push_back(std::move(b));
    return a;
  };
  onnx::AttributeProto seps;
  seps.set_name("separators");
  seps.set_type(onnx::AttributeProto::STRINGS);
  seps.add_strings(", ");
  seps.add_strings(" ");
  // [C] -> [C, tokens + 2]: start marker, tokens, end marker, then pads.
  const Tensor y = RefOut(tok({"ab, c", "d"}, with(marked, seps)));
  ASSERT_EQ(y.shape(), Shape({2, 4}));
  const std::vector<std::string> want = {"\x02", "ab", "c", "\x03", "\x02", "d", "\x03", "#"};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(y.strings()[k], want[k]) << k;
  // tokenexp matches are leftmost-longest (RE2's longest_match), shorter ones than mincharnum skipped.
  const Tensor e = RefOut(tok(
      {"abc x abcab"}, {Int("mark", 0), Str("pad_value", "#"), Int("mincharnum", 2), Str("tokenexp", "a|ab|abc|x")}));
  ASSERT_EQ(e.shape(), Shape({1, 3}));
  EXPECT_EQ(e.strings()[0], "abc");
  EXPECT_EQ(e.strings()[1], "abc");
  EXPECT_EQ(e.strings()[2], "ab");
  EXPECT_ERROR(tok({"ok", "\xff"}, with(marked, seps)), "input string 1 of 'X' is not valid UTF-8");
  EXPECT_ERROR(tok({"a"}, {Int("mark", 0), Str("pad_value", "#"), Int("mincharnum", 0), Str("tokenexp", "a")}),
               "mincharnum = 0, expected > 0");
}

// ---- NGramRepeatBlock ----------------------------------------------------------------------------------------

TEST(OrtContribMisc, NGramRepeatBlock) {
  // ids 1 2 1, ngram 2: the last token 1 followed 2 before, so 2 is banned.
  OpTest t = Ms("NGramRepeatBlock", {In("input_ids", I64({1, 3}, {1, 2, 1})), In("scores", F32({1, 4}, {1, 2, 3, 4}))},
                {Int("ngram_size", 2)});
  const std::vector<float> got = Values<float>(RefOut(t));
  EXPECT_EQ(got[0], 1);
  EXPECT_EQ(got[1], 2);
  EXPECT_EQ(got[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(got[3], 4);
  t.inputs[0] = In("input_ids", I64({1, 3}, {1, 9, 1}));
  EXPECT_ERROR(t, "banned token id 9 (input_ids[0, 1]) is outside the vocabulary [0, 4)");
}

// ---- BifurcationDetector -------------------------------------------------------------------------------------

TEST(OrtContribMisc, BifurcationDetector) {
  const Tensor src = I64({4}, {5, 6, 7, 8});
  // pred from src[1]: 6 7 match, 9 differs at k = 2: tokens = cur ++ 6 7 9; "9" is not in src: -1.
  OpTest t = Ms(
      "BifurcationDetector",
      {In("src", src), In("cur", I64({1}, {1})), In("prev", I64({1}, {1})), In("pred", I64({4}, {6, 7, 9, 9}))}, {}, 2);
  auto out = RunOn(t, {"ref"}, true, 1);
  EXPECT_EQ(Values<int64_t>(out[0].second), std::vector<int64_t>({1, 6, 7, 9}));
  EXPECT_EQ(out[1].second.data<int64_t>()[0], -1);
  // Without pred: tokens = cur = 5 6; "6" and "5 6" occur once, ending at 2.
  OpTest np = Ms("BifurcationDetector", {In("src", src), In("cur", I64({2}, {5, 6})), In("prev", I64({1}, {0}))}, {},
                 2);
  out = RunOn(np, {"ref"}, true, 1);
  EXPECT_EQ(Values<int64_t>(out[0].second), std::vector<int64_t>({5, 6}));
  EXPECT_EQ(out[1].second.data<int64_t>()[0], 2);
  t.inputs[3] = In("pred", I64({2}, {6, 7}));
  EXPECT_ERROR(t, "pred_tokens must have len(src_tokens) + 1 - prev_suffix_match_idx values, got 2");
}

// ---- DynamicTimeWarping --------------------------------------------------------------------------------------

TEST(OrtContribMisc, DynamicTimeWarping) {
  // cost (1 2; 3 4): the diagonal (0,0) -> (1,1) is cheapest.
  const Tensor y = RefOut(Ms("DynamicTimeWarping", {In("input", F32({2, 2}, {1, 2, 3, 4}))}));
  ASSERT_EQ(y.shape(), Shape({2, 2}));
  EXPECT_EQ(Values<int32_t>(y), std::vector<int32_t>({0, 1, 0, 1}));
  // All ones: traced back from (1, 2), the tie there goes left to (1, 1), then the diagonal is strictly least.
  const Tensor t = RefOut(Ms("DynamicTimeWarping", {In("input", F32({2, 3}, {1, 1, 1, 1, 1, 1}))}));
  EXPECT_EQ(Values<int32_t>(t), std::vector<int32_t>({0, 1, 1, 0, 1, 2}));
  EXPECT_ERROR(Ms("DynamicTimeWarping", {In("input", F32({2, 1, 1}, {1, 2}))}),
               "input must be [rows, cols] or [1, rows, cols]");
}

// ---- UnfoldTensor --------------------------------------------------------------------------------------------

TEST(OrtContribMisc, UnfoldTensor) {
  const Tensor y = RefOut(
      Ms("UnfoldTensor", {In("input", I64({6}, {0, 1, 2, 3, 4, 5}))}, {Int("size", 3), Int("step", 2)}));
  ASSERT_EQ(y.shape(), Shape({2, 3}));
  EXPECT_EQ(Values<int64_t>(y), std::vector<int64_t>({0, 1, 2, 2, 3, 4}));
  // dim 0 of [3, 2]: windows of 2 rows, the window last: [2, 2, 2].
  const Tensor z = RefOut(
      Ms("UnfoldTensor", {In("input", F32({3, 2}, {0, 1, 2, 3, 4, 5}))}, {Int("dim", 0), Int("size", 2)}));
  ASSERT_EQ(z.shape(), Shape({2, 2, 2}));
  EXPECT_EQ(Values<float>(z), std::vector<float>({0, 2, 1, 3, 2, 4, 3, 5}));
  EXPECT_ERROR(Ms("UnfoldTensor", {In("input", I64({6}, {0, 1, 2, 3, 4, 5}))}, {Int("size", 7)}),
               "is shorter than size");
}

// ---- MaxpoolWithMask -----------------------------------------------------------------------------------------

TEST(OrtContribMisc, MaxpoolWithMask) {
  // 1-D: a 0 in the mask ends the window: [1 5] -> 5, [5 | 2] -> 5, [| 2 7] -> nothing read: the lowest float.
  const Tensor y = RefOut(Ms("MaxpoolWithMask",
                             {In("X", F32({1, 1, 4}, {1, 5, 2, 7})), In("M", I32({1, 1, 4}, {1, 1, 0, 1}))},
                             {Ints("kernel_shape", {2})}));
  EXPECT_EQ(Values<float>(y), std::vector<float>({5, 5, -FLT_MAX}));
  // 2-D: a 0 ends the rest of its row only.
  const Tensor z = RefOut(Ms("MaxpoolWithMask",
                             {In("X", F32({1, 1, 2, 2}, {1, 9, 3, 4})), In("M", I32({1, 1, 2, 2}, {1, 0, 1, 1}))},
                             {Ints("kernel_shape", {2, 2})}));
  EXPECT_EQ(Values<float>(z), std::vector<float>({4}));
  EXPECT_ERROR(Ms("MaxpoolWithMask", {In("X", F32({1, 1, 4}, {1, 5, 2, 7})), In("M", I32({1, 1, 3}, {1, 1, 1}))},
                  {Ints("kernel_shape", {2})}),
               "must have X's spatial dims");
}

// ---- ConvTransposeWithDynamicPads ----------------------------------------------------------------------------

TEST(OrtContribMisc, ConvTransposeWithDynamicPads) {
  // X (1 2; 3 4) through a 2x2 kernel of ones: (1 3 2; 4 10 6; 3 7 4); the pads input crops it.
  auto ct = [](std::vector<int64_t> pads) {
    return Ms("ConvTransposeWithDynamicPads",
              {In("X", F32({1, 1, 2, 2}, {1, 2, 3, 4})), Const("W", F32({1, 1, 2, 2}, {1, 1, 1, 1})),
               Const("Pads", I64({4}, pads))});
  };
  EXPECT_EQ(Values<float>(RefOut(ct({0, 0, 0, 0}))), std::vector<float>({1, 3, 2, 4, 10, 6, 3, 7, 4}));
  EXPECT_EQ(Values<float>(RefOut(ct({1, 1, 0, 0}))), std::vector<float>({10, 6, 7, 4}));
  EXPECT_EQ(Values<float>(RefOut(ct({0, 0, 1, 1}))), std::vector<float>({1, 3, 4, 10}));
  // Pads known only when the run has them (a graph input): the same result.
  OpTest run_time = ct({0, 0, 1, 1});
  run_time.inputs[2] = In("Pads", I64({4}, {0, 0, 1, 1}));
  EXPECT_EQ(Values<float>(RefOut(run_time)), std::vector<float>({1, 3, 4, 10}));
  OpTest bad = ct({0, 0, 0, 0});
  bad.inputs.push_back(Const("B", F32({2}, {1, 2})));
  EXPECT_ERROR(bad, "bias B has shape [2], expected [1]");
}

TEST(OrtContribMisc, ConvTransposeWithDynamicPadsCpuMatchesRef) {
  std::mt19937 rng(5);
  const std::vector<std::vector<int64_t>> pads = {{0, 0, 0, 0}, {1, 0, 2, 1}, {0, 2, 1, 0}};
  for (size_t i = 0; i < pads.size(); ++i) {
    const int64_t group = i == 2 ? 2 : 1;
    OpTest t = Ms("ConvTransposeWithDynamicPads",
                  {In("X", RandomTensor(DataType::kFloat, {2, 4, 5, 4}, rng)),
                   Const("W", RandomTensor(DataType::kFloat, {4, 6 / group, 3, 3}, rng)),
                   Const("Pads", I64({4}, pads[i])), Const("B", RandomTensor(DataType::kFloat, {6}, rng))},
                  {Ints("strides", {2, 1 + static_cast<int64_t>(i % 2)}), Int("group", group)});
    t.rtol = t.atol = 1e-4;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << i;
    if (i == 1) {
      t.inputs[2] = In("Pads", I64({4}, pads[i]));  // known only at run time: ref's
      ExpectRefusedAndFallsBack(t, "input Pads is not a constant initializer");
    }
  }
}

// ---- NhwcMaxPool ---------------------------------------------------------------------------------------------

TEST(OrtContribMisc, NhwcMaxPool) {
  // [1, 2, 2, 2], channels last: channel 0 holds 1 -3 5 2, channel 1 -1 -2 -3 -4.
  const Tensor x = Tensor::FromVector<int8_t>(DataType::kInt8, {1, 2, 2, 2}, {1, -1, -3, -2, 5, -3, 2, -4});
  const Tensor y = RefOut(Ms("NhwcMaxPool", {In("x", x)}, {Ints("kernel_shape", {2, 2})}));
  ASSERT_EQ(y.shape(), Shape({1, 1, 1, 2}));
  EXPECT_EQ(Values<int8_t>(y), std::vector<int8_t>({5, -1}));
  // A 1x1 window is the input itself.
  const Tensor p = RefOut(Ms("NhwcMaxPool", {In("x", x)}, {Ints("kernel_shape", {1, 1}), Ints("strides", {1, 1})}));
  EXPECT_EQ(Values<int8_t>(p), Values<int8_t>(x));
  EXPECT_ERROR(Ms("NhwcMaxPool", {In("x", x)}, {Ints("kernel_shape", {2})}), "must have 2 + len(kernel_shape) dims");
}

// ---- Pad (com.microsoft) -------------------------------------------------------------------------------------

TEST(OrtContribMisc, PadCpuMatchesRef) {
  std::mt19937 rng(27);
  for (const char* mode : {"constant", "reflect", "edge"}) {
    OpTest t = Ms("Pad",
                  {In("data", RandomTensor(DataType::kFloat, {3, 4, 5}, rng)),
                   Const("pads", I64({1, 6}, {1, 0, 2, 2, 1, 0})), Const("value", F32({1}, {2.5f}))},
                  {Str("mode", mode)});
    EXPECT_TRUE(MatchesRef(t, "cpu")) << mode;
  }
  // [1 2] padded by one before, the value 9: [9 1 2] on both backends.
  OpTest t = Ms("Pad", {In("data", F32({2}, {1, 2})), Const("pads", I64({2}, {1, 0})), Const("value", F32({1}, {9}))});
  for (const char* backend : {"ref", "cpu"}) {
    EXPECT_EQ(Values<float>(RunOn(t, {backend}, true, 1)[0].second), std::vector<float>({9, 1, 2})) << backend;
  }
  OpTest wrap = t;
  wrap.attributes = {Str("mode", "wrap")};
  EXPECT_ERROR(wrap, "mode 'wrap' is not one of constant, edge, reflect");
}

// ---- MatMulInteger16 -----------------------------------------------------------------------------------------

TEST(OrtContribMisc, MatMulInteger16) {
  auto i16 = [](Shape s, std::vector<int16_t> v) { return Tensor::FromVector<int16_t>(DataType::kInt16, s, v); };
  const Tensor y = RefOut(Ms("MatMulInteger16", {In("A", i16({1, 2}, {1, 2})), In("B", i16({2, 1}, {3, 4}))}));
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.data<int32_t>()[0], 11);
  // (-32768)^2 * 2 = 2^31 wraps to -2^31.
  const Tensor w = RefOut(
      Ms("MatMulInteger16", {In("A", i16({1, 2}, {-32768, -32768})), In("B", i16({2, 1}, {-32768, -32768}))}));
  EXPECT_EQ(w.data<int32_t>()[0], std::numeric_limits<int32_t>::min());
  EXPECT_ERROR(Ms("MatMulInteger16", {In("A", i16({1, 2}, {1, 2})), In("B", i16({3, 1}, {3, 4, 5}))}),
               "inner dimensions of A");
}

// ---- AttnLSTM -------------------------------------------------------------------------------------------------

TEST(OrtContribMisc, AttnLstm) {
  // I = H = Md = Tm = 1, no AW: the attention state after each step is the one memory value, 2. W is 0 but for the
  // cell gate's attention column, so step 1 sees A_0 = 0 (all gates 1/2, c~ = 0: C1 = 0, H1 = 0) and step 2
  // A_1 = 2: c~ = tanh 2, C2 = tanh(2) / 2, H2 = tanh(C2) / 2.
  std::vector<float> w(8, 0.0f);
  w[3 * 2 + 1] = 1;  // gate c (rows i o f c), column I + 0
  auto t = Ms("AttnLSTM",
              {In("X", F32({2, 1, 1}, {5, -5})), Const("W", F32({1, 4, 2}, w)),
               Const("R", F32({1, 4, 1}, {0, 0, 0, 0})), Omitted(), Omitted(), Omitted(), Omitted(), Omitted(),
               Const("QW", F32({1, 1, 1}, {1})), Const("MW", F32({1, 1, 1}, {1})), Const("V", F32({1, 1}, {1})),
               Const("M", F32({1, 1, 1}, {2}))},
              {Int("hidden_size", 1)}, 3);
  auto out = RunOn(t, {"ref"}, true, 1);
  const float c2 = std::tanh(2.0f) / 2;
  EXPECT_NEAR(out[0].second.data<float>()[0], 0.0f, 1e-6);
  EXPECT_NEAR(out[0].second.data<float>()[1], std::tanh(c2) / 2, 1e-6);  // 0.2239274...
  EXPECT_NEAR(out[1].second.data<float>()[0], 0.22392747f, 1e-6);
  EXPECT_NEAR(out[2].second.data<float>()[0], 0.48201379f, 1e-6);
  t.inputs.push_back(Const("memory_seq_lens", I32({1}, {0})));
  EXPECT_ERROR(t, "memory_seq_lens[0] = 0 is outside [1, 1]");
}

// ---- refused at the kernel layer -----------------------------------------------------------------------------

TEST(OrtContribMisc, RefusedOpsHaveSchemasAndNoKernelAnywhere) {
  ASSERT_FALSE(RefusedOps().empty());
  for (const RefusedOp& r : RefusedOps()) {
    EXPECT_FALSE(schemas::SchemaRegistry::Get().Versions(r.domain, r.op).empty()) << r.op << " has no schema";
    EXPECT_FALSE(r.reason.empty()) << r.op;
    EXPECT_EQ(RefusedOpReason(r.domain, r.op), r.reason);
    for (const std::string& name : BackendNames()) {
      for (const KernelDef& d : FindBackend(name)->kernels().defs()) {
        EXPECT_FALSE(d.op == r.op && d.domain == r.domain)
            << name << " registers " << d.name << ", refused as: " << r.reason;
      }
    }
  }
  EXPECT_TRUE(RefusedOpReason("", "BeamSearch").empty());
  EXPECT_TRUE(RefusedOpReason("com.microsoft", "Tokenizer").empty());
}

TEST(OrtContribMisc, SampleOpIsRefusedAtTheKernelLayerWithItsReason) {
  const OpTest t = Ms("SampleOp", {In("X", F32({1}, {1}))});
  try {
    RunOn(t, {"cpu", "ref"}, false, 1);
    ADD_FAILURE() << "SampleOp ran";
  } catch (const UnsupportedError& e) {  // kernel layer: UnsupportedError, not InvalidModelError (graph layer)
    const std::string m = e.what();
    EXPECT_NE(m.find("ref [kernel] backend 'ref' has no kernel for SampleOp: ONNX Runtime's example op"),
              std::string::npos)
        << m;
  }
}

}  // namespace
}  // namespace ferry::testing
