// ONNX Runtime's BiasGelu, FastGelu and BiasAdd (com.microsoft; ref/ort_gelu.cc has the definitions and the checks,
// which these kernels share) on the cpu backend for float32, with AVX-512F, AVX2+FMA and scalar variants registered
// best first. Each row of C elements (C: X's last dim) is one pass over X, the bias (and skip) and Y:
//   BiasGelu   y = Gelu(x + b)       simd_kernels.inc's GeluErfOp (within 4.8e-7 absolute of ref's, documented there)
//   FastGelu   y = GeluTanh(x (+ b)) simd_kernels.inc's GeluTanhOp (likewise)
//   BiasAdd    y = (x + b) + skip    exact (ref's order of operations)
// The scalar variants compute exactly what ref does. Other types are left to ref; QuickGelu is swish.cc's kernel,
// Gelu unary_elementwise.cc's.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/gelu.h"
#include "kernels/ref/ort_gelu.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// y[r * c + j] = f(x[r * c + j] + b[j] (b may be null), s[r * c + j] (s may be null)) over `rows` rows.
using RowsFn = void (*)(const float* x, const float* b, const float* s, float* y, int64_t rows, int64_t c);

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
// The rows, on this ISA's V, Reg and Gelu ops (after simd_kernels.inc).
#include "kernels/cpu/ort_bias_gelu.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
// The rows, on this ISA's V, Reg and Gelu ops (after simd_kernels.inc).
#include "kernels/cpu/ort_bias_gelu.inc"
}  // namespace avx2
#pragma GCC pop_options

namespace scalar {
template <class F>
void Rows(const float* x, const float* b, const float* s, float* y, int64_t rows, int64_t c, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < c; ++j) {
      const int64_t i = r * c + j;
      y[i] = f(b ? x[i] + b[j] : x[i], s ? s[i] : 0.0f);
    }
  }
}
void BiasGelu(const float* x, const float* b, const float* s, float* y, int64_t rows, int64_t c) {
  Rows(x, b, s, y, rows, c, [](float v, float) { return ref::GeluErf(v); });
}
void FastGelu(const float* x, const float* b, const float* s, float* y, int64_t rows, int64_t c) {
  Rows(x, b, s, y, rows, c, [](float v, float) { return ref::GeluTanh(v); });
}
void BiasAdd(const float* x, const float* b, const float* s, float* y, int64_t rows, int64_t c) {
  Rows(x, b, s, y, rows, c, [](float v, float sk) { return v + sk; });
}
}  // namespace scalar

class OrtBiasKernel final : public OpKernel {
 public:
  OrtBiasKernel(ref::OrtBiasOp op, RowsFn fn) : op_(op), fn_(fn) {}

  // ref's checks; float32 only (the registration's type).
  void Prepare(PrepareContext& ctx) const override { ref::PrepareOrtBiasOp(ctx, op_); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* s = op_ == ref::OrtBiasOp::kBiasAdd ? ctx.input(2) : nullptr;
    Tensor& y = ctx.OutputUninitialized(0);
    if (x.size() == 0) return;
    const int64_t c = x.rank() == 0 ? 1 : x.dim(x.rank() - 1), rows = x.size() / c;
    const float* px = x.data<float>();
    const float* pb = b ? b->data<float>() : nullptr;
    const float* ps = s ? s->data<float>() : nullptr;
    float* py = y.data<float>();
    // Whole rows per chunk, about 1 << 14 elements (some 20 flops an element for the Gelus).
    ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, (1 << 14) / c), [&](int64_t r0, int64_t r1) {
      fn_(px + r0 * c, pb, ps ? ps + r0 * c : nullptr, py + r0 * c, r1 - r0, c);
    });
  }

 private:
  ref::OrtBiasOp op_;
  RowsFn fn_;
};

}  // namespace

void RegisterOrtBiasGeluKernels(KernelRegistry& r) {
  struct Row {
    const char* op;
    const char* lower;
    ref::OrtBiasOp kind;
    RowsFn avx512, avx2, scalar;
  };
  const Row rows[] = {
      {"BiasGelu", "ms_bias_gelu", ref::OrtBiasOp::kBiasGelu, &avx512::BiasGelu, &avx2::BiasGelu, &scalar::BiasGelu},
      {"FastGelu", "ms_fast_gelu", ref::OrtBiasOp::kFastGelu, &avx512::FastGelu, &avx2::FastGelu, &scalar::FastGelu},
      {"BiasAdd", "ms_bias_add", ref::OrtBiasOp::kBiasAdd, &avx512::BiasAdd, &avx2::BiasAdd, &scalar::BiasAdd},
  };
  for (const Row& row : rows) {
    auto def = [&](const std::string& impl, IsaSet isa, RowsFn fn) {
      const ref::OrtBiasOp kind = row.kind;
      r.Add({.op = row.op,
             .domain = "com.microsoft",
             .since = 1,
             .types = {{"T", {DataType::kFloat}}},
             .create = [kind, fn](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
               return std::make_unique<OrtBiasKernel>(kind, fn);
             },
             .isa = isa,
             .name = "cpu.f32_" + std::string(row.lower) + "__" + impl + ".1"});
    };
    def("avx512", {Isa::kAvx512f}, row.avx512);
    def("avx2", {Isa::kAvx2, Isa::kFma}, row.avx2);
    def("scalar", {}, row.scalar);
  }
}

}  // namespace ferry::cpu
