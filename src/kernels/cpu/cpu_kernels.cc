// The one list of `cpu` kernels. Each Register...Kernels() lives in its op's file in src/kernels/cpu/.
// Kernels with several ISA variants register the best first: the registry takes the first that fits the target.
#include "backends/cpu/cpu_backend.h"

namespace ferry::cpu {

// --- oneDNN: convolution ---
// --- oneDNN: matmul, gemm ---
// --- oneDNN: pooling, normalization, softmax ---
// --- vectorized elementwise ---
// --- vectorized data movement ---

void RegisterCpuKernels(KernelRegistry& r) {
  // --- oneDNN: convolution ---
  // --- oneDNN: matmul, gemm ---
  // --- oneDNN: pooling, normalization, softmax ---
  // --- vectorized elementwise ---
  // --- vectorized data movement ---
  (void)r;
}

}  // namespace ferry::cpu
