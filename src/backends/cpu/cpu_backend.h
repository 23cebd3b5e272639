// The fast CPU backend: oneDNN primitives for the heavy ops (convolution, matmul, pooling, normalization) and
// Ferry's own vectorized kernels for elementwise and data-movement ops, with the ISA chosen once per KernelDef.
// Ops it does not cover fall back to `ref` through the partitioner (`--backends cpu,ref`, the default order).
#pragma once

#include "backends/backend.h"
#include "kernels/cpu/cpu_kernels.h"

namespace ferry {

class CpuBackend : public Backend {
 public:
  CpuBackend();
  const std::string& name() const override { return name_; }
  std::string device() const override { return std::string(kHostDevice); }
  const KernelRegistry& kernels() const override { return registry_; }
  // nChw16c on AVX-512 and nChw8c on AVX2: oneDNN 2.6's jit convolutions' layouts (and the only one its Winograd
  // kernels take). Against channels-last (NHWC, oneDNN's brgemm convolutions), with the Winograd 3x3 layers, whole
  // models ran faster on it: ResNet-50 (batch 1 and 8), MobileNet-V2 and EfficientNet-B0 (figures:
  // docs/performance.md, "Kernel design measurements", cpu_backend.h).
  std::optional<int> activation_block(const Target& target) const override;

 private:
  std::string name_ = "cpu";
  KernelRegistry registry_;
};

}  // namespace ferry
