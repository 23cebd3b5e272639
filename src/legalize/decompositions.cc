// The one list of decompositions, in the order they are tried (the first whose predicate accepts a node is used).
// Each Add...Decompositions lives in its rule's file, decompose_<op>.cc.
#include "legalize/decomposition.h"

namespace ferry::legalize {

void AddLayerNormalizationDecompositions(std::vector<Decomposition>& list);
void AddSkipLayerNormalizationDecompositions(std::vector<Decomposition>& list);
void AddRMSNormalizationDecompositions(std::vector<Decomposition>& list);
void AddGroupNormalizationDecompositions(std::vector<Decomposition>& list);
void AddGeluDecompositions(std::vector<Decomposition>& list);
void AddHardSwishDecompositions(std::vector<Decomposition>& list);
void AddMishDecompositions(std::vector<Decomposition>& list);
void AddSoftplusDecompositions(std::vector<Decomposition>& list);
void AddRotaryEmbeddingDecompositions(std::vector<Decomposition>& list);
void AddAttentionDecompositions(std::vector<Decomposition>& list);
void AddFusedMatMulDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "attention"
void AddOrtRotaryEmbeddingDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "attention-decompositions": Attention, MultiHeadAttention.
void AddOrtAttentionDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "tensor": ExpandDims, Trilu, GridSample, Range, Unique, CDist.
void AddContribTensorDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "fused"
void AddOrtFusedDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "norm": EmbedLayerNormalization (the skip and simplified norms are in their ONNX / ai.ferry
// op's file).
void AddEmbedLayerNormalizationDecompositions(std::vector<Decomposition>& list);
// com.microsoft, group "misc": Pad, ConvTransposeWithDynamicPads, MatMulInteger16, NhwcMaxPool, UnfoldTensor.
void AddOrtMiscDecompositions(std::vector<Decomposition>& list);
// com.microsoft.nchwc, group "nchwc-decompositions": ReorderInput, ReorderOutput, Conv, the pools, Upsample.
void AddNchwcDecompositions(std::vector<Decomposition>& list);

const std::vector<Decomposition>& AllDecompositions() {
  static const std::vector<Decomposition> list = [] {
    std::vector<Decomposition> l;
    AddLayerNormalizationDecompositions(l);
    AddSkipLayerNormalizationDecompositions(l);
    AddRMSNormalizationDecompositions(l);
    AddGroupNormalizationDecompositions(l);
    AddGeluDecompositions(l);
    AddHardSwishDecompositions(l);
    AddMishDecompositions(l);
    AddSoftplusDecompositions(l);
    AddRotaryEmbeddingDecompositions(l);
    AddAttentionDecompositions(l);
    AddFusedMatMulDecompositions(l);
    // com.microsoft, group "attention"
    AddOrtRotaryEmbeddingDecompositions(l);
    AddOrtAttentionDecompositions(l);  // com.microsoft, group "attention-decompositions"
    AddContribTensorDecompositions(l);  // com.microsoft, group "tensor"
    AddOrtFusedDecompositions(l);  // com.microsoft, group "fused"
    AddEmbedLayerNormalizationDecompositions(l);  // com.microsoft, group "norm"
    AddOrtMiscDecompositions(l);  // com.microsoft, group "misc"
    AddNchwcDecompositions(l);  // com.microsoft.nchwc, group "nchwc-decompositions"
    return l;
  }();
  return list;
}

}  // namespace ferry::legalize
