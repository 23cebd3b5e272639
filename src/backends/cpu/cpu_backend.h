// The fast CPU backend: oneDNN primitives for the heavy ops (convolution, matmul, pooling, normalization) and
// Ferry's own vectorized kernels for elementwise and data-movement ops, with the ISA chosen once per KernelDef.
// Ops it does not cover fall back to `ref` through the partitioner (`--backends cpu,ref`, the default order).
#pragma once

#include "backends/backend.h"

namespace ferry {
namespace cpu {
// The one list of `cpu` kernels (src/kernels/cpu/cpu_kernels.cc).
void RegisterCpuKernels(KernelRegistry& registry);
}  // namespace cpu

class CpuBackend : public Backend {
 public:
  CpuBackend();
  const std::string& name() const override { return name_; }
  std::string device() const override { return std::string(kHostDevice); }
  const KernelRegistry& kernels() const override { return registry_; }
  // Channels-last (NHWC) on AVX-512: oneDNN 2.6's brgemm convolutions, 1.5-6x faster there than its nChw16c ones
  // on MobileNet / ResNet layers (docs/performance.md); nChw8c on AVX2, where its jit convolutions want that.
  std::optional<int> activation_block(const Target& target) const override;

 private:
  std::string name_ = "cpu";
  KernelRegistry registry_;
};

}  // namespace ferry
