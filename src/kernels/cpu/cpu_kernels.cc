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
void RegisterMaxUnpoolKernels(KernelRegistry& r);
void RegisterBatchNormalizationKernels(KernelRegistry& r);
void RegisterSoftmaxKernels(KernelRegistry& r);
void RegisterLayerNormalizationKernels(KernelRegistry& r);
void RegisterRmsNormalizationKernels(KernelRegistry& r);
// --- vectorized statistical normalization (normalization_rows.h) ---
void RegisterLpNormalizationKernels(KernelRegistry& r);
void RegisterLRNKernels(KernelRegistry& r);
// --- vectorized elementwise ---
void RegisterBinaryElementwiseKernels(KernelRegistry& r);
void RegisterUnaryElementwiseKernels(KernelRegistry& r);
void RegisterUnaryPredicateKernels(KernelRegistry& r);
void RegisterPowKernels(KernelRegistry& r);
void RegisterModKernels(KernelRegistry& r);
void RegisterPReluKernels(KernelRegistry& r);
void RegisterVariadicElementwiseKernels(KernelRegistry& r);
void RegisterCompareKernels(KernelRegistry& r);
void RegisterBitwiseKernels(KernelRegistry& r);
void RegisterBitShiftKernels(KernelRegistry& r);
void RegisterShrinkKernels(KernelRegistry& r);
void RegisterSwishKernels(KernelRegistry& r);
void RegisterLogicalKernels(KernelRegistry& r);
// --- vectorized data movement ---
void RegisterViewKernels(KernelRegistry& r);
void RegisterTransposeKernels(KernelRegistry& r);
void RegisterConcatKernels(KernelRegistry& r);
void RegisterGatherKernels(KernelRegistry& r);
void RegisterSliceKernels(KernelRegistry& r);
void RegisterWhereKernels(KernelRegistry& r);
void RegisterCastKernels(KernelRegistry& r);
void RegisterCastLikeKernels(KernelRegistry& r);
void RegisterExpandKernels(KernelRegistry& r);
void RegisterPadKernels(KernelRegistry& r);
void RegisterDepthToSpaceKernels(KernelRegistry& r);
void RegisterTileKernels(KernelRegistry& r);
void RegisterSplitKernels(KernelRegistry& r);
void RegisterGatherElementsKernels(KernelRegistry& r);
void RegisterScatterNDKernels(KernelRegistry& r);
void RegisterRangeKernels(KernelRegistry& r);
void RegisterConstantOfShapeKernels(KernelRegistry& r);
void RegisterTriluKernels(KernelRegistry& r);
void RegisterNonZeroKernels(KernelRegistry& r);
void RegisterGatherNDKernels(KernelRegistry& r);
void RegisterScatterElementsKernels(KernelRegistry& r);
void RegisterOneHotKernels(KernelRegistry& r);
void RegisterEyeLikeKernels(KernelRegistry& r);
// --- ai.ferry (optimizer-produced ops) ---
void RegisterFusedConvKernels(KernelRegistry& r);
void RegisterBlockedLayoutKernels(KernelRegistry& r);
void RegisterBlockedPoolKernels(KernelRegistry& r);
void RegisterFusedMatMulKernels(KernelRegistry& r);
void RegisterFerryAttentionKernels(KernelRegistry& r);
void RegisterOnnxAttentionKernels(KernelRegistry& r);
void RegisterRotaryEmbeddingKernels(KernelRegistry& r);
void RegisterSkipLayerNormalizationKernels(KernelRegistry& r);

// --- vectorized reductions ---
void RegisterReduceKernels(KernelRegistry& r);
void RegisterArgMaxMinKernels(KernelRegistry& r);
void RegisterTopKKernels(KernelRegistry& r);
void RegisterCumSumKernels(KernelRegistry& r);
void RegisterCumProdKernels(KernelRegistry& r);
void RegisterNegativeLogLikelihoodLossKernels(KernelRegistry& r);
void RegisterSoftmaxCrossEntropyLossKernels(KernelRegistry& r);
void RegisterHardmaxKernels(KernelRegistry& r);

void RegisterLstmKernels(KernelRegistry& r);
void RegisterGruKernels(KernelRegistry& r);
void RegisterRnnKernels(KernelRegistry& r);

void RegisterResizeKernels(KernelRegistry& r);
void RegisterUpsampleKernels(KernelRegistry& r);

// --- no arithmetic: control flow, sequences, optionals, metadata (ref's kernels) ---
void RegisterPlumbingKernels(KernelRegistry& r);

// --- vectorized data movement by storage word (strided_copy.h) ---
void RegisterCompressKernels(KernelRegistry& r);
void RegisterReverseSequenceKernels(KernelRegistry& r);
void RegisterInstanceNormalizationKernels(KernelRegistry& r);
void RegisterGroupNormalizationKernels(KernelRegistry& r);
void RegisterMeanVarianceNormalizationKernels(KernelRegistry& r);
void RegisterLpPoolKernels(KernelRegistry& r);
// --- sampling and detection ---
void RegisterGridSampleKernels(KernelRegistry& r);
void RegisterRoiAlignKernels(KernelRegistry& r);
void RegisterNonMaxSuppressionKernels(KernelRegistry& r);
void RegisterAffineGridKernels(KernelRegistry& r);
void RegisterEinsumKernels(KernelRegistry& r);
void RegisterCpuKernels(KernelRegistry& r) {
  // --- oneDNN: convolution ---
  RegisterConvKernels(r);
  RegisterConvTransposeKernels(r);
  // --- oneDNN: matmul, gemm ---
  RegisterMatMulKernels(r);
  RegisterGemmKernels(r);
  RegisterEinsumKernels(r);
  // --- oneDNN: pooling, normalization, softmax ---
  RegisterPoolingKernels(r);
  RegisterMaxUnpoolKernels(r);
  RegisterBatchNormalizationKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterLayerNormalizationKernels(r);
  RegisterRmsNormalizationKernels(r);
  // --- vectorized statistical normalization (normalization_rows.h) ---
  RegisterLpNormalizationKernels(r);
  RegisterInstanceNormalizationKernels(r);
  RegisterGroupNormalizationKernels(r);
  RegisterMeanVarianceNormalizationKernels(r);
  RegisterLpPoolKernels(r);
  RegisterLRNKernels(r);
  // --- vectorized elementwise ---
  RegisterBinaryElementwiseKernels(r);
  RegisterUnaryElementwiseKernels(r);
  RegisterUnaryPredicateKernels(r);
  RegisterPowKernels(r);
  RegisterModKernels(r);
  RegisterPReluKernels(r);
  RegisterVariadicElementwiseKernels(r);
  RegisterCompareKernels(r);
  RegisterLogicalKernels(r);
  RegisterBitwiseKernels(r);
  RegisterBitShiftKernels(r);
  RegisterShrinkKernels(r);
  RegisterSwishKernels(r);
  // --- vectorized data movement ---
  RegisterViewKernels(r);
  RegisterTransposeKernels(r);
  RegisterConcatKernels(r);
  RegisterGatherKernels(r);
  RegisterSliceKernels(r);
  RegisterWhereKernels(r);
  RegisterCastKernels(r);
  RegisterCastLikeKernels(r);
  RegisterExpandKernels(r);
  RegisterPadKernels(r);
  RegisterDepthToSpaceKernels(r);
  RegisterTileKernels(r);
  RegisterSplitKernels(r);
  RegisterGatherElementsKernels(r);
  RegisterScatterNDKernels(r);
  RegisterRangeKernels(r);
  RegisterConstantOfShapeKernels(r);
  RegisterTriluKernels(r);
  RegisterNonZeroKernels(r);
  RegisterGatherNDKernels(r);
  RegisterScatterElementsKernels(r);
  RegisterOneHotKernels(r);
  RegisterEyeLikeKernels(r);
  // --- ai.ferry (optimizer-produced ops) ---
  RegisterFusedConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterBlockedPoolKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterFerryAttentionKernels(r);
  RegisterOnnxAttentionKernels(r);
  RegisterRotaryEmbeddingKernels(r);
  RegisterSkipLayerNormalizationKernels(r);
  RegisterResizeKernels(r);
  RegisterUpsampleKernels(r);
  RegisterLstmKernels(r);
  RegisterGruKernels(r);
  RegisterRnnKernels(r);
  // --- vectorized reductions ---
  RegisterReduceKernels(r);
  RegisterArgMaxMinKernels(r);
  RegisterTopKKernels(r);
  RegisterCumSumKernels(r);
  RegisterCumProdKernels(r);
  RegisterNegativeLogLikelihoodLossKernels(r);
  RegisterSoftmaxCrossEntropyLossKernels(r);
  RegisterHardmaxKernels(r);
  // --- no arithmetic ---
  RegisterPlumbingKernels(r);
  RegisterCompressKernels(r);
  RegisterReverseSequenceKernels(r);
  // --- sampling and detection ---
  RegisterGridSampleKernels(r);
  RegisterRoiAlignKernels(r);
  RegisterNonMaxSuppressionKernels(r);
  RegisterAffineGridKernels(r);
}

}  // namespace ferry::cpu
