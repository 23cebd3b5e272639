#include "backends/cpu/cpu_backend.h"

namespace ferry {

CpuBackend::CpuBackend() : registry_("cpu") { cpu::RegisterCpuKernels(registry_); }

}  // namespace ferry
