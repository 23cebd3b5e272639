// ONNX Runtime's contrib tensor ops (com.microsoft, group "tensor"): GridSample, Inverse, Trilu, Range, Unique,
// ExpandDims, CDist, WordConvEmbedding. The cpu kernels against ref (the cross-backend harness, fallback
// forbidden), hand-computed values on both backends, and the errors of bad inputs. ONNX Runtime itself is the
// oracle of tests/python/test_ort_contrib_tensor.py.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/onnx_import.h"
#include "kernels/cpu/elementwise_test_util.h"
#include "runtime/type_inference.h"
#include "testing/op_harness.h"

namespace ferry {
namespace {

using testing::Const;
using testing::In;
using testing::Int;
using testing::MatchesRef;
using testing::OpTest;
using testing::RandomTensor;
using testing::RunOn;
using testing::Str;

OpTest Ms(std::string op, std::vector<testing::OpInput> inputs, std::vector<onnx::AttributeProto> attrs = {}) {
  OpTest t;
  t.op = std::move(op);
  t.domain = "com.microsoft";
  t.opset = 1;
  t.inputs = std::move(inputs);
  t.attributes = std::move(attrs);
  return t;
}

Tensor Floats(Shape shape, std::vector<float> v) {
  Tensor t(DataType::kFloat, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

template <typename T>
Tensor Scalar(DataType dt, T v) {
  Tensor t(dt, {});
  t.data<T>()[0] = v;
  return t;
}

Tensor Int32s(Shape shape, std::vector<int32_t> v) {
  Tensor t(DataType::kInt32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<int32_t>()[i] = v[i];
  return t;
}

// Output `i` of `t` on `backend` (strict) as floats.
std::vector<double> Values(const OpTest& t, const std::string& backend, size_t i = 0) {
  const auto out = RunOn(t, {backend}, true, 1);
  std::vector<double> v;
  for (int64_t k = 0; k < out[i].second.size(); ++k) v.push_back(testing::ElementAsDouble(out[i].second, k));
  return v;
}

void ExpectValues(const OpTest& t, const std::vector<double>& want, size_t output = 0, double tol = 1e-6) {
  for (const char* backend : {"ref", "cpu"}) {
    const std::vector<double> got = Values(t, backend, output);
    ASSERT_EQ(got.size(), want.size()) << t.op << " on " << backend;
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_NEAR(got[k], want[k], tol) << t.op << " on " << backend << " @" << k;
  }
}

// Session creation on `backend` fails with a message containing `what`.
void ExpectError(const OpTest& t, const std::string& backend, const std::string& what) {
  try {
    RunOn(t, {backend}, true, 1);
    ADD_FAILURE() << t.op << ": expected an error containing '" << what << "' on " << backend;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// ---- GridSample ----

TEST(OrtContribTensor, GridSampleMatchesRef) {
  std::mt19937 rng(1);
  for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
    for (const char* padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        for (int64_t channels : {3, 16}) {
          OpTest t = Ms("GridSample",
                        {In("x", RandomTensor(DataType::kFloat, {2, channels, 5, 7}, rng)),
                         In("g", RandomTensor(DataType::kFloat, {2, 6, 9, 2}, rng, -2.5, 2.5))},
                        {Str("mode", mode), Str("padding_mode", padding), Int("align_corners", align)});
          t.threads = 2;
          EXPECT_TRUE(MatchesRef(t, "cpu")) << mode << " " << padding << " " << align << " C=" << channels;
        }
      }
    }
  }
}

TEST(OrtContribTensor, GridSampleOfDoublesFallsBackToRef) {
  std::mt19937 rng(7);
  testing::ExpectRefusedAndFallsBack(Ms("GridSample", {In("x", RandomTensor(DataType::kDouble, {1, 2, 3, 3}, rng)),
                                                       In("g", RandomTensor(DataType::kDouble, {1, 2, 2, 2}, rng))}),
                                     "supports T1 in {float32}");
}

TEST(OrtContribTensor, GridSampleHandValues) {
  // The centre of a 2x2 image (bilinear, align_corners 0) is the mean of its pixels.
  ExpectValues(Ms("GridSample", {In("x", Floats({1, 1, 2, 2}, {1, 2, 3, 4})), In("g", Floats({1, 1, 1, 2}, {0, 0}))}),
               {2.5});
  // Bicubic with border padding pads the taps only (ONNX Runtime's rule): the row [0, 1, 2, 3] sampled at grid
  // x = -1.5 (align_corners 1: pixel -0.75) takes taps -2, -1, 0, 1 -> pixels 0, 0, 0, 1 with the cubic weights of
  // t = 0.25, where clamping the coordinate first (ONNX's GridSample) would give pixel 0's value, 0.
  const double t = 0.25, a = -0.75;
  const double w3 = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;  // the weight of tap 1
  ExpectValues(Ms("GridSample", {In("x", Floats({1, 1, 1, 4}, {0, 1, 2, 3})), In("g", Floats({1, 1, 1, 2}, {-1.5, 0}))},
                  {Str("mode", "bicubic"), Str("padding_mode", "border"), Int("align_corners", 1)}),
               {w3 * 1.0}, 0, 1e-6);
}

// ---- Inverse ----

TEST(OrtContribTensor, InverseMatchesRefAndHandValue) {
  ExpectValues(Ms("Inverse", {In("x", Floats({2, 2}, {4, 7, 2, 6}))}), {0.6, -0.7, -0.2, 0.4});
  // A permutation: pivoting is needed (zero diagonal), the inverse is the transpose.
  ExpectValues(Ms("Inverse", {In("x", Floats({3, 3}, {0, 0, 1, 1, 0, 0, 0, 1, 0}))}), {0, 1, 0, 0, 0, 1, 1, 0, 0});
  std::mt19937 rng(2);
  for (DataType dt : {DataType::kFloat, DataType::kDouble, DataType::kFloat16}) {
    for (const Shape& shape : std::vector<Shape>{{5, 5}, {3, 2, 4, 4}, {2, 80, 80}, {7, 1, 1}, {0, 3, 3}}) {
      Tensor x = RandomTensor(DataType::kDouble, shape, rng);
      const int64_t n = shape.back();
      for (int64_t k = 0; k < x.size(); ++k) {
        if (n > 0 && (k % (n * n)) % (n + 1) == 0) x.data<double>()[k] += 2.0 * static_cast<double>(n);
      }
      Tensor xt(dt, shape);
      for (int64_t k = 0; k < x.size(); ++k) {
        const double v = x.data<double>()[k];
        if (dt == DataType::kFloat) xt.data<float>()[k] = static_cast<float>(v);
        if (dt == DataType::kDouble) xt.data<double>()[k] = v;
        if (dt == DataType::kFloat16) xt.data<Float16>()[k] = Float16(static_cast<float>(v));
      }
      OpTest t = Ms("Inverse", {In("x", xt)});
      t.threads = 3;
      t.rtol = dt == DataType::kDouble ? 1e-12 : dt == DataType::kFloat ? 1e-5 : 2e-3;
      t.atol = dt == DataType::kDouble ? 1e-14 : dt == DataType::kFloat ? 1e-6 : 1e-4;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << DataTypeName(dt) << " " << ShapeToString(shape);
    }
  }
}

TEST(OrtContribTensor, InverseRefusesNonSquareMatrices) {
  for (const char* backend : {"ref", "cpu"}) {
    ExpectError(Ms("Inverse", {In("x", Floats({2, 3}, {1, 2, 3, 4, 5, 6}))}), backend,
                "input 'X' must be [*, M, M] (square matrices, rank >= 2)");
  }
}

// ---- Trilu, Range, Unique, ExpandDims (the ONNX ops' kernels) ----

TEST(OrtContribTensor, TriluRangeUniqueExpandDims) {
  Tensor k = Scalar<int64_t>(DataType::kInt64, -1);
  ExpectValues(Ms("Trilu", {In("x", Floats({2, 2}, {1, 2, 3, 4}))}), {1, 2, 0, 4});
  ExpectValues(Ms("Trilu", {In("x", Floats({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})), Const("k", k)}, {Int("upper", 0)}),
               {0, 0, 0, 4, 0, 0, 7, 8, 0});
  std::mt19937 rng(3);
  OpTest trilu = Ms("Trilu", {In("x", RandomTensor(DataType::kInt32, {3, 7, 9}, rng, -50, 50)), In("k", k)});
  EXPECT_TRUE(MatchesRef(trilu, "cpu"));

  // Range without delta counts by 1; with constant and run-time bounds.
  ExpectValues(
      Ms("Range", {In("s", Scalar<int32_t>(DataType::kInt32, 2)), In("l", Scalar<int32_t>(DataType::kInt32, 5))}),
      {2, 3, 4});
  ExpectValues(
      Ms("Range", {Const("s", Scalar<float>(DataType::kFloat, 1.0f)), Const("l", Scalar<float>(DataType::kFloat, 0.0f)),
                   Const("d", Scalar<float>(DataType::kFloat, -0.25f))}),
      {1.0, 0.75, 0.5, 0.25});
  ExpectValues(
      Ms("Range", {In("s", Scalar<int64_t>(DataType::kInt64, 7)), In("l", Scalar<int64_t>(DataType::kInt64, 3))}), {});

  // Unique: order of first appearance; idx the inverse indices; counts.
  OpTest unique = Ms("Unique", {In("x", Floats({6}, {2, 1, 1, 3, 2, 2}))});
  unique.num_outputs = 3;
  ExpectValues(unique, {2, 1, 3}, 0);
  ExpectValues(unique, {0, 1, 1, 2, 0, 0}, 1);
  ExpectValues(unique, {3, 2, 1}, 2);
  // Every NaN is its own value (ONNX Runtime's hash map).
  OpTest nans = Ms("Unique", {In("x", Floats({4}, {NAN, 1, NAN, 1}))});
  nans.num_outputs = 3;
  ExpectValues(nans, {0, 1, 2, 1}, 1);
  ExpectValues(nans, {1, 2, 1}, 2);

  // ExpandDims: a view of X with a 1 inserted.
  for (const auto& [axis, want] :
       std::vector<std::pair<int32_t, Shape>>{{0, {1, 2, 3}}, {-1, {2, 3, 1}}, {1, {2, 1, 3}}, {-3, {1, 2, 3}}}) {
    for (const char* backend : {"ref", "cpu"}) {
      for (bool constant : {true, false}) {
        Tensor a = Scalar<int32_t>(DataType::kInt32, axis);
        OpTest t = Ms("ExpandDims",
                      {In("x", Floats({2, 3}, {1, 2, 3, 4, 5, 6})), constant ? Const("a", a) : In("a", a)});
        const auto out = RunOn(t, {backend}, true, 1);
        EXPECT_EQ(out[0].second.shape(), want) << axis << " on " << backend;
        EXPECT_EQ(out[0].second.data<float>()[5], 6.0f);
      }
    }
  }
}

// The cpu kernel's hash table against ref's sort: every output bit for bit, edge values (NaN: one entry each; -0 and
// +0: one), small and large inputs, and strings (ref's kernel under a cpu name).
TEST(OrtContribTensor, UniqueMatchesRef) {
  std::mt19937 rng(8);
  for (DataType dt : {DataType::kFloat, DataType::kDouble, DataType::kFloat16, DataType::kInt32, DataType::kInt64,
                      DataType::kInt8, DataType::kUint8, DataType::kBool}) {
    for (int64_t n : {0, 1, 17, 5000}) {
      const bool edges = dt == DataType::kFloat || dt == DataType::kDouble;
      OpTest t = Ms("Unique", {In("x", RandomTensor(dt, {n}, rng, -20, 20, edges))});
      t.num_outputs = 3;
      t.rtol = t.atol = 0;
      EXPECT_TRUE(MatchesRef(t, "cpu")) << DataTypeName(dt) << " n=" << n;
    }
  }
  Tensor strings(DataType::kString, {5});
  const char* words[] = {"b", "a", "b", "", "a"};
  for (int i = 0; i < 5; ++i) strings.strings()[i] = words[i];
  OpTest t = Ms("Unique", {In("x", strings)});
  t.num_outputs = 3;
  const auto got = RunOn(t, {"cpu"}, true, 1);
  ASSERT_EQ(got[0].second.size(), 3);
  EXPECT_EQ(got[0].second.strings()[2], "");
  EXPECT_EQ(got[1].second.data<int64_t>()[4], 1);
}

TEST(OrtContribTensor, DataMovementErrors) {
  for (const char* backend : {"ref", "cpu"}) {
    // A constant axis out of range is shape inference's error; a run-time one the kernel's, when it runs.
    ExpectError(Ms("ExpandDims", {In("x", Floats({2, 3}, {})), Const("a", Scalar<int32_t>(DataType::kInt32, 3))}),
                backend, "axis 3 is out of range for rank 3");
    ExpectError(Ms("ExpandDims", {In("x", Floats({2, 3}, {})), In("a", Scalar<int32_t>(DataType::kInt32, -4))}),
                backend, "input 'axis'");
    ExpectError(Ms("ExpandDims", {In("x", Floats({2, 3}, {})), Const("a", Int32s({1}, {0}))}), backend,
                "input 'axis' must be a scalar int32");
    OpTest unique = Ms("Unique", {In("x", Floats({2, 2}, {1, 2, 3, 4}))});
    unique.num_outputs = 3;
    ExpectError(unique, backend, "input 'x' must be 1-D");
  }
}

// ---- CDist ----

TEST(OrtContribTensor, CDistMatchesRefAndHandValues) {
  ExpectValues(Ms("CDist", {In("a", Floats({2, 2}, {0, 0, 3, 4})), In("b", Floats({1, 2}, {0, 0}))}), {0, 25});
  ExpectValues(Ms("CDist", {In("a", Floats({2, 2}, {0, 0, 3, 4})), In("b", Floats({2, 2}, {0, 0, 3, 0}))},
                  {Str("metric", "euclidean")}),
               {0, 3, 5, 4});
  std::mt19937 rng(4);
  for (DataType dt : {DataType::kFloat, DataType::kDouble}) {
    for (const char* metric : {"sqeuclidean", "euclidean"}) {
      for (const auto& [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {7, 5, 3}, {64, 130, 33}, {1, 300, 8}, {0, 4, 3}, {3, 2, 0}}) {
        OpTest t = Ms("CDist", {In("a", RandomTensor(dt, {m, n}, rng)), In("b", RandomTensor(dt, {k, n}, rng))},
                      {Str("metric", metric)});
        t.threads = 2;
        // The product form's cancellation: ~eps * (||a||^2 + ||b||^2), magnified by the square root.
        t.rtol = dt == DataType::kFloat ? 1e-4 : 1e-10;
        t.atol = dt == DataType::kFloat ? 1e-4 : 1e-10;
        EXPECT_TRUE(MatchesRef(t, "cpu")) << DataTypeName(dt) << " " << metric << " " << m << "x" << k << "x" << n;
      }
    }
  }
}

TEST(OrtContribTensor, CDistRefusesUnknownMetricAndMismatchedColumns) {
  for (const char* backend : {"ref", "cpu"}) {
    ExpectError(Ms("CDist", {In("a", Floats({1, 2}, {})), In("b", Floats({1, 2}, {}))}, {Str("metric", "cosine")}),
                backend, "attribute metric = 'cosine' is not supported");
    ExpectError(Ms("CDist", {In("a", Floats({1, 2}, {})), In("b", Floats({1, 3}, {}))}), backend,
                "differ in their column count");  // shape inference's check
  }
}

// ---- WordConvEmbedding ----

TEST(OrtContribTensor, WordConvEmbeddingHandValues) {
  // One filter over windows of 1 character of a 1-wide embedding: y = max over the word's characters of
  // tanh(C[id]); a word starting with 0 has length 0 and gives 0.
  OpTest t = Ms("WordConvEmbedding",
                {In("seq", Int32s({3, 3}, {1, 2, 0, 0, 2, 2, 2, 0, 1})), Const("w", Floats({1, 1, 1, 1}, {1})),
                 Const("b", Floats({1}, {0.25f})), Const("c", Floats({3, 1}, {-1, 0.5f, 1}))});
  // Word 2 [2, 0, 1]: length 2 (ids > 0), so characters 0 and 1 are looked up: 2 and the 0 (row 0 of C).
  ExpectValues(t, {std::tanh(1.25), 0.0, std::tanh(1.25)});
}

TEST(OrtContribTensor, WordConvEmbeddingShapeInference) {
  OpTest t = Ms("WordConvEmbedding",
                {In("seq", Int32s({3, 4}, {})), Const("w", Tensor(DataType::kFloat, {5, 1, 2, 6})),
                 Const("b", Tensor(DataType::kFloat, {5})), Const("c", Tensor(DataType::kFloat, {9, 6}))});
  const std::string bytes = testing::OneNodeModel(t);
  auto model = ir::ImportModelFromBytes(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  runtime::InferTypes(*model);
  const ir::TypeInfo& y = model->graph->nodes().front()->output(0)->type();
  EXPECT_EQ(y.ToString(), "float32[3,5]");
}

TEST(OrtContribTensor, WordConvEmbeddingMatchesRef) {
  std::mt19937 rng(5);
  for (const auto& [words, len, filters, window, dim] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>>{
           {9, 10, 6, 3, 5}, {50, 16, 40, 5, 24}, {4, 3, 2, 3, 2}, {1, 1, 1, 1, 1}}) {
    Tensor seq = RandomTensor(DataType::kInt32, {words, len}, rng, 0.5, 29.4);
    for (int64_t s = 0; s < words; ++s) {
      for (int64_t c = 0; c < len; ++c) {
        if (c > s % (len + 1)) seq.data<int32_t>()[s * len + c] = 0;  // words of every length, 1 to len
      }
      if (s % 5 == 4) seq.data<int32_t>()[s * len] = 0;  // a first id 0: length 0, a row of zeros
    }
    OpTest t = Ms("WordConvEmbedding",
                  {In("seq", seq), Const("w", RandomTensor(DataType::kFloat, {filters, 1, window, dim}, rng)),
                   Const("b", RandomTensor(DataType::kFloat, {filters}, rng)),
                   Const("c", RandomTensor(DataType::kFloat, {30, dim}, rng))},
                  {Int("conv_window_size", window)});
    t.threads = 2;
    t.rtol = 1e-5;
    t.atol = 1e-6;
    EXPECT_TRUE(MatchesRef(t, "cpu")) << words << "x" << len << " M=" << filters << " w=" << window;
  }
}

TEST(OrtContribTensor, WordConvEmbeddingErrors) {
  const auto inputs = [](Tensor seq, Shape w_shape) {
    return std::vector<testing::OpInput>{In("seq", std::move(seq)), Const("w", Tensor(DataType::kFloat, w_shape)),
                                         Const("b", Tensor(DataType::kFloat, {w_shape[0]})),
                                         Const("c", Tensor(DataType::kFloat, {4, w_shape[3]}))};
  };
  for (const char* backend : {"ref", "cpu"}) {
    ExpectError(Ms("WordConvEmbedding", inputs(Int32s({2, 2}, {1, 1, 1, 1}), {3, 1, 3, 2})), backend,
                "the convolution window (W's dim 2) must be in [1, the word length]");
    ExpectError(Ms("WordConvEmbedding", inputs(Int32s({2, 2}, {1, 1, 1, 1}), {3, 1, 2, 2}), {Int("embedding_size", 4)}),
                backend, "attribute embedding_size = 4 does not match W's dim 0");
    // An id past C's rows, in the looked-up characters: the run's data error.
    ExpectError(Ms("WordConvEmbedding", inputs(Int32s({1, 3}, {1, 9, 0}), {3, 1, 2, 2})), backend,
                "Sequence[0, 1] = 9 is not a row of C [4, 2]");
  }
}

// Each ISA variant of the cpu kernels with one (cpu.com.microsoft.<...>__<impl>.1) under the --isa that selects it
// (AVX-512: WordConvEmbedding only; the others have AVX2 and baseline variants).
TEST(OrtContribTensor, EveryVariantMatchesRef) {
  std::mt19937 rng(6);
  int tested = 0;
  for (const testing::EwVariant& v : {testing::kEwAvx512, testing::kEwAvx2, testing::kEwScalar}) {
    if (!testing::EwHostHas(v)) continue;
    const std::string impl = v.impl;
    ++tested;
    // WordConvEmbedding: the tanh of each ISA.
    Tensor seq = RandomTensor(DataType::kInt32, {7, 6}, rng, 0.5, 9.4);
    seq.data<int32_t>()[6 * 2 + 3] = 0;
    OpTest w = Ms("WordConvEmbedding", {In("seq", seq), Const("w", RandomTensor(DataType::kFloat, {19, 1, 2, 3}, rng)),
                                        Const("b", RandomTensor(DataType::kFloat, {19}, rng)),
                                        Const("c", RandomTensor(DataType::kFloat, {10, 3}, rng))});
    w.rtol = 1e-5;
    w.atol = 1e-6;
    EXPECT_TRUE(testing::MatchesRefWithKernel(w, v.isa, "cpu.com.microsoft.f32_wordconvembedding__" + impl + ".1"));
    if (impl == "avx512") continue;
    // Inverse: 11 matrices of 3 rows (fixed size; with AVX2 across the lanes, the last group partial) and 20 rows.
    for (DataType dt : {DataType::kFloat, DataType::kDouble}) {
      for (const Shape& shape : std::vector<Shape>{{11, 3, 3}, {3, 20, 20}}) {
        Tensor x(dt, shape);
        const int64_t n = shape.back();
        for (int64_t k = 0; k < x.size(); ++k) {
          const double d = std::uniform_real_distribution<double>(-1, 1)(rng) + ((k % (n * n)) % (n + 1) == 0 ? n : 0);
          if (dt == DataType::kFloat) x.data<float>()[k] = static_cast<float>(d);
          if (dt == DataType::kDouble) x.data<double>()[k] = d;
        }
        OpTest t = Ms("Inverse", {In("x", x)});
        t.rtol = dt == DataType::kFloat ? 1e-5 : 1e-12;
        t.atol = dt == DataType::kFloat ? 1e-6 : 1e-14;
        const std::string kernel = "cpu.com.microsoft.f16_f32_f64_inverse__" + impl + ".1";
        EXPECT_TRUE(testing::MatchesRefWithKernel(t, v.isa, kernel)) << kernel << " " << ShapeToString(shape);
      }
    }
    // CDist in double (the variants' own product) and float; 13 rows and 11 columns: partial 6 x 8 blocks.
    for (DataType dt : {DataType::kDouble, DataType::kFloat}) {
      OpTest t = Ms("CDist", {In("a", RandomTensor(dt, {13, 6}, rng)), In("b", RandomTensor(dt, {11, 6}, rng))});
      t.rtol = t.atol = dt == DataType::kFloat ? 1e-4 : 1e-10;
      const std::string kernel = "cpu.com.microsoft.f32_f64_cdist__" + std::string(impl == "scalar" ? "gemm" : "avx2") +
                                 ".1";
      EXPECT_TRUE(testing::MatchesRefWithKernel(t, v.isa, kernel)) << kernel;
    }
    // GridSample, with the taps-only padding of the contrib op.
    OpTest g = Ms("GridSample",
                  {In("x", RandomTensor(DataType::kFloat, {1, 9, 4, 5}, rng)),
                   In("g", RandomTensor(DataType::kFloat, {1, 3, 7, 2}, rng, -3, 3))},
                  {Str("mode", "bicubic"), Str("padding_mode", "reflection")});
    EXPECT_TRUE(testing::MatchesRefWithKernel(g, v.isa, "cpu.com.microsoft.f32_gridsample__" + impl + ".1"));
  }
  EXPECT_GT(tested, 0);
}

}  // namespace
}  // namespace ferry
