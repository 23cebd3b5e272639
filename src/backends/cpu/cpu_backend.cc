#include "backends/cpu/cpu_backend.h"

namespace ferry {

CpuBackend::CpuBackend() : registry_("cpu") { cpu::RegisterCpuKernels(registry_); }

int CpuBackend::channel_block(const Target& target) const {
  if (target.isa.contains(IsaSet{Isa::kAvx512f})) return 16;
  if (target.isa.contains(IsaSet{Isa::kAvx2, Isa::kFma})) return 8;
  return 0;
}

}  // namespace ferry
