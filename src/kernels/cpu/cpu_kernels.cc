// The one list of `cpu` kernels. Each Register...Kernels() lives in its op's file in src/kernels/cpu/.
// Kernels with several ISA variants register the best first: the registry takes the first that fits the target.
#include "kernels/cpu/cpu_kernels.h"

namespace ferry::cpu {

// --- oneDNN: convolution ---
void RegisterDepthwiseConvKernels(KernelRegistry& r);
void RegisterConvKernels(KernelRegistry& r);
void RegisterConvTransposeKernels(KernelRegistry& r);
// --- oneDNN and GEMM: matmul, gemm, einsum ---
void RegisterMatMulKernels(KernelRegistry& r);
void RegisterGemmKernels(KernelRegistry& r);
void RegisterEinsumKernels(KernelRegistry& r);
// --- pooling ---
void RegisterPoolingKernels(KernelRegistry& r);
void RegisterLpPoolKernels(KernelRegistry& r);
void RegisterMaxUnpoolKernels(KernelRegistry& r);
// --- normalization and softmax ---
void RegisterBatchNormalizationKernels(KernelRegistry& r);
void RegisterSoftmaxKernels(KernelRegistry& r);
void RegisterLayerNormalizationKernels(KernelRegistry& r);
void RegisterRmsNormalizationKernels(KernelRegistry& r);
void RegisterLpNormalizationKernels(KernelRegistry& r);
void RegisterLRNKernels(KernelRegistry& r);
void RegisterInstanceNormalizationKernels(KernelRegistry& r);
void RegisterGroupNormalizationKernels(KernelRegistry& r);
void RegisterMeanVarianceNormalizationKernels(KernelRegistry& r);
// --- attention ---
void RegisterOnnxAttentionKernels(KernelRegistry& r);
void RegisterRotaryEmbeddingKernels(KernelRegistry& r);
// --- vectorized elementwise ---
void RegisterBinaryElementwiseKernels(KernelRegistry& r);
void RegisterUnaryElementwiseKernels(KernelRegistry& r);
void RegisterUnaryPredicateKernels(KernelRegistry& r);
void RegisterPowKernels(KernelRegistry& r);
void RegisterModKernels(KernelRegistry& r);
void RegisterPReluKernels(KernelRegistry& r);
void RegisterVariadicElementwiseKernels(KernelRegistry& r);
void RegisterCompareKernels(KernelRegistry& r);
void RegisterLogicalKernels(KernelRegistry& r);
void RegisterBitwiseKernels(KernelRegistry& r);
void RegisterBitShiftKernels(KernelRegistry& r);
void RegisterShrinkKernels(KernelRegistry& r);
void RegisterSwishKernels(KernelRegistry& r);
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
void RegisterCompressKernels(KernelRegistry& r);
void RegisterReverseSequenceKernels(KernelRegistry& r);
// --- ai.ferry (optimizer-produced ops), resampling, recurrent ---
void RegisterWinogradConvKernels(KernelRegistry& r);
void RegisterFusedConvKernels(KernelRegistry& r);
void RegisterBlockedLayoutKernels(KernelRegistry& r);
void RegisterBlockedPoolKernels(KernelRegistry& r);
// --- com.microsoft.nchwc, group "nchwc" (ONNX Runtime's NCHWc layout: the blocked kernels above) ---
void RegisterNchwcConvKernels(KernelRegistry& r);
void RegisterNchwcPoolKernels(KernelRegistry& r);
void RegisterNchwcReorderKernels(KernelRegistry& r);
void RegisterNchwcUpsampleKernels(KernelRegistry& r);
void RegisterFusedMatMulKernels(KernelRegistry& r);
void RegisterScaleShiftKernels(KernelRegistry& r);
void RegisterFerryAttentionKernels(KernelRegistry& r);
void RegisterSkipLayerNormalizationKernels(KernelRegistry& r);
void RegisterResizeKernels(KernelRegistry& r);
void RegisterUpsampleKernels(KernelRegistry& r);
void RegisterLstmKernels(KernelRegistry& r);
void RegisterGruKernels(KernelRegistry& r);
void RegisterRnnKernels(KernelRegistry& r);
// --- vectorized reductions, losses ---
void RegisterReduceKernels(KernelRegistry& r);
void RegisterArgMaxMinKernels(KernelRegistry& r);
void RegisterTopKKernels(KernelRegistry& r);
void RegisterCumSumKernels(KernelRegistry& r);
void RegisterCumProdKernels(KernelRegistry& r);
void RegisterNegativeLogLikelihoodLossKernels(KernelRegistry& r);
void RegisterSoftmaxCrossEntropyLossKernels(KernelRegistry& r);
void RegisterHardmaxKernels(KernelRegistry& r);
// --- no arithmetic: control flow, sequences, optionals, metadata (ref's kernels) ---
void RegisterPlumbingKernels(KernelRegistry& r);
// --- sampling and detection ---
void RegisterGridSampleKernels(KernelRegistry& r);
void RegisterRoiAlignKernels(KernelRegistry& r);
void RegisterNonMaxSuppressionKernels(KernelRegistry& r);
void RegisterAffineGridKernels(KernelRegistry& r);

void RegisterUnaryTrigKernels(KernelRegistry& r);

// --- com.microsoft, group "norm" (the skip and simplified norms are registered with ai.ferry's / ONNX's) ---
void RegisterEmbedLayerNormalizationKernels(KernelRegistry& r);

// --- com.microsoft, group "tensor" (GridSample, Trilu and Range are the ONNX kernels, registered with them) ---
void RegisterInverseKernels(KernelRegistry& r);
void RegisterCDistKernels(KernelRegistry& r);
void RegisterWordConvEmbeddingKernels(KernelRegistry& r);
void RegisterExpandDimsKernels(KernelRegistry& r);
void RegisterContribUniqueKernels(KernelRegistry& r);

// --- com.microsoft, group "attention" (RotaryEmbedding is the ONNX kernel, registered with it) ---
void RegisterOrtAttentionKernels(KernelRegistry& r);

// --- com.microsoft, group "fused" (FusedConv, Gelu: with the ai.ferry / ONNX kernels' registrations) ---
void RegisterOrtFusedGemmKernels(KernelRegistry& r);
void RegisterOrtFusedMatMulKernels(KernelRegistry& r);
void RegisterOrtBiasGeluKernels(KernelRegistry& r);
void RegisterQuickGeluKernels(KernelRegistry& r);

void RegisterCpuKernels(KernelRegistry& r) {
  // --- convolution ---
  RegisterDepthwiseConvKernels(r);  // before oneDNN's Conv and FusedConv: preferred where it applies
  RegisterConvKernels(r);
  RegisterConvTransposeKernels(r);
  // --- oneDNN and GEMM: matmul, gemm, einsum ---
  RegisterMatMulKernels(r);
  RegisterGemmKernels(r);
  RegisterEinsumKernels(r);
  // --- pooling ---
  RegisterPoolingKernels(r);
  RegisterLpPoolKernels(r);
  RegisterMaxUnpoolKernels(r);
  // --- normalization and softmax ---
  RegisterBatchNormalizationKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterLayerNormalizationKernels(r);
  RegisterRmsNormalizationKernels(r);
  RegisterLpNormalizationKernels(r);
  RegisterLRNKernels(r);
  RegisterInstanceNormalizationKernels(r);
  RegisterGroupNormalizationKernels(r);
  RegisterMeanVarianceNormalizationKernels(r);
  // --- attention ---
  RegisterOnnxAttentionKernels(r);
  RegisterRotaryEmbeddingKernels(r);
  // --- vectorized elementwise ---
  RegisterBinaryElementwiseKernels(r);
  RegisterUnaryElementwiseKernels(r);
  RegisterUnaryTrigKernels(r);
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
  RegisterCompressKernels(r);
  RegisterReverseSequenceKernels(r);
  // --- ai.ferry (optimizer-produced ops), resampling, recurrent ---
  RegisterWinogradConvKernels(r);  // before oneDNN's BlockedConv: preferred where it applies
  RegisterFusedConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterBlockedPoolKernels(r);
  // --- com.microsoft.nchwc, group "nchwc" ---
  RegisterNchwcConvKernels(r);
  RegisterNchwcPoolKernels(r);
  RegisterNchwcReorderKernels(r);
  RegisterNchwcUpsampleKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterScaleShiftKernels(r);
  RegisterFerryAttentionKernels(r);
  RegisterSkipLayerNormalizationKernels(r);
  RegisterResizeKernels(r);
  RegisterUpsampleKernels(r);
  RegisterLstmKernels(r);
  RegisterGruKernels(r);
  RegisterRnnKernels(r);
  // --- vectorized reductions, losses ---
  RegisterReduceKernels(r);
  RegisterArgMaxMinKernels(r);
  RegisterTopKKernels(r);
  RegisterCumSumKernels(r);
  RegisterCumProdKernels(r);
  RegisterNegativeLogLikelihoodLossKernels(r);
  RegisterSoftmaxCrossEntropyLossKernels(r);
  RegisterHardmaxKernels(r);
  // --- no arithmetic: control flow, sequences, optionals, metadata (ref's kernels) ---
  RegisterPlumbingKernels(r);
  // --- sampling and detection ---
  RegisterGridSampleKernels(r);
  RegisterRoiAlignKernels(r);
  RegisterNonMaxSuppressionKernels(r);
  RegisterAffineGridKernels(r);
  // --- com.microsoft, group "tensor" ---
  RegisterInverseKernels(r);
  RegisterCDistKernels(r);
  RegisterWordConvEmbeddingKernels(r);
  RegisterExpandDimsKernels(r);
  RegisterContribUniqueKernels(r);
  // --- com.microsoft, group "norm" ---
  RegisterEmbedLayerNormalizationKernels(r);
  // --- com.microsoft, group "attention" ---
  RegisterOrtAttentionKernels(r);
  // --- com.microsoft, group "fused" ---
  RegisterOrtFusedGemmKernels(r);
  RegisterOrtFusedMatMulKernels(r);
  RegisterOrtBiasGeluKernels(r);
  RegisterQuickGeluKernels(r);
}

}  // namespace ferry::cpu
