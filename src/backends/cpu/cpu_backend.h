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
  // kernels take). Against channels-last (NHWC, oneDNN's brgemm convolutions), with the Winograd 3x3 layers, the
  // whole model ran 2-4% faster on ResNet-50 (batch 1), 8% at batch 8, 5-7% on MobileNet-V2, 3% on
  // EfficientNet-B0 (paired runs of two sessions alternated in one process, AVX-512 host, 1 thread;
  // docs/performance.md).
  std::optional<int> activation_block(const Target& target) const override;

 private:
  std::string name_ = "cpu";
  KernelRegistry registry_;
};

}  // namespace ferry
