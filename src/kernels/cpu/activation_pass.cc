// See activation_pass.h.
#include "kernels/cpu/activation_pass.h"

#include <dnnl.hpp>

#include "core/parallel.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/simd_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

// oneDNN's ISA values are masks, a wider one holding the narrower's bits.
bool Holds(dnnl::cpu_isa isa, dnnl::cpu_isa part) {
  return (static_cast<unsigned>(isa) & static_cast<unsigned>(part)) == static_cast<unsigned>(part);
}

// Elements per thread chunk: the sigmoid is some 20 vector operations per vector.
constexpr int64_t kGrain = 1 << 14;

}  // namespace

ActivationPass ActivationPass::For(const FusedActivation& act) {
  ActivationPass p;
  if (act.kind != FusedActivation::Kind::kSilu) return p;
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (Holds(isa, dnnl::cpu_isa::avx512_core)) {
    p.fn_ = &avx512::Unary<avx512::SiluOp>;
  } else if (Holds(isa, dnnl::cpu_isa::avx2)) {
    p.fn_ = &avx2::Unary<avx2::SiluOp>;
  }
  return p;
}

void ActivationPass::Run(float* y, int64_t n, int threads) const {
  ParallelFor(threads, n, kGrain, [&](int64_t begin, int64_t end) { fn_(y + begin, y + begin, end - begin, params_); });
}

}  // namespace ferry::cpu
