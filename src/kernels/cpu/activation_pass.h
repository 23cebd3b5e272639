// A fused activation that a oneDNN-backed kernel applies itself, in one vectorized pass over its result after the
// primitive ran, instead of as oneDNN's eltwise post-op: where oneDNN 2.6's injector is the slower of the two.
// Today that is SiLU (x * sigmoid(x), eltwise_swish): the injector's division-based logistic cost EfficientNet-B0's
// convolutions 1.5 of 6.2 ms, more than a separate pass over every output with simd_kernels.inc's Sigmoid
// (docs/performance.md, "Kernel design measurements", activation_pass.cc). The other activations stay post-ops:
// Gelu as a pass was 0-5% slower on ViT-B/32, GPT-2-mini and ConvNeXt-T; the rest were not measured. The pass runs
// with the widest vectors oneDNN's own code uses in this process (dnnl::get_effective_cpu_isa: AVX-512 or
// AVX2+FMA; below AVX2 the post-op stays), so a kernel never executes wider instructions than its library does.
#pragma once

#include <cstdint>

#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/simd_common.h"

namespace ferry::cpu {

class ActivationPass {
 public:
  ActivationPass() = default;

  // The pass that replaces `act`'s post-op, or an empty one (keep the post-op: another activation, or oneDNN's
  // code is below AVX2). Call where the kernel's primitives are made (it reads oneDNN's ISA).
  static ActivationPass For(const FusedActivation& act);

  explicit operator bool() const { return fn_ != nullptr; }

  // y[i] = act(y[i]) for i in [0, n), split over `threads` threads. Keeps 0 at 0 (a blocked Y's padding).
  void Run(float* y, int64_t n, int threads) const;

 private:
  using Fn = void (*)(const float* x, float* y, int64_t n, const simd::UnaryParams& params);
  Fn fn_ = nullptr;
  simd::UnaryParams params_;
};

}  // namespace ferry::cpu
