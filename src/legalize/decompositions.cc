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
    return l;
  }();
  return list;
}

}  // namespace ferry::legalize
