// See recurrent_gemv.h.
#include "kernels/cpu/recurrent_gemv.h"

#include <algorithm>

#include "core/parallel.h"
#include "kernels/cpu/simd_common.h"

namespace ferry::cpu::recurrent {
namespace {

constexpr int kRegs = 4;  // vector registers per panel row: a panel is kRegs * V::kWidth columns

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {
using V = simd::F32x16;
#include "kernels/cpu/recurrent_gemv_kernels.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
using V = simd::F32x8;
#include "kernels/cpu/recurrent_gemv_kernels.inc"
}  // namespace avx2
#pragma GCC pop_options

constexpr int64_t kAvx512Width = kRegs * simd::F32x16::kWidth, kAvx2Width = kRegs * simd::F32x8::kWidth;

}  // namespace

Panels PackPanels(Simd simd, const float* b, int64_t ldb, int64_t k, int64_t n) {
  Panels p;
  p.k = k;
  p.n = n;
  p.width = simd == Simd::kAvx512 ? kAvx512Width : simd == Simd::kAvx2 ? kAvx2Width : 0;
  if (p.width == 0) return p;
  p.data.assign(static_cast<size_t>(p.count() * k * p.width), 0.0f);
  for (int64_t q = 0; q < p.count(); ++q) {
    const int64_t c0 = q * p.width, cols = std::min(p.width, n - c0);
    float* out = p.data.data() + q * k * p.width;
    for (int64_t kk = 0; kk < k; ++kk) std::copy_n(b + kk * ldb + c0, cols, out + kk * p.width);
  }
  return p;
}

bool SmallGemm(int threads, int64_t m, const float* a, int64_t lda, const Panels& p, bool reverse, float beta,
               float* c, int64_t ldc) {
  const auto range = p.width == kAvx512Width ? &avx512::PanelRange
                     : p.width == kAvx2Width  ? &avx2::PanelRange
                                              : nullptr;
  if (!range || m < 1 || m > kMaxSmallRows || p.k < 1) return false;
  // About 64K multiply-adds per chunk before a second thread pays for its fork.
  const int64_t per_panel = std::max<int64_t>(1, m * p.k * p.width);
  const int64_t grain = std::max<int64_t>(1, 65536 / per_panel);
  ParallelFor(threads, p.count(), grain,
              [&](int64_t p0, int64_t p1) { range(m, a, lda, p, p0, p1, reverse, beta, c, ldc); });
  return true;
}

}  // namespace ferry::cpu::recurrent
