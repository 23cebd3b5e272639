// Float32 Sin Cos Tan Asin Acos Atan (opset 7+) on the cpu backend: AVX-512F and AVX2+FMA variants (unary_trig.inc:
// Cody-Waite reduction by pi/2 and Cephes polynomials; Sin Cos Tan lanes beyond |x| = 65536, infinite or NaN go
// through glibc) and a scalar variant that calls glibc exactly as ref does, registered best first and threaded with
// ParallelFor. Measured error against glibc (what ref calls): <= 3 ulp for every op (see
// tests/kernels/cpu/unary_trig_test.cc); ±0 and denormals keep their value and sign where glibc does, NaN stays NaN,
// ±inf -> NaN (Sin Cos Tan), ±pi/2 (Atan), |x| > 1 -> NaN (Asin Acos).
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/unary_trig.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/unary_trig.inc"
}  // namespace avx2
#pragma GCC pop_options

using TrigFn = void (*)(const float* x, float* y, int64_t n, const simd::UnaryParams& params);

// The scalar variant: glibc's float functions, as ref calls them.
template <float (*F)(float)>
void ScalarRow(const float* x, float* y, int64_t n, const simd::UnaryParams&) {
  for (int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}
float LibmSin(float x) { return std::sin(x); }
float LibmCos(float x) { return std::cos(x); }
float LibmTan(float x) { return std::tan(x); }
float LibmAsin(float x) { return std::asin(x); }
float LibmAcos(float x) { return std::acos(x); }
float LibmAtan(float x) { return std::atan(x); }

// Elements per thread chunk (~30-40 flops an element).
constexpr int64_t kTrigGrain = 1 << 14;

class TrigKernel final : public OpKernel {
 public:
  explicit TrigKernel(TrigFn fn) : fn_(fn) {}

  // X must be float32; Y has its shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + ": expected float32");
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const simd::UnaryParams p{};
    ParallelFor(ctx.threads(), x.size(), kTrigGrain, [&](int64_t s, int64_t e) { fn_(px + s, py + s, e - s, p); });
  }

 private:
  TrigFn fn_;
};

// One op's three variants, best first.
void AddTrig(KernelRegistry& r, const std::string& op, const std::string& lower, TrigFn avx512, TrigFn avx2,
             TrigFn scalar) {
  auto def = [&](const std::string& impl, IsaSet isa, TrigFn fn) {
    r.Add({.op = op,
           .since = 7,
           .until = kOpsetOpen,
           .types = {{"T", {DataType::kFloat}}},
           .create = [fn](const ir::Node&, const KernelOptions&) { return std::make_unique<TrigKernel>(fn); },
           .isa = isa,
           .name = "cpu.f32_" + lower + "__" + impl + ".7"});
  };
  def("avx512", {Isa::kAvx512f}, avx512);
  def("avx2", {Isa::kAvx2, Isa::kFma}, avx2);
  def("scalar", {}, scalar);
}

}  // namespace

void RegisterUnaryTrigKernels(KernelRegistry& r) {
  AddTrig(r, "Sin", "sin", &avx512::SinRow, &avx2::SinRow, &ScalarRow<LibmSin>);
  AddTrig(r, "Cos", "cos", &avx512::CosRow, &avx2::CosRow, &ScalarRow<LibmCos>);
  AddTrig(r, "Tan", "tan", &avx512::TanRow, &avx2::TanRow, &ScalarRow<LibmTan>);
  AddTrig(r, "Asin", "asin", &avx512::AsinRow, &avx2::AsinRow, &ScalarRow<LibmAsin>);
  AddTrig(r, "Acos", "acos", &avx512::AcosRow, &avx2::AcosRow, &ScalarRow<LibmAcos>);
  AddTrig(r, "Atan", "atan", &avx512::AtanRow, &avx2::AtanRow, &ScalarRow<LibmAtan>);
}

}  // namespace ferry::cpu
