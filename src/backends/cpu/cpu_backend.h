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
  // oneDNN's convolutions are fastest in nChw16c on AVX-512 and nChw8c on AVX2 (its own choice for `any`).
  int channel_block(const Target& target) const override;

 private:
  std::string name_ = "cpu";
  KernelRegistry registry_;
};

}  // namespace ferry
