// Swish (opset 24): y = x * sigmoid(alpha x) on the cpu backend for float32, with AVX-512F, AVX2+FMA and scalar
// variants registered best first. The vector variants evaluate ref's expression with simd_kernels.inc's Sigmoid
// (<= 2 ulp against glibc, documented there), so they match ref within the harness tolerance; the scalar variant
// computes exactly what ref does (ref::SwishValue). NaN stays NaN; Swish(-inf) is NaN for alpha > 0 as in ref
// (-inf * 0). Other float types are left to ref.
#include <cstdint>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise_rules.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
struct SwishOp {
  Reg alpha;
  explicit SwishOp(const simd::UnaryParams& p) : alpha(V::Set1(p.alpha)) {}
  Reg operator()(Reg x) const { return V::Mul(x, Sigmoid(V::Mul(alpha, x))); }
};
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
struct SwishOp {
  Reg alpha;
  explicit SwishOp(const simd::UnaryParams& p) : alpha(V::Set1(p.alpha)) {}
  Reg operator()(Reg x) const { return V::Mul(x, Sigmoid(V::Mul(alpha, x))); }
};
}  // namespace avx2
#pragma GCC pop_options

void SwishScalar(const float* x, float* y, int64_t n, const simd::UnaryParams& p) {
  for (int64_t i = 0; i < n; ++i) y[i] = ref::SwishValue(x[i], p.alpha);
}

using SwishFn = void (*)(const float* x, float* y, int64_t n, const simd::UnaryParams& p);

// Elements per thread chunk: about 20 flops an element.
constexpr int64_t kGrain = 1 << 14;

class SwishKernel final : public OpKernel {
 public:
  SwishKernel(SwishFn fn, float alpha) : fn_(fn) { params_.alpha = alpha; }

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
    ParallelFor(ctx.threads(), x.size(), kGrain, [&](int64_t s, int64_t e) { fn_(px + s, py + s, e - s, params_); });
  }

 private:
  SwishFn fn_;
  simd::UnaryParams params_;
};

}  // namespace

void RegisterSwishKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, SwishFn fn) {
    r.Add({.op = "Swish",
           .since = 24,
           .types = {{"T", {DataType::kFloat}}},
           .create = [fn](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<SwishKernel>(fn, node.GetFloat("alpha", 1.0f));
           },
           .isa = isa,
           .name = "cpu.f32_swish__" + impl + ".24"});
  };
  def("avx512", {Isa::kAvx512f}, &avx512::Unary<avx512::SwishOp>);
  def("avx2", {Isa::kAvx2, Isa::kFma}, &avx2::Unary<avx2::SwishOp>);
  def("scalar", {}, &SwishScalar);
}

// com.microsoft::QuickGelu (ONNX Runtime's): x * sigmoid(alpha x) with alpha 1.702 by default, Swish itself.
void RegisterQuickGeluKernels(KernelRegistry& r) {
  auto def = [&](const std::string& impl, IsaSet isa, SwishFn fn) {
    r.Add({.op = "QuickGelu",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [fn](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<SwishKernel>(fn, node.GetFloat("alpha", 1.702f));
           },
           .isa = isa,
           .name = "cpu.f32_ms_quick_gelu__" + impl + ".1"});
  };
  def("avx512", {Isa::kAvx512f}, &avx512::Unary<avx512::SwishOp>);
  def("avx2", {Isa::kAvx2, Isa::kFma}, &avx2::Unary<avx2::SwishOp>);
  def("scalar", {}, &SwishScalar);
}

}  // namespace ferry::cpu
