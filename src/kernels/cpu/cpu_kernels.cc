// The one list of `cpu` kernels. Each Register...Kernels() lives in its op's file in src/kernels/cpu/.
// Kernels with several ISA variants register the best first: the registry takes the first that fits the target.
#include "kernels/cpu/cpu_kernels.h"

namespace ferry::cpu {

// --- oneDNN: convolution ---
void RegisterConvKernels(KernelRegistry& r);
void RegisterConvTransposeKernels(KernelRegistry& r);
// --- oneDNN: matmul, gemm ---
void RegisterMatMulKernels(KernelRegistry& r);
void RegisterGemmKernels(KernelRegistry& r);
// --- oneDNN: pooling, normalization, softmax ---
void RegisterPoolingKernels(KernelRegistry& r);
void RegisterBatchNormalizationKernels(KernelRegistry& r);
void RegisterSoftmaxKernels(KernelRegistry& r);
void RegisterLayerNormalizationKernels(KernelRegistry& r);
void RegisterRmsNormalizationKernels(KernelRegistry& r);
// --- vectorized elementwise ---
void RegisterBinaryElementwiseKernels(KernelRegistry& r);
void RegisterUnaryElementwiseKernels(KernelRegistry& r);
// --- vectorized data movement ---
void RegisterViewKernels(KernelRegistry& r);
void RegisterTransposeKernels(KernelRegistry& r);
void RegisterConcatKernels(KernelRegistry& r);
void RegisterGatherKernels(KernelRegistry& r);
void RegisterSliceKernels(KernelRegistry& r);
void RegisterWhereKernels(KernelRegistry& r);
void RegisterCastKernels(KernelRegistry& r);
void RegisterExpandKernels(KernelRegistry& r);
void RegisterPadKernels(KernelRegistry& r);
// --- ai.ferry (optimizer-produced ops) ---
void RegisterFusedConvKernels(KernelRegistry& r);
void RegisterBlockedLayoutKernels(KernelRegistry& r);
void RegisterBlockedPoolKernels(KernelRegistry& r);
void RegisterFusedMatMulKernels(KernelRegistry& r);
void RegisterFerryAttentionKernels(KernelRegistry& r);
void RegisterSkipLayerNormalizationKernels(KernelRegistry& r);

void RegisterCpuKernels(KernelRegistry& r) {
  // --- oneDNN: convolution ---
  RegisterConvKernels(r);
  RegisterConvTransposeKernels(r);
  // --- oneDNN: matmul, gemm ---
  RegisterMatMulKernels(r);
  RegisterGemmKernels(r);
  // --- oneDNN: pooling, normalization, softmax ---
  RegisterPoolingKernels(r);
  RegisterBatchNormalizationKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterLayerNormalizationKernels(r);
  RegisterRmsNormalizationKernels(r);
  // --- vectorized elementwise ---
  RegisterBinaryElementwiseKernels(r);
  RegisterUnaryElementwiseKernels(r);
  // --- vectorized data movement ---
  RegisterViewKernels(r);
  RegisterTransposeKernels(r);
  RegisterConcatKernels(r);
  RegisterGatherKernels(r);
  RegisterSliceKernels(r);
  RegisterWhereKernels(r);
  RegisterCastKernels(r);
  RegisterExpandKernels(r);
  RegisterPadKernels(r);
  // --- ai.ferry (optimizer-produced ops) ---
  RegisterFusedConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterBlockedPoolKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterFerryAttentionKernels(r);
  RegisterSkipLayerNormalizationKernels(r);
}

}  // namespace ferry::cpu
