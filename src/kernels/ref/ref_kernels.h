// The reference backend's kernel list (ref_kernels.cc): the `ref` backend (src/backends/ref/) registers it.
// Kernels never include a backend's header; a backend includes its kernel list's.
#pragma once

#include "kernels/registry.h"

namespace ferry::ref {
// Registers every reference kernel into `registry`.
void RegisterRefKernels(KernelRegistry& registry);
}  // namespace ferry::ref
