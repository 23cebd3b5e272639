// The reference backend's kernel list: one registration call per op (or tight op family), each defined in the
// op's own file. Adding an op = add its file + one declaration and one call here.
#include "kernels/ref/ref_kernels.h"

#include "kernels/registry.h"

namespace ferry::ref {

// --- activations and elementwise math ---
void RegisterReluKernels(KernelRegistry& r);
void RegisterUnaryMathKernels(KernelRegistry& r);
void RegisterActivationKernels(KernelRegistry& r);
void RegisterGeluKernels(KernelRegistry& r);
void RegisterPReluKernels(KernelRegistry& r);
void RegisterClipKernels(KernelRegistry& r);
void RegisterBinaryArithKernels(KernelRegistry& r);
void RegisterBinaryCompareKernels(KernelRegistry& r);
void RegisterBinaryLogicKernels(KernelRegistry& r);
void RegisterPowKernels(KernelRegistry& r);
void RegisterModKernels(KernelRegistry& r);
void RegisterBitShiftKernels(KernelRegistry& r);
void RegisterVariadicKernels(KernelRegistry& r);
void RegisterWhereKernels(KernelRegistry& r);
void RegisterCastKernels(KernelRegistry& r);
void RegisterBitCastKernels(KernelRegistry& r);

// --- control flow, sequences, optionals, recurrent ---
void RegisterIfKernels(KernelRegistry& r);
void RegisterLoopKernels(KernelRegistry& r);
void RegisterScanKernels(KernelRegistry& r);
void RegisterSequenceKernels(KernelRegistry& r);
void RegisterSplitToSequenceKernels(KernelRegistry& r);
void RegisterConcatFromSequenceKernels(KernelRegistry& r);
void RegisterSequenceMapKernels(KernelRegistry& r);
void RegisterOptionalKernels(KernelRegistry& r);
void RegisterRnnKernels(KernelRegistry& r);
void RegisterGruKernels(KernelRegistry& r);
void RegisterLstmKernels(KernelRegistry& r);

// --- normalization, softmax, quantization, attention ---
void RegisterBatchNormalizationKernels(KernelRegistry& r);
void RegisterInstanceNormalizationKernels(KernelRegistry& r);
void RegisterLayerNormalizationKernels(KernelRegistry& r);
void RegisterGroupNormalizationKernels(KernelRegistry& r);
void RegisterRMSNormalizationKernels(KernelRegistry& r);
void RegisterLRNKernels(KernelRegistry& r);
void RegisterLpNormalizationKernels(KernelRegistry& r);
void RegisterMeanVarianceNormalizationKernels(KernelRegistry& r);
void RegisterSoftmaxKernels(KernelRegistry& r);
void RegisterDropoutKernels(KernelRegistry& r);
void RegisterQuantizeLinearKernels(KernelRegistry& r);
void RegisterDequantizeLinearKernels(KernelRegistry& r);
void RegisterDynamicQuantizeLinearKernels(KernelRegistry& r);
void RegisterEinsumKernels(KernelRegistry& r);
void RegisterAttentionKernels(KernelRegistry& r);
void RegisterRotaryEmbeddingKernels(KernelRegistry& r);
void RegisterSwiGLUKernels(KernelRegistry& r);
void RegisterLinearAttentionKernels(KernelRegistry& r);
void RegisterCausalConvWithStateKernels(KernelRegistry& r);
void RegisterFlexAttentionKernels(KernelRegistry& r);

// --- reductions, sorting, detection, resampling ---
void RegisterReduceKernels(KernelRegistry& r);
void RegisterArgMaxMinKernels(KernelRegistry& r);
void RegisterTopKKernels(KernelRegistry& r);
void RegisterCumSumKernels(KernelRegistry& r);
void RegisterCumProdKernels(KernelRegistry& r);
void RegisterNonMaxSuppressionKernels(KernelRegistry& r);
void RegisterResizeKernels(KernelRegistry& r);
void RegisterUpsampleKernels(KernelRegistry& r);
void RegisterRoiAlignKernels(KernelRegistry& r);
void RegisterGridSampleKernels(KernelRegistry& r);
void RegisterAffineGridKernels(KernelRegistry& r);

// --- convolution, matrix products, pooling ---
void RegisterConvKernels(KernelRegistry& r);
void RegisterConvTransposeKernels(KernelRegistry& r);
void RegisterConvIntegerKernels(KernelRegistry& r);
void RegisterQLinearConvKernels(KernelRegistry& r);
void RegisterDeformConvKernels(KernelRegistry& r);
void RegisterCol2ImKernels(KernelRegistry& r);
void RegisterMatMulKernels(KernelRegistry& r);
void RegisterMatMulIntegerKernels(KernelRegistry& r);
void RegisterQLinearMatMulKernels(KernelRegistry& r);
void RegisterGemmKernels(KernelRegistry& r);
void RegisterPoolKernels(KernelRegistry& r);
void RegisterGlobalPoolKernels(KernelRegistry& r);
void RegisterMaxUnpoolKernels(KernelRegistry& r);
void RegisterMaxRoiPoolKernels(KernelRegistry& r);

// --- tensor and shape manipulation ---
void RegisterConstantKernels(KernelRegistry& r);
void RegisterConstantOfShapeKernels(KernelRegistry& r);
void RegisterIdentityKernels(KernelRegistry& r);
void RegisterShapeKernels(KernelRegistry& r);
void RegisterSizeKernels(KernelRegistry& r);
void RegisterReshapeKernels(KernelRegistry& r);
void RegisterFlattenKernels(KernelRegistry& r);
void RegisterSqueezeKernels(KernelRegistry& r);
void RegisterUnsqueezeKernels(KernelRegistry& r);
void RegisterTransposeKernels(KernelRegistry& r);
void RegisterConcatKernels(KernelRegistry& r);
void RegisterSplitKernels(KernelRegistry& r);
void RegisterSliceKernels(KernelRegistry& r);
void RegisterGatherKernels(KernelRegistry& r);
void RegisterGatherElementsKernels(KernelRegistry& r);
void RegisterGatherNDKernels(KernelRegistry& r);
void RegisterScatterElementsKernels(KernelRegistry& r);
void RegisterScatterNDKernels(KernelRegistry& r);
void RegisterExpandKernels(KernelRegistry& r);
void RegisterTileKernels(KernelRegistry& r);
void RegisterPadKernels(KernelRegistry& r);
void RegisterRangeKernels(KernelRegistry& r);
void RegisterOneHotKernels(KernelRegistry& r);
void RegisterEyeLikeKernels(KernelRegistry& r);
void RegisterTriluKernels(KernelRegistry& r);
void RegisterNonZeroKernels(KernelRegistry& r);
void RegisterCompressKernels(KernelRegistry& r);
void RegisterUniqueKernels(KernelRegistry& r);
void RegisterReverseSequenceKernels(KernelRegistry& r);
void RegisterDepthToSpaceKernels(KernelRegistry& r);
void RegisterSpaceToDepthKernels(KernelRegistry& r);
void RegisterCenterCropPadKernels(KernelRegistry& r);
void RegisterTensorScatterKernels(KernelRegistry& r);

// --- losses, signal, strings, ML and training ---
void RegisterNegativeLogLikelihoodLossKernels(KernelRegistry& r);
void RegisterSoftmaxCrossEntropyLossKernels(KernelRegistry& r);
void RegisterStringNormalizerKernels(KernelRegistry& r);
void RegisterStringConcatKernels(KernelRegistry& r);
void RegisterStringSplitKernels(KernelRegistry& r);
void RegisterRegexFullMatchKernels(KernelRegistry& r);
void RegisterDftKernels(KernelRegistry& r);
void RegisterStftKernels(KernelRegistry& r);
void RegisterWindowFunctionKernels(KernelRegistry& r);
void RegisterMelWeightMatrixKernels(KernelRegistry& r);
void RegisterDetKernels(KernelRegistry& r);
void RegisterRandomKernels(KernelRegistry& r);
void RegisterArrayFeatureExtractorKernels(KernelRegistry& r);
void RegisterBinarizerKernels(KernelRegistry& r);
void RegisterLabelEncoderKernels(KernelRegistry& r);
void RegisterTreeEnsembleKernels(KernelRegistry& r);
void RegisterAdagradKernels(KernelRegistry& r);
void RegisterAdamKernels(KernelRegistry& r);
void RegisterMomentumKernels(KernelRegistry& r);
void RegisterTfIdfVectorizerKernels(KernelRegistry& r);

// --- com.microsoft.nchwc, group "nchwc" (ONNX Runtime's NCHWc layout ops) ---
void RegisterNchwcKernels(KernelRegistry& r);

// --- ai.ferry (optimizer-produced ops) ---
void RegisterFusedConvKernels(KernelRegistry& r);
void RegisterBlockedLayoutKernels(KernelRegistry& r);
void RegisterFusedMatMulKernels(KernelRegistry& r);
void RegisterScaleShiftKernels(KernelRegistry& r);
void RegisterFerryAttentionKernels(KernelRegistry& r);
void RegisterSkipLayerNormalizationKernels(KernelRegistry& r);

// --- com.microsoft, group "norm" (the skip and simplified norms are registered with ai.ferry's / ONNX's) ---
void RegisterEmbedLayerNormalizationKernels(KernelRegistry& r);

// --- com.microsoft, group "fused" (FusedConv and Gelu are the ai.ferry / ONNX kernels, registered with them) ---
void RegisterOrtFusedGemmKernels(KernelRegistry& r);
void RegisterOrtFusedMatMulKernels(KernelRegistry& r);
void RegisterOrtGeluKernels(KernelRegistry& r);

// --- com.microsoft, group "attention" (RotaryEmbedding is the ONNX kernel, registered with it) ---
void RegisterOrtAttentionKernels(KernelRegistry& r);

// --- com.microsoft, group "tensor" (GridSample, Trilu, Range, Unique and ExpandDims are the ONNX kernels,
// registered with them) ---
void RegisterInverseKernels(KernelRegistry& r);
void RegisterCDistKernels(KernelRegistry& r);
void RegisterWordConvEmbeddingKernels(KernelRegistry& r);

// --- com.microsoft, group "misc" (the remaining ops of ONNX Runtime's CPU provider; Pad and
// ConvTransposeWithDynamicPads are registered with ONNX's Pad / ConvTranspose) ---
void RegisterCropAndResizeKernels(KernelRegistry& r);
void RegisterMurmurHash3Kernels(KernelRegistry& r);
void RegisterTokenizerKernels(KernelRegistry& r);
void RegisterNGramRepeatBlockKernels(KernelRegistry& r);
void RegisterBifurcationDetectorKernels(KernelRegistry& r);
void RegisterDynamicTimeWarpingKernels(KernelRegistry& r);
void RegisterUnfoldTensorKernels(KernelRegistry& r);
void RegisterMaxpoolWithMaskKernels(KernelRegistry& r);
void RegisterNhwcMaxPoolKernels(KernelRegistry& r);
void RegisterMatMulInteger16Kernels(KernelRegistry& r);
void RegisterAttnLstmKernels(KernelRegistry& r);

void RegisterRefKernels(KernelRegistry& r) {
  // --- tensor and shape manipulation ---
  RegisterConstantKernels(r);
  RegisterConstantOfShapeKernels(r);
  RegisterIdentityKernels(r);
  RegisterShapeKernels(r);
  RegisterSizeKernels(r);
  RegisterReshapeKernels(r);
  RegisterFlattenKernels(r);
  RegisterSqueezeKernels(r);
  RegisterUnsqueezeKernels(r);
  RegisterTransposeKernels(r);
  RegisterConcatKernels(r);
  RegisterSplitKernels(r);
  RegisterSliceKernels(r);
  RegisterGatherKernels(r);
  RegisterGatherElementsKernels(r);
  RegisterGatherNDKernels(r);
  RegisterScatterElementsKernels(r);
  RegisterScatterNDKernels(r);
  RegisterExpandKernels(r);
  RegisterTileKernels(r);
  RegisterPadKernels(r);
  RegisterRangeKernels(r);
  RegisterOneHotKernels(r);
  RegisterEyeLikeKernels(r);
  RegisterTriluKernels(r);
  RegisterNonZeroKernels(r);
  RegisterCompressKernels(r);
  RegisterUniqueKernels(r);
  RegisterReverseSequenceKernels(r);
  RegisterDepthToSpaceKernels(r);
  RegisterSpaceToDepthKernels(r);
  RegisterCenterCropPadKernels(r);
  RegisterTensorScatterKernels(r);
  // --- convolution, matrix products, pooling ---
  RegisterConvKernels(r);
  RegisterConvTransposeKernels(r);
  RegisterConvIntegerKernels(r);
  RegisterQLinearConvKernels(r);
  RegisterDeformConvKernels(r);
  RegisterCol2ImKernels(r);
  RegisterMatMulKernels(r);
  RegisterMatMulIntegerKernels(r);
  RegisterQLinearMatMulKernels(r);
  RegisterGemmKernels(r);
  RegisterPoolKernels(r);
  RegisterGlobalPoolKernels(r);
  RegisterMaxUnpoolKernels(r);
  RegisterMaxRoiPoolKernels(r);
  // --- reductions, sorting, detection, resampling ---
  RegisterReduceKernels(r);
  RegisterArgMaxMinKernels(r);
  RegisterTopKKernels(r);
  RegisterCumSumKernels(r);
  RegisterCumProdKernels(r);
  RegisterNonMaxSuppressionKernels(r);
  RegisterResizeKernels(r);
  RegisterUpsampleKernels(r);
  RegisterRoiAlignKernels(r);
  RegisterGridSampleKernels(r);
  RegisterAffineGridKernels(r);
  // --- normalization, softmax, quantization, attention ---
  RegisterBatchNormalizationKernels(r);
  RegisterInstanceNormalizationKernels(r);
  RegisterLayerNormalizationKernels(r);
  RegisterGroupNormalizationKernels(r);
  RegisterRMSNormalizationKernels(r);
  RegisterLRNKernels(r);
  RegisterLpNormalizationKernels(r);
  RegisterMeanVarianceNormalizationKernels(r);
  RegisterSoftmaxKernels(r);
  RegisterDropoutKernels(r);
  RegisterQuantizeLinearKernels(r);
  RegisterDequantizeLinearKernels(r);
  RegisterDynamicQuantizeLinearKernels(r);
  RegisterEinsumKernels(r);
  RegisterAttentionKernels(r);
  RegisterRotaryEmbeddingKernels(r);
  RegisterSwiGLUKernels(r);
  RegisterLinearAttentionKernels(r);
  RegisterCausalConvWithStateKernels(r);
  RegisterFlexAttentionKernels(r);
  // --- activations and elementwise math ---
  RegisterReluKernels(r);
  RegisterUnaryMathKernels(r);
  RegisterActivationKernels(r);
  RegisterGeluKernels(r);
  RegisterPReluKernels(r);
  RegisterClipKernels(r);
  RegisterBinaryArithKernels(r);
  RegisterBinaryCompareKernels(r);
  RegisterBinaryLogicKernels(r);
  RegisterPowKernels(r);
  RegisterModKernels(r);
  RegisterBitShiftKernels(r);
  RegisterVariadicKernels(r);
  RegisterWhereKernels(r);
  RegisterCastKernels(r);
  RegisterBitCastKernels(r);
  // --- control flow, sequences, optionals, recurrent ---
  RegisterIfKernels(r);
  RegisterLoopKernels(r);
  RegisterScanKernels(r);
  RegisterSequenceKernels(r);
  RegisterSplitToSequenceKernels(r);
  RegisterConcatFromSequenceKernels(r);
  RegisterSequenceMapKernels(r);
  RegisterOptionalKernels(r);
  RegisterRnnKernels(r);
  RegisterGruKernels(r);
  RegisterLstmKernels(r);
  // --- losses, signal, strings, ML and training ---
  RegisterNegativeLogLikelihoodLossKernels(r);
  RegisterSoftmaxCrossEntropyLossKernels(r);
  RegisterStringNormalizerKernels(r);
  RegisterStringConcatKernels(r);
  RegisterStringSplitKernels(r);
  RegisterRegexFullMatchKernels(r);
  RegisterDftKernels(r);
  RegisterStftKernels(r);
  RegisterWindowFunctionKernels(r);
  RegisterMelWeightMatrixKernels(r);
  RegisterDetKernels(r);
  RegisterRandomKernels(r);
  RegisterArrayFeatureExtractorKernels(r);
  RegisterBinarizerKernels(r);
  RegisterLabelEncoderKernels(r);
  RegisterTreeEnsembleKernels(r);
  RegisterAdagradKernels(r);
  RegisterAdamKernels(r);
  RegisterMomentumKernels(r);
  RegisterTfIdfVectorizerKernels(r);
  // --- com.microsoft.nchwc, group "nchwc" ---
  RegisterNchwcKernels(r);
  // --- ai.ferry (optimizer-produced ops) ---
  RegisterFusedConvKernels(r);
  RegisterBlockedLayoutKernels(r);
  RegisterFusedMatMulKernels(r);
  RegisterScaleShiftKernels(r);
  RegisterFerryAttentionKernels(r);
  RegisterSkipLayerNormalizationKernels(r);
  // --- com.microsoft, group "fused" ---
  RegisterOrtFusedGemmKernels(r);
  RegisterOrtFusedMatMulKernels(r);
  RegisterOrtGeluKernels(r);
  // --- com.microsoft, group "attention" ---
  RegisterOrtAttentionKernels(r);
  // --- com.microsoft, group "tensor" ---
  RegisterInverseKernels(r);
  RegisterCDistKernels(r);
  RegisterWordConvEmbeddingKernels(r);
  // --- com.microsoft, group "norm" ---
  RegisterEmbedLayerNormalizationKernels(r);
  // --- com.microsoft, group "misc" ---
  RegisterCropAndResizeKernels(r);
  RegisterMurmurHash3Kernels(r);
  RegisterTokenizerKernels(r);
  RegisterNGramRepeatBlockKernels(r);
  RegisterBifurcationDetectorKernels(r);
  RegisterDynamicTimeWarpingKernels(r);
  RegisterUnfoldTensorKernels(r);
  RegisterMaxpoolWithMaskKernels(r);
  RegisterNhwcMaxPoolKernels(r);
  RegisterMatMulInteger16Kernels(r);
  RegisterAttnLstmKernels(r);
}

}  // namespace ferry::ref
