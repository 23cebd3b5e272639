// The `cpu` backend's kernel list (cpu_kernels.cc): the `cpu` backend (src/backends/cpu/) registers it.
// Kernels never include a backend's header; a backend includes its kernel list's.
#pragma once

#include "kernels/registry.h"

namespace ferry::cpu {
// Registers every `cpu` kernel into `registry`.
void RegisterCpuKernels(KernelRegistry& registry);
}  // namespace ferry::cpu
