// The decompositions of ONNX Runtime's contrib tensor ops (com.microsoft, group "tensor";
// decompose_contrib_tensor.cc): ExpandDims, Trilu, GridSample, Range, Unique, CDist against the ops' ref kernels
// (the decomposed graph run on ref, on cpu,ref and on a backend lacking the ops), the rules' refusals, and
// --legalize on a backend without the contrib kernels.
#include <random>
#include <set>

#include "legalize_test_util.h"

namespace ferry::legalize_test {
namespace {

Tensor Rand(Shape shape, uint32_t seed, double lo = -1, double hi = 1, DataType dt = DataType::kFloat) {
  std::mt19937 rng(seed);
  return testing::RandomTensor(dt, std::move(shape), rng, lo, hi);
}

template <typename T>
Tensor Scalar(DataType dt, T v) {
  Tensor t(dt, {});
  t.data<T>()[0] = v;
  return t;
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

TEST(LegalizeOrtContribTensor, ExpandDimsConstantAndRunTimeAxis) {
  for (int32_t axis : {0, 2, -1, -3}) {
    for (int64_t opset : {9, 13, 17}) {
      std::string ops;
      OpTest t = Ms("ExpandDims", {In("x", Rand({2, 3}, 1)), Const("a", Scalar<int32_t>(DataType::kInt32, axis))});
      EXPECT_TRUE(DecompositionMatches(t, opset, &ops)) << axis << " at opset " << opset;
      EXPECT_EQ(ops, "Unsqueeze");
    }
  }
  std::string ops;
  OpTest run_time = Ms("ExpandDims", {In("x", Rand({2, 3}, 1)), In("a", Scalar<int32_t>(DataType::kInt32, -2))});
  EXPECT_TRUE(DecompositionMatches(run_time, 17, &ops));
  EXPECT_EQ(ops, "Cast Reshape Unsqueeze");
  EXPECT_NE(Refusal(run_time, 12).find("needs ai.onnx opset 13"), std::string::npos) << Refusal(run_time, 12);
}

TEST(LegalizeOrtContribTensor, TriluAndGridSampleAreTheOnnxOps) {
  for (int64_t upper : {0, 1}) {
    std::string ops;
    OpTest t = Ms("Trilu", {In("x", Rand({2, 4, 5}, 2)), Const("k", Scalar<int64_t>(DataType::kInt64, 1))},
                  {Int("upper", upper)});
    EXPECT_TRUE(DecompositionMatches(t, 14, &ops));
    EXPECT_EQ(ops, "Trilu");
  }
  EXPECT_TRUE(DecompositionMatches(Ms("Trilu", {In("x", Rand({3, 3}, 3))}), 17));
  EXPECT_NE(Refusal(Ms("Trilu", {In("x", Rand({3, 3}, 3))}), 13).find("needs ai.onnx opset 14"), std::string::npos);
  // GridSample: nearest and linear pad alike in both ops; zeros padding has one rule for every mode. At opset 20 the
  // modes are renamed.
  for (int64_t opset : {16, 20}) {
    for (const auto& [mode, padding] : std::vector<std::pair<const char*, const char*>>{
             {"bilinear", "zeros"}, {"bilinear", "border"}, {"nearest", "reflection"}, {"bicubic", "zeros"}}) {
      OpTest t = Ms("GridSample", {In("x", Rand({1, 2, 4, 5}, 4)), In("g", Rand({1, 3, 3, 2}, 5, -1.2, 1.2))},
                    {Str("mode", mode), Str("padding_mode", padding), Int("align_corners", 1)});
      EXPECT_TRUE(DecompositionMatches(t, opset)) << mode << " " << padding << " at opset " << opset;
    }
  }
}

TEST(LegalizeOrtContribTensor, RangeWithAndWithoutDelta) {
  std::string ops;
  OpTest no_delta = Ms("Range",
                       {In("s", Scalar<int32_t>(DataType::kInt32, -3)), In("l", Scalar<int32_t>(DataType::kInt32, 4))});
  EXPECT_TRUE(DecompositionMatches(no_delta, 11, &ops));
  EXPECT_EQ(ops, "Range");
  OpTest with_delta = Ms("Range", {In("s", Scalar<float>(DataType::kFloat, 1.0f)),
                                   In("l", Scalar<float>(DataType::kFloat, -2.0f)),
                                   In("d", Scalar<float>(DataType::kFloat, -0.5f))});
  EXPECT_TRUE(DecompositionMatches(with_delta, 17));
  EXPECT_NE(Refusal(no_delta, 10).find("needs ai.onnx opset 11"), std::string::npos);
}

TEST(LegalizeOrtContribTensor, UniqueKeepsOrderOfAppearance) {
  Tensor x(DataType::kFloat, {8});
  const float v[] = {3, 1, 3, 2, 1, -4, 2, 3};
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = v[i];
  OpTest t = Ms("Unique", {In("x", x)});
  t.num_outputs = 3;
  std::string ops;
  EXPECT_TRUE(DecompositionMatches(t, 11, &ops));
  EXPECT_EQ(ops, "Unique");
}

TEST(LegalizeOrtContribTensor, CDistBothMetrics) {
  for (const char* metric : {"sqeuclidean", "euclidean"}) {
    for (DataType dt : {DataType::kFloat, DataType::kDouble}) {
      OpTest t = Ms("CDist", {In("a", Rand({6, 5}, 6, -1, 1, dt)), In("b", Rand({4, 5}, 7, -1, 1, dt))},
                    {Str("metric", metric)});
      t.rtol = 1e-4;
      t.atol = 1e-5;
      for (int64_t opset : {11, 17}) EXPECT_TRUE(DecompositionMatches(t, opset)) << metric << " at " << opset;
    }
  }
  OpTest cosine = Ms("CDist", {In("a", Rand({2, 2}, 1)), In("b", Rand({2, 2}, 2))}, {Str("metric", "cosine")});
  EXPECT_NE(Refusal(cosine, 17).find("metric 'cosine' is unknown"), std::string::npos) << Refusal(cosine, 17);
}

// ref without the contrib ops of this group: --legalize must rewrite them to run there at all.
TEST(LegalizeOrtContribTensor, LegalizeRunsTheOpsOnABackendWithoutThem) {
  const char* const kNoContribTensor = EnsureRefWithout(
      "legalize_no_contrib_tensor", "com.microsoft", {"ExpandDims", "Trilu", "GridSample", "Range", "Unique", "CDist"});
  std::vector<OpTest> cases = {
      Ms("ExpandDims", {In("x", Rand({2, 3}, 1)), Const("a", Scalar<int32_t>(DataType::kInt32, 1))}),
      Ms("Trilu", {In("x", Rand({4, 4}, 2))}, {Int("upper", 0)}),
      Ms("GridSample", {In("x", Rand({1, 1, 3, 3}, 3)), In("g", Rand({1, 2, 2, 2}, 4))}),
      Ms("Range", {In("s", Scalar<int64_t>(DataType::kInt64, 2)), In("l", Scalar<int64_t>(DataType::kInt64, 9))}),
      Ms("CDist", {In("a", Rand({3, 4}, 5)), In("b", Rand({2, 4}, 6))}, {Str("metric", "euclidean")}),
  };
  for (const OpTest& t : cases) {
    const std::string bytes = WithOnnxImport(testing::OneNodeModel(t), 17);
    const auto feeds = testing::Feeds(t);
    const auto want = SessionOf(bytes, On({"ref"}))->Run(feeds);
    EXPECT_THROW(SessionOf(bytes, On({kNoContribTensor}, false, false)), std::exception) << t.op;
    const auto got = SessionOf(bytes, On({kNoContribTensor}, true, false))->Run(feeds);
    ASSERT_EQ(got.size(), want.size()) << t.op;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(testing::TensorsClose(got[i].second, want[i].second, 1e-5, 1e-5)) << t.op;
    }
  }
}

}  // namespace
}  // namespace ferry::legalize_test
