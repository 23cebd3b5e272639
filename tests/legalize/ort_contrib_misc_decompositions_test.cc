// The decompositions of ONNX Runtime's remaining contrib ops (com.microsoft, group "misc"; decompose_ort_misc.cc):
// Pad, ConvTransposeWithDynamicPads, MatMulInteger16, NhwcMaxPool and UnfoldTensor against the ops' ref kernels
// (the decomposed graph run on ref, on cpu,ref and on a backend lacking the ops), the rules' refusals, and
// --legalize on a backend without the contrib kernels.
#include <random>
#include <set>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

Tensor Rand(Shape shape, uint32_t seed, DataType dt = DataType::kFloat, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(dt, std::move(shape), rng, lo, hi);
}

// int16 values in [lo, hi] (the harness's RandomTensor makes none).
Tensor RandInt16(Shape shape, uint32_t seed, int lo, int hi) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  Tensor t(DataType::kInt16, std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t.data<int16_t>()[i] = static_cast<int16_t>(dist(rng));
  return t;
}

Tensor I64(Shape shape, std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>(DataType::kInt64, std::move(shape), v);
}

OpTest Ms(std::string op, std::vector<testing::OpInput> in, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = std::move(in);
  t.attributes = std::move(attrs);
  t.rtol = 1e-5;
  t.atol = 1e-5;
  return t;
}

std::string Refusal(const OpTest& t, int64_t opset) {
  auto model = Import(WithOnnxImport(testing::OneNodeModel(t), opset));
  const legalize::Choice c = legalize::ChooseDecomposition(*model->graph->nodes().front(), opset);
  return c.decomposition ? "" : c.reason;
}

TEST(LegalizeOrtContribMisc, PadIsOnnxPad) {
  for (const char* mode : {"constant", "edge", "reflect"}) {
    std::string ops;
    OpTest t = Ms("Pad",
                  {In("x", Rand({3, 4}, 1)), Const("pads", I64({1, 4}, {1, 0, 2, 2})),
                   Const("v", Tensor::FromVector<float>(DataType::kFloat, {1}, {0.5f}))},
                  {Str("mode", mode)});
    EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << mode;
    EXPECT_EQ(ops, "Reshape Reshape Pad");
  }
  OpTest t = Ms("Pad", {In("x", Rand({3, 4}, 1)), Const("pads", I64({4}, {1, 0, 2, 2}))});
  EXPECT_NE(Refusal(t, 10).find("needs ai.onnx opset 11"), std::string::npos) << Refusal(t, 10);
}

TEST(LegalizeOrtContribMisc, ConvTransposeWithDynamicPadsIsConvTranspose) {
  std::string ops;
  OpTest t = Ms("ConvTransposeWithDynamicPads",
                {In("x", Rand({1, 2, 4, 3}, 2)), Const("w", Rand({2, 3, 3, 3}, 3)),
                 Const("pads", I64({4}, {1, 0, 0, 2})), Const("b", Rand({3}, 4))},
                {Ints("strides", {2, 1})});
  t.rtol = t.atol = 1e-4;
  EXPECT_TRUE(DecompositionMatches(t, 17, &ops));
  EXPECT_EQ(ops, "ConvTranspose");
  t.inputs[2] = In("pads", I64({4}, {1, 0, 0, 2}));
  EXPECT_NE(Refusal(t, 17).find("Pads is not a constant"), std::string::npos) << Refusal(t, 17);
}

TEST(LegalizeOrtContribMisc, MatMulInteger16IsCastAndMatMul) {
  std::string ops;
  OpTest t = Ms("MatMulInteger16",
                {In("a", RandInt16({2, 3, 4}, 5, -300, 300)), In("b", RandInt16({4, 5}, 6, -300, 300))});
  EXPECT_TRUE(DecompositionMatches(t, 17, &ops));
  EXPECT_EQ(ops, "Cast Cast MatMul");
  EXPECT_NE(Refusal(t, 8).find("needs ai.onnx opset 9"), std::string::npos) << Refusal(t, 8);
}

TEST(LegalizeOrtContribMisc, NhwcMaxPoolIsTransposedMaxPool) {
  for (DataType dt : {DataType::kInt8, DataType::kUint8}) {
    std::string ops;
    OpTest t = Ms("NhwcMaxPool", {In("x", Rand({2, 5, 6, 3}, 7, dt, 0, 100))},
                  {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 2}), Ints("pads", {1, 0, 1, 1})});
    EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << DataTypeName(dt);
    EXPECT_EQ(ops, "Transpose MaxPool Transpose");
    EXPECT_NE(Refusal(t, 11).find("needs ai.onnx opset 12"), std::string::npos) << Refusal(t, 11);
  }
}

TEST(LegalizeOrtContribMisc, UnfoldTensorIsGatherAndTranspose) {
  for (int64_t dim : {0, 1, -1}) {
    std::string ops;
    OpTest t = Ms("UnfoldTensor", {In("x", Rand({5, 7, 6}, 8))}, {Int("dim", dim), Int("size", 3), Int("step", 2)});
    EXPECT_TRUE(DecompositionMatches(t, 17, &ops)) << dim;
    EXPECT_EQ(ops, "Gather Transpose");
  }
}

// ref without the contrib ops of this group: --legalize must rewrite them to run there at all.
TEST(LegalizeOrtContribMisc, LegalizeRunsTheOpsOnABackendWithoutThem) {
  const char* const kNoContribMisc = EnsureRefWithout(
      "legalize_no_contrib_misc", "com.microsoft",
      {"Pad", "ConvTransposeWithDynamicPads", "MatMulInteger16", "NhwcMaxPool", "UnfoldTensor"});
  std::vector<OpTest> cases = {
      Ms("Pad", {In("x", Rand({3, 4}, 1)), Const("pads", I64({4}, {1, 0, 2, 2}))}, {Str("mode", "reflect")}),
      Ms("ConvTransposeWithDynamicPads",
         {In("x", Rand({1, 2, 3, 3}, 2)), Const("w", Rand({2, 1, 2, 2}, 3)), Const("pads", I64({4}, {1, 1, 0, 0}))}),
      Ms("MatMulInteger16", {In("a", RandInt16({3, 4}, 5, -100, 100)), In("b", RandInt16({4, 2}, 6, -100, 100))}),
      Ms("NhwcMaxPool", {In("x", Rand({1, 4, 4, 2}, 7, DataType::kInt8, -100, 100))}, {Ints("kernel_shape", {2, 2})}),
      Ms("UnfoldTensor", {In("x", Rand({4, 6}, 8))}, {Int("size", 2), Int("step", 2)}),
  };
  for (const OpTest& t : cases) {
    const std::string bytes = WithOnnxImport(testing::OneNodeModel(t), 17);
    const auto feeds = testing::Feeds(t);
    const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
    EXPECT_THROW(SessionOf(bytes, On({kNoContribMisc}, false, false)), std::exception) << t.op;
    const auto got = SessionOf(bytes, On({kNoContribMisc}, true, false))->Run(feeds);
    ASSERT_EQ(got.size(), want.size()) << t.op;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-5, 1e-5)) << t.op;
    }
  }
}

}  // namespace
}  // namespace ferry::legalize_test
