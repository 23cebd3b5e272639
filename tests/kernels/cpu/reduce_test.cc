// The cpu Reduce* kernels against ref: random ranks, axes (negative too, empty = all), keepdims 0/1, every axes path
// (the attribute before opset 13 / 18, a constant input, a runtime input, omitted), int32/int64, edge values for the
// extrema, NaN/±inf for the sums, the fast shapes (global pooling over H,W, the last axis, a middle axis), empty
// tensors, noop_with_empty_axes, threads 1/2, Prepare errors and the dtypes they refuse.
#include "kernels/cpu/conv_test_util.h"

namespace ferry::testing {
namespace {

Tensor Int64s(const std::vector<int64_t>& v) {
  Tensor t(DataType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

struct OpInfo {
  const char* name;
  int axes_input_since;
  bool ints;  // int32/int64 supported on cpu
};

const OpInfo kOps[] = {
    {"ReduceSum", 13, true},   {"ReduceMean", 18, true},       {"ReduceProd", 18, true},
    {"ReduceMax", 18, true},   {"ReduceMin", 18, true},        {"ReduceL1", 18, true},
    {"ReduceL2", 18, false},   {"ReduceLogSum", 18, false},    {"ReduceLogSumExp", 18, false},
    {"ReduceSumSquare", 18, true},
};

// Values each op is checked on: products near 1 (no underflow), positive sums for LogSum.
void Range(const std::string& op, double& lo, double& hi) {
  lo = -1, hi = 1;
  if (op == "ReduceProd") lo = 0.8, hi = 1.25;
  if (op == "ReduceLogSum") lo = 0.05, hi = 1;
}

// A Reduce* test of `op` at `opset` over x with `axes` (nullopt-like: `has_axes` false omits them); `axes_mode`:
// 0 constant input, 1 runtime graph input (when the opset takes the input).
OpTest MakeCase(const OpInfo& op, int64_t opset, Tensor x, bool has_axes, const std::vector<int64_t>& axes,
                int64_t keepdims, int axes_mode, int threads) {
  OpTest t{.op = op.name, .opset = opset, .inputs = {In("x", std::move(x))}, .rtol = 1e-4, .atol = 1e-5,
           .threads = threads};
  // Float sums accumulate in float (ref: double): thousands of terms of magnitude 1 round to ~1e-5 apart.
  const std::string name = op.name;
  if (name == "ReduceSum" || name == "ReduceL1" || name == "ReduceSumSquare") t.atol = 1e-4;
  t.attributes.push_back(Int("keepdims", keepdims));
  if (opset >= op.axes_input_since) {
    if (has_axes) t.inputs.push_back(axes_mode == 0 ? Const("axes", Int64s(axes)) : In("axes", Int64s(axes)));
  } else if (has_axes) {
    t.attributes.push_back(Ints("axes", axes));
  }
  return t;
}

std::string Describe(const OpTest& t, const std::vector<int64_t>& axes) {
  std::string s = t.op + "-" + std::to_string(t.opset) + " x" + ShapeToString(t.inputs[0].value.shape()) + " " +
                  std::string(DataTypeName(t.inputs[0].value.dtype())) + " axes [";
  for (int64_t a : axes) s += std::to_string(a) + ",";
  return s + "] inputs " + std::to_string(t.inputs.size()) + " threads " + std::to_string(t.threads);
}

TEST(CpuReduce, RandomConfigurationsMatchRef) {
  std::mt19937 rng(1818);
  const int64_t opsets[] = {11, 13, 18, 20};
  for (int i = 0; i < 40; ++i) {
    for (const OpInfo& op : kOps) {
      const int64_t opset = opsets[Pick(rng, 0, 3)];
      if (opset == 20 && std::string(op.name) != "ReduceMax" && std::string(op.name) != "ReduceMin") continue;
      const int64_t rank = Pick(rng, 1, 4);
      Shape xs;
      for (int64_t d = 0; d < rank; ++d) xs.push_back(Pick(rng, 1, rank <= 2 ? 40 : 9));
      std::vector<int64_t> axes;
      for (int64_t d = 0; d < rank; ++d) {
        if (Pick(rng, 0, 2) == 0) axes.push_back(Pick(rng, 0, 1) ? d : d - rank);
      }
      const bool has_axes = !axes.empty() || Pick(rng, 0, 1);
      DataType dt = DataType::kFloat;
      if (op.ints && i % 4 == 3) dt = i % 8 == 3 ? DataType::kInt32 : DataType::kInt64;
      double lo, hi;
      Range(op.name, lo, hi);
      if (dt != DataType::kFloat) lo = std::string(op.name) == "ReduceProd" ? -3 : -50, hi = -lo;
      const bool extremum = std::string(op.name) == "ReduceMax" || std::string(op.name) == "ReduceMin";
      OpTest t = MakeCase(op, opset, RandomTensor(dt, xs, rng, lo, hi, extremum && i % 3 == 0), has_axes, axes,
                          Pick(rng, 0, 1), static_cast<int>(Pick(rng, 0, 1)), 1 + i % 2);
      EXPECT_TRUE(MatchesRef(t, "cpu")) << "case " << i << ": " << Describe(t, axes);
    }
  }
}

TEST(CpuReduce, FastShapesMatchRef) {
  std::mt19937 rng(56);
  const struct {
    Shape x;
    std::vector<int64_t> axes;
  } cases[] = {
      {{2, 64, 56, 56}, {2, 3}},   // global pooling (SE blocks)
      {{4, 33, 1000}, {-1}},       // the last axis (LayerNorm-like)
      {{3, 200, 77}, {1}},         // a middle axis: columns kept
      {{1000, 37}, {0}},           // the first axis
      {{5, 6, 7, 8}, {0, 2}},      // non-contiguous axes, innermost kept
      {{5, 6, 7, 8}, {1, 3}},      // non-contiguous axes, innermost reduced
      {{2, 3, 4100}, {0, 1}},      // columns wider than one block
  };
  for (const auto& c : cases) {
    for (const OpInfo& op : kOps) {
      for (int threads : {1, 2}) {
        double lo, hi;
        Range(op.name, lo, hi);
        if (std::string(op.name) == "ReduceProd") lo = 0.99, hi = 1.01;
        OpTest t = MakeCase(op, 18, RandomTensor(DataType::kFloat, c.x, rng, lo, hi), true, c.axes, 1, 0, threads);
        if (std::string(op.name) == "ReduceProd") t.rtol = 1e-3;
        EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t, c.axes);
      }
    }
  }
}

TEST(CpuReduce, NanAndInfinityPropagate) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows of 40 (vector and scalar tail lanes): NaN, +inf, -inf, +inf with -inf, all -inf, finite, in each spot.
  Tensor x(DataType::kFloat, {12, 40});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(0.1f, 1.0f);
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = dist(rng);
  float* p = x.data<float>();
  p[0 * 40 + 3] = nan;
  p[1 * 40 + 39] = nan;
  p[2 * 40 + 5] = inf;
  p[3 * 40 + 38] = -inf;
  p[4 * 40 + 1] = inf;
  p[4 * 40 + 20] = -inf;
  for (int64_t j = 0; j < 40; ++j) p[5 * 40 + j] = -inf;
  p[6 * 40 + 0] = inf;
  p[6 * 40 + 33] = nan;
  for (const OpInfo& op : kOps) {
    for (int64_t axis : {0, 1}) {
      OpTest t = MakeCase(op, 18, x, true, {axis}, 0, 0, 1);
      EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t, {axis});
    }
  }
}

TEST(CpuReduce, EmptyTensorsAndEmptyAxes) {
  std::mt19937 rng(0);
  for (const OpInfo& op : kOps) {
    for (const Shape& xs : {Shape{2, 0, 3}, Shape{0, 4}, Shape{3, 4}, Shape{}}) {
      const int64_t rank = static_cast<int64_t>(xs.size());
      for (const std::vector<int64_t>& axes :
           {std::vector<int64_t>{}, rank > 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{}}) {
        for (int64_t keepdims : {0, 1}) {
          OpTest t = MakeCase(op, 18, RandomTensor(DataType::kFloat, xs, rng, 0.1, 1), !axes.empty(), axes,
                              keepdims, 0, 2);
          EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t, axes) << " keepdims " << keepdims;
          if (op.axes_input_since <= 18) {  // noop_with_empty_axes: an identity without axes
            t.attributes.push_back(Int("noop_with_empty_axes", 1));
            EXPECT_TRUE(MatchesRef(t, "cpu")) << Describe(t, axes) << " noop";
          }
        }
      }
    }
  }
  // An omitted axes input with noop_with_empty_axes and an explicit empty list both reduce nothing.
  OpTest t{.op = "ReduceSum", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kFloat, {3, 5}, rng)),
                                                       Const("axes", Tensor(DataType::kInt64, {0}))}};
  t.attributes = {Int("noop_with_empty_axes", 1)};
  EXPECT_TRUE(MatchesRef(t, "cpu"));
}

TEST(CpuReduce, IntegerShapeArithmeticMatchesRef) {
  // Shape subgraphs: products and sums of dims, extrema of int64 vectors.
  Tensor dims = Int64s({1, 3, 224, 224});
  for (const char* op : {"ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"}) {
    for (int64_t opset : {13, 18}) {
      OpTest t{.op = op, .opset = opset, .inputs = {In("x", dims)}, .attributes = {Int("keepdims", 0)}};
      EXPECT_TRUE(MatchesRef(t, "cpu")) << op << "-" << opset;
    }
  }
  Tensor big(DataType::kInt64, {2, 3});  // wrapping products and sums like ref
  const int64_t v[] = {INT64_MAX, 3, -7, INT64_MIN, 1 << 20, -(1 << 30)};
  std::copy(std::begin(v), std::end(v), big.data<int64_t>());
  for (const char* op : {"ReduceProd", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"}) {
    OpTest t{.op = op, .opset = 18, .inputs = {In("x", big), Const("axes", Int64s({1}))}};
    EXPECT_TRUE(MatchesRef(t, "cpu")) << op;
  }
}

TEST(CpuReduce, PrepareErrorsNameTheNode) {
  std::mt19937 rng(1);
  OpTest bad{.op = "ReduceMean",
             .opset = 18,
             .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3}, rng)), Const("axes", Int64s({2}))}};
  try {
    RunOn(bad, {"cpu"}, true, 1);
    ADD_FAILURE() << "expected an error for axis 2 of a rank-2 input";
  } catch (const Error& e) {  // shape inference refuses it first (InvalidModelError), naming the node
    EXPECT_NE(std::string(e.what()).find("node 'node'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("axis 2"), std::string::npos) << e.what();
  }
  OpTest attr{.op = "ReduceSum",
              .opset = 11,
              .inputs = {In("x", RandomTensor(DataType::kFloat, {2, 3}, rng))},
              .attributes = {Ints("axes", {-3})}};
  EXPECT_THROW(RunOn(attr, {"cpu"}, true, 1), Error);
}

TEST(CpuReduce, RefusedDtypesFallBackToRef) {
  std::mt19937 rng(2);
  OpTest f64{.op = "ReduceSum", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kDouble, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(f64, "supports T in {float32, int32, int64}");
  OpTest l2{.op = "ReduceL2", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kInt64, {2, 3}, rng))}};
  ExpectRefusedAndFallsBack(l2, "supports T in {float32}");
}

}  // namespace
}  // namespace ferry::testing
