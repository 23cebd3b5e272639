// The cpu Softmax and LogSoftmax kernels (oneDNN) against ref: random ranks 0-4 and axes (negative too), opset 13
// (one axis) and opsets 1/11 (2-D coercion at `axis`), edge values (NaN, ±inf, huge), rows of odd lengths,
// dynamic shapes run concurrently, empty tensors, and the configurations they refuse.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

TEST(CpuSoftmax, RandomConfigurationsMatchRef) {
  std::mt19937 rng(606);
  const int64_t opsets[] = {13, 13, 11, 1};
  for (int i = 0; i < 60; ++i) {
    const int64_t opset = opsets[i % 4];
    const int64_t rank = Pick(rng, opset == 13 ? 0 : 1, 4);
    Shape xs;
    for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 70 : 9));
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      OpTest t{.op = op,
               .opset = opset,
               .inputs = {In("x", RandomTensor(DataType::kFloat, xs, rng, -8, 8, /*edges=*/i % 5 == 0))},
               .rtol = 1e-5,
               .atol = 1e-6,
               .threads = 1 + i % 2};
      if (rank > 0 && Pick(rng, 0, 3) > 0) {
        const int64_t axis = Pick(rng, -rank, rank - 1);
        t.attributes.push_back(Int("axis", axis));
      }
      EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << op << "-" << opset << " x" << ShapeToString(xs)
                                        << (t.attributes.empty() ? "" : " axis " + std::to_string(t.attributes[0].i()));
    }
  }
}

TEST(CpuSoftmax, LongRowsMatchRef) {
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      // LogSoftmax's max + log(sum) is rounded to float, as in ref; a sum added in another order can round it
      // one ulp of 20 (1.9e-6) apart.
      OpTest t{.op = op,
               .inputs = {In("x", RandomTensor(DataType::kFloat, {3, 17, 1001}, rng, -20, 20))},
               .rtol = 1e-5,
               .atol = std::string(op) == "LogSoftmax" ? 4e-6 : 1e-6,
               .threads = threads};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
      t.attributes = {Int("axis", 1)};  // a strided axis
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op << " axis 1";
    }
  }
}

TEST(CpuSoftmax, DynamicShapesRunConcurrently) {
  std::mt19937 rng(9);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    OpTest t{.op = op,
             .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3, 4}, rng))},
             .attributes = {Int("axis", -2)},
             .rtol = 1e-5,
             .atol = 1e-6,
             .threads = 2};
    std::vector<std::vector<std::pair<std::string, Tensor>>> runs;
    for (Shape s : {Shape{2, 3, 4}, Shape{5, 33, 1}, Shape{1, 7, 9}, Shape{0, 3, 4}}) {
      runs.push_back({{"x", RandomTensor(DataType::kFloat, s, rng)}});
    }
    ExpectDynamicMatchesRef(t, runs, true);
  }
}

TEST(CpuSoftmax, EmptyTensors) {
  std::mt19937 rng(3);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t opset : {11, 13}) {
      OpTest t{.op = op, .opset = opset, .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 0, 3}, rng))}};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op << "-" << opset;
    }
  }
}

TEST(CpuSoftmax, RefusedConfigurationsFallBackToRef) {
  std::mt19937 rng(6);
  OpTest f64{.op = "Softmax", .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32}");
  OpTest f64_log{.op = "LogSoftmax", .opset = 11, .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64_log, "supports T in {float32}");
}

TEST(CpuSoftmax, HalfInputsRunOnCpuInFloat32) {
  // No half kernel: the compute_in_float32 pass feeds the float32 kernel and rounds the result to half once.
  std::mt19937 rng(7);
  for (DataType dt : {DataType::kFloat16, DataType::kBFloat16}) {
    OpTest t{.op = "LogSoftmax", .opset = 13, .inputs = {In("x", RandomTensor(dt, {4, 33}, rng, -4, 4))},
             .rtol = dt == DataType::kFloat16 ? 2e-3 : 1.6e-2, .atol = 1e-3};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << DataTypeName(dt);
  }
}

}  // namespace
}  // namespace ferry::testing
