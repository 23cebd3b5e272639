#include "backends/cpu/cpu_backend.h"

namespace ferry {

CpuBackend::CpuBackend() : registry_("cpu") { cpu::RegisterCpuKernels(registry_); }

std::optional<int> CpuBackend::activation_block(const Target& target) const {
  if (target.isa.contains(IsaSet{Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl})) return 16;
  if (target.isa.contains(IsaSet{Isa::kAvx2, Isa::kFma})) return 8;
  return std::nullopt;
}

}  // namespace ferry
