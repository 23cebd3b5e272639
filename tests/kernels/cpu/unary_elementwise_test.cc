// The cpu unary float32 kernels against ref: every ISA variant (chosen with --isa and proven by the placed kernel's
// name), every op and attribute path (LeakyRelu alpha, Clip attributes and optional inputs, Gelu none/tanh), sizes
// that leave SIMD tails, empty tensors, edge values, threads 1 and 2.
// The same for HardSigmoid HardSwish ThresholdedRelu Softsign Reciprocal Floor Ceil Round Sign Elu Selu Celu Log
// Softplus Mish Sin Cos Tan Asin Acos Atan (all three variants; the trigonometric ones are unary_trig.cc) and Sinh
// Cosh Asinh Acosh Atanh (scalar only: their kernel under every --isa is the scalar one), with their attributes
// (alpha, beta, gamma) picked at random.
// Tolerances: Relu LeakyRelu Clip Neg Abs Sqrt and the piecewise-linear / rational / rounding ops are exact (zero
// tolerance); the scalar variants compute exactly what ref does, so they are exact too; the vectorized Exp Sigmoid
// Tanh Erf Gelu Elu Selu Celu Log Softplus Mish Sin Cos Tan Asin Acos Atan are polynomial approximations held to
// rtol 2e-6 / atol 1e-6 (measured: <= 3 ulp, Mish 6, see simd_kernels.inc and unary_trig_test.cc), including a
// sweep over the whole float32 range (every 4096th bit pattern: NaNs, infinities, denormals, the overflow and
// saturation thresholds), which every op (the exact ones at zero tolerance) runs.
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

struct UnaryOp {
  const char* op;
  const char* name;  // in the kernel name
  int since;         // first opset of the kernel
  bool exact;
  double lo = -10, hi = 10;  // the range of random inputs
  bool vector = true;        // false: the scalar variant only (under every --isa)
};

const UnaryOp kOps[] = {
    {"Relu", "relu", 6, true},          {"LeakyRelu", "leaky_relu", 6, true},
    {"Clip", "clip", 6, true},          {"Clip", "clip", 11, true},
    {"Neg", "neg", 6, true},            {"Abs", "abs", 6, true},
    {"Sqrt", "sqrt", 6, true, -1, 100}, {"Exp", "exp", 6, false, -100, 100},
    {"Sigmoid", "sigmoid", 6, false},   {"Tanh", "tanh", 6, false},
    {"Erf", "erf", 9, false, -5, 5},    {"Gelu", "gelu", 20, false},
    {"HardSigmoid", "hard_sigmoid", 6, true},
    {"HardSwish", "hard_swish", 14, true},
    {"ThresholdedRelu", "thresholded_relu", 10, true},
    {"Softsign", "softsign", 1, true},
    {"Reciprocal", "reciprocal", 6, true},
    {"Floor", "floor", 6, true},
    {"Ceil", "ceil", 6, true},
    {"Round", "round", 11, true},
    {"Sign", "sign", 9, true},
    {"Elu", "elu", 6, false},
    {"Selu", "selu", 6, false},
    {"Celu", "celu", 12, false},
    {"Softplus", "softplus", 1, false, -100, 100},
    {"Mish", "mish", 18, false, -30, 30},
    {"Log", "log", 6, false, -1, 100},
    {"Sin", "sin", 7, false, -100, 100},
    {"Cos", "cos", 7, false, -100, 100},
    {"Tan", "tan", 7, false, -10, 10},
    {"Asin", "asin", 7, false, -1.2, 1.2},
    {"Acos", "acos", 7, false, -1.2, 1.2},
    {"Atan", "atan", 7, false, -100, 100},
    {"Sinh", "sinh", 9, true, -100, 100, false},
    {"Cosh", "cosh", 9, true, -100, 100, false},
    {"Asinh", "asinh", 9, true, -100, 100, false},
    {"Acosh", "acosh", 9, true, 0.5, 100, false},
    {"Atanh", "atanh", 9, true, -1.2, 1.2, false},
};

// The ops added with the activations and math ops (all but the first 12 of kOps).
bool IsNewOp(const UnaryOp& u) { return &u >= &kOps[12]; }

std::string KernelName(const UnaryOp& u, const EwVariant& v) {
  return std::string("cpu.f32_") + u.name + "__" + (u.vector ? v.impl : "scalar") + "." + std::to_string(u.since);
}

Shape RandomShape(std::mt19937& rng, int i) {
  static const int64_t kSizes[] = {1, 7, 8, 15, 16, 17, 31, 33, 1023};
  if (i % 11 == 10) return {EwPick(rng, 0, 3), 0};  // empty
  Shape s(static_cast<size_t>(EwPick(rng, 0, 3)));
  for (auto& d : s) d = EwPick(rng, 1, 3);
  s.push_back(kSizes[EwPick(rng, 0, 8)]);
  return s;
}

Tensor Scalar(float v) { return Tensor::FromVector<float>(DataType::kFloat, {}, {v}); }

// A random test of `u` on `x`: the opset (any the kernel covers) and attributes / extra inputs picked at random.
OpTest MakeTest(const UnaryOp& u, const EwVariant& v, Tensor x, std::mt19937& rng, int threads) {
  OpTest t{.op = u.op, .inputs = {In("x", std::move(x))}, .threads = threads};
  const std::string op = u.op;
  if (op == "Relu") t.opset = std::vector<int64_t>{6, 13, 14}[EwPick(rng, 0, 2)];
  if (op == "LeakyRelu") {
    t.opset = EwPick(rng, 0, 1) ? 6 : 16;
    const float alphas[] = {0.01f, 0.1f, -2.0f, 0.0f, 3.5f};
    const int k = static_cast<int>(EwPick(rng, 0, 5));
    if (k < 5) t.attributes.push_back(Float("alpha", alphas[k]));  // k == 5: the default
  }
  if (op == "Clip" && u.since == 6) {
    t.opset = EwPick(rng, 0, 1) ? 6 : 10;
    if (EwPick(rng, 0, 3)) t.attributes.push_back(Float("min", static_cast<float>(EwPick(rng, -5, 2))));
    if (EwPick(rng, 0, 3)) t.attributes.push_back(Float("max", static_cast<float>(EwPick(rng, -2, 5))));
  }
  if (op == "Clip" && u.since == 11) {
    t.opset = std::vector<int64_t>{11, 12, 13, 17}[EwPick(rng, 0, 3)];
    // min and max: omitted, a graph input or a constant; min > max happens (everything becomes max).
    auto bound = [&](const char* name, float value) {
      switch (EwPick(rng, 0, 3)) {
        case 0: t.inputs.push_back(Omitted()); break;
        case 1: t.inputs.push_back(In(name, Scalar(value))); break;
        case 2: t.inputs.push_back(Const(name, Scalar(value))); break;
        default: t.inputs.push_back(In(name, Tensor::FromVector<float>(DataType::kFloat, {1}, {value})));
      }
    };
    bound("min", static_cast<float>(EwPick(rng, -5, 2)));
    bound("max", static_cast<float>(EwPick(rng, -2, 5)));
    if (t.inputs.back().name.empty()) t.inputs.pop_back();  // a trailing omitted input is simply absent
  }
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Exp" || op == "Sigmoid" || op == "Tanh") {
    t.opset = EwPick(rng, 0, 1) ? 6 : 13;
  }
  if (op == "Erf") t.opset = EwPick(rng, 0, 1) ? 9 : 13;
  if (op == "Gelu") {
    t.opset = 20;
    const int k = static_cast<int>(EwPick(rng, 0, 2));
    if (k < 2) t.attributes.push_back(Str("approximate", k ? "tanh" : "none"));
  }
  if (IsNewOp(u)) {
    t.opset = EwPick(rng, 0, 1) ? u.since : 21;
    auto maybe = [&](const char* name, std::vector<float> values) {  // one of `values`, or the default
      const int k = static_cast<int>(EwPick(rng, 0, static_cast<int64_t>(values.size())));
      if (k < static_cast<int>(values.size())) t.attributes.push_back(Float(name, values[static_cast<size_t>(k)]));
    };
    if (op == "HardSigmoid") {
      maybe("alpha", {0.2f, 1.0f / 6, -0.5f, 0.0f, 3.0f});
      maybe("beta", {0.5f, 0.0f, -1.0f, 2.0f});
    }
    if (op == "ThresholdedRelu") maybe("alpha", {1.0f, 0.0f, -2.0f, 3.5f});
    if (op == "Elu") maybe("alpha", {1.0f, 0.5f, -2.0f, 0.0f});
    if (op == "Celu") maybe("alpha", {1.0f, 0.1f, 2.5f, -1.5f});
    if (op == "Selu") {
      maybe("alpha", {1.0f, 2.0f, 0.25f});
      maybe("gamma", {1.0f, 3.0f, 0.5f});
    }
  }
  const bool exact = u.exact || std::string(v.impl) == "scalar";
  t.rtol = exact ? 0 : 2e-6;
  t.atol = exact ? 0 : 1e-6;
  return t;
}

void CheckRandom(const EwVariant& v, uint32_t seed) {
  std::mt19937 rng(seed);
  for (const UnaryOp& u : kOps) {
    for (int i = 0; i < 33; ++i) {
      const Shape shape = RandomShape(rng, i);
      OpTest t = MakeTest(u, v, RandomTensor(DataType::kFloat, shape, rng, u.lo, u.hi, true), rng, 1 + i % 2);
      SCOPED_TRACE(std::string(u.op) + "-" + std::to_string(t.opset) + " on " + ShapeToString(shape) +
                   ", threads " + std::to_string(t.threads));
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelName(u, v)));
    }
    // Over the threading threshold, with 2 threads.
    OpTest big = MakeTest(u, v, RandomTensor(DataType::kFloat, {3, 70001}, rng, u.lo, u.hi, true), rng, 2);
    SCOPED_TRACE(std::string(u.op) + " on [3,70001], threads 2");
    EXPECT_TRUE(MatchesRefWithKernel(big, v.isa, KernelName(u, v)));
  }
}

// Every 4096th float32 bit pattern (offset so both signs, NaN payloads, infinities, denormals and the
// neighbourhood of 1 all occur), then a dense sweep of [-12, 12] where the approximations switch branches.
Tensor Sweep() {
  const int64_t kCoarse = int64_t{1} << 20, kDense = int64_t{1} << 18;
  Tensor t(DataType::kFloat, {kCoarse + kDense + 8});
  float* p = t.data<float>();
  for (int64_t i = 0; i < kCoarse; ++i) {
    const uint32_t bits = static_cast<uint32_t>(i * 4096 + 1237);
    std::memcpy(&p[i], &bits, sizeof bits);
  }
  for (int64_t i = 0; i < kDense; ++i) p[kCoarse + i] = -12.0f + 24.0f * static_cast<float>(i) / kDense;
  const float special[] = {88.72283172607421875f, 88.72283935546875f, -103.97f, -87.33f, 9.02f, -9.02f, 4.0f, -0.0f};
  std::memcpy(&p[kCoarse + kDense], special, sizeof special);
  return t;
}

void CheckSweep(const EwVariant& v) {
  const Tensor x = Sweep();
  std::mt19937 rng(9);
  for (const UnaryOp& u : kOps) {
    if (u.exact && !IsNewOp(u)) continue;
    for (const char* approximate : {"none", "tanh"}) {
      if (std::string(u.op) != "Gelu" && std::string(approximate) == "tanh") continue;
      OpTest t = MakeTest(u, v, x, rng, 2);
      t.attributes.clear();
      if (std::string(u.op) == "Gelu") t.attributes.push_back(Str("approximate", approximate));
      SCOPED_TRACE(std::string(u.op) + " sweep, approximate=" + approximate);
      EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, KernelName(u, v)));
    }
  }
}

TEST(CpuUnaryElementwise, Avx512MatchesRef) {
  if (!EwHostHas(kEwAvx512)) GTEST_SKIP() << "this CPU lacks avx512f";
  CheckRandom(kEwAvx512, 1);
}

TEST(CpuUnaryElementwise, Avx2MatchesRef) {
  if (!EwHostHas(kEwAvx2)) GTEST_SKIP() << "this CPU lacks avx2,fma";
  CheckRandom(kEwAvx2, 2);
}

TEST(CpuUnaryElementwise, ScalarMatchesRefExactly) { CheckRandom(kEwScalar, 3); }

TEST(CpuUnaryAccuracy, Avx512WholeRange) {
  if (!EwHostHas(kEwAvx512)) GTEST_SKIP() << "this CPU lacks avx512f";
  CheckSweep(kEwAvx512);
}

TEST(CpuUnaryAccuracy, Avx2WholeRange) {
  if (!EwHostHas(kEwAvx2)) GTEST_SKIP() << "this CPU lacks avx2,fma";
  CheckSweep(kEwAvx2);
}

TEST(CpuUnaryAccuracy, ScalarWholeRangeExactly) { CheckSweep(kEwScalar); }

TEST(CpuUnaryElementwise, EdgeValuesExactlyAsRef) {
  // Exact where ref is exact, whatever the variant: NaN through Relu (-> 0, as ref) and Clip (stays NaN), the
  // limits of Sigmoid, Tanh, Erf and Exp. The new ops also see halves (Round: half to even), small integers and
  // HardSwish's breakpoints ±3; their NaN, ±inf and ±0 results are exact, and so is every result of the exact ones;
  // the approximations' other finite results are held to rtol 2e-6 / atol 1e-6.
  const float inf = INFINITY, nan = NAN;
  const std::vector<float> limits = {nan, inf, -inf, 0.0f, -0.0f, 1e-40f, -1e-40f, 1e30f, -1e30f, 100.0f, -100.0f};
  std::vector<float> more = limits;
  for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 1.0f, -1.0f, 3.0f, -3.0f, 6.0f, 1e-7f, -1e-7f}) {
    more.push_back(v);
  }
  struct Case {
    std::string op;
    bool exact;
    const std::vector<float>* values;
  };
  std::vector<Case> cases;
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Clip"}) cases.push_back({op, true, &limits});
  for (const UnaryOp& u : kOps) {
    if (IsNewOp(u)) cases.push_back({u.op, u.exact, &more});
  }
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    for (const Case& c : cases) {
      const std::vector<float>& values = *c.values;
      const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(values.size())}, values);
      OpTest t{.op = c.op, .opset = 18, .inputs = {In("x", x)}, .rtol = 0, .atol = 0};
      if (c.op == "Clip") {
        t.inputs.push_back(Const("min", Scalar(-1)));
        t.inputs.push_back(Const("max", Scalar(1)));
      }
      auto session = EwSession(t, {"cpu"}, true, 1, v.isa);
      const Tensor y = session->Run(Feeds(t))[0].second;
      const Tensor want = RunOn(t, {"ref"}, true, 1)[0].second;
      const std::string kernel = session->placement().nodes[0].kernel;
      const bool exact = c.exact || kernel.find("__scalar") != std::string::npos;
      SCOPED_TRACE(c.op + " on " + kernel);
      for (size_t i = 0; i < values.size(); ++i) {
        const float g = y.data<float>()[i], w = want.data<float>()[i];
        if (std::fabs(w) < 1e-30f && std::fabs(g) < 1e-30f) continue;  // both (nearly) zero: denormal outputs
        const bool close = !exact && std::isfinite(w) && std::fabs(g - w) <= 1e-6 + 2e-6 * std::fabs(w);
        EXPECT_TRUE((std::isnan(g) && std::isnan(w)) || g == w || close)
            << "x=" << values[i] << ": got " << g << ", want " << w;
      }
    }
  }
}

TEST(CpuUnaryElementwise, ClipBoundsMustBeScalars) {
  // A non-scalar min is an InvalidArgumentError at run time, on cpu as on ref.
  std::mt19937 rng(10);
  OpTest t{.op = "Clip",
           .opset = 13,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {5}, rng)),
                      In("min", Tensor::FromVector<float>(DataType::kFloat, {2}, {0, 1}))}};
  for (const std::string backend : {"ref", "cpu"}) {
    auto session = EwSession(t, {backend}, true, 1);
    try {
      session->Run(Feeds(t));
      ADD_FAILURE() << backend << ": expected an error";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("must be a scalar"), std::string::npos) << e.what();
    }
  }
}

TEST(CpuUnaryElementwise, GeluRejectsAnUnknownApproximation) {
  std::mt19937 rng(11);
  OpTest t{.op = "Gelu",
           .opset = 20,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {5}, rng))},
           .attributes = {Str("approximate", "erf")}};
  for (const std::string backend : {"ref", "cpu"}) {
    try {
      EwSession(t, {backend}, true, 1)->Run(Feeds(t));
      ADD_FAILURE() << backend << ": expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel) << backend << ": " << e.what();
    }
  }
}

TEST(CpuUnaryElementwise, CeluRejectsAZeroAlpha) {
  std::mt19937 rng(13);
  OpTest t{.op = "Celu",
           .opset = 12,
           .inputs = {In("x", RandomTensor(DataType::kFloat, {5}, rng))},
           .attributes = {Float("alpha", 0.0f)}};
  for (const std::string backend : {"ref", "cpu"}) {
    try {
      EwSession(t, {backend}, true, 1)->Run(Feeds(t));
      ADD_FAILURE() << backend << ": expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.category(), ErrorCategory::kInvalidModel) << backend << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos) << e.what();
    }
  }
}

TEST(CpuUnaryElementwise, RefusesWhatItDoesNotImplement) {
  std::mt19937 rng(12);
  // Opsets before 6 (consumed_inputs) are left to ref.
  ExpectRefusedAndFallsBack({.op = "Relu", .opset = 1, .inputs = {In("x", RandomTensor(DataType::kFloat, {4}, rng))}},
                              "not opset 1");
  ExpectRefusedAndFallsBack(
      {.op = "HardSigmoid", .opset = 1, .inputs = {In("x", RandomTensor(DataType::kFloat, {4}, rng))}}, "not opset 1");
  ExpectRefusedAndFallsBack(
      {.op = "Sin", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}}, "float64");
  // Types other than float32.
  ExpectRefusedAndFallsBack(
      {.op = "Tanh", .opset = 13, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}}, "float64");
  ExpectRefusedAndFallsBack(
      {.op = "Relu", .opset = 14, .inputs = {In("x", RandomTensor(DataType::kInt32, {4}, rng, -5, 5))}}, "int32");
}

}  // namespace
}  // namespace ferry::testing
