// Ferry's fused graph in ONNX Runtime's ops (`ferry optimize --target ort`): after Ferry's passes have fused a
// model for the cpu backend (levels up to 2: blocked layouts are Ferry's own), every ai.ferry node is rewritten
// into the op ONNX Runtime's CPU execution provider runs for it, so ONNX Runtime loads the file and runs the
// fusions Ferry found:
//
//   ai.ferry op                     ONNX Runtime op
//   FusedConv                       com.microsoft::FusedConv (activation "", Relu, Tanh, Sigmoid, LeakyRelu, Clip,
//                                   HardSigmoid, its parameters written out; float); other activations follow
//                                   as their own ops (HardSwish, Sigmoid + Mul, com.microsoft Gelu / FastGelu, ...)
//   FusedMatMul                     MatMul, then com.microsoft::BiasGelu (Gelu with a bias) or Add and the
//                                   activation; a 2-D product with a bias and an ORT activation:
//                                   com.microsoft::FusedGemm
//   Gelu                            com.microsoft::Gelu (erf) / FastGelu (tanh) for float and float16
//   LayerNormalization              LayerNormalization of the default domain (ONNX's from opset 17, ONNX
//                                   Runtime's own registration below)
//   RMSNormalization                RMSNormalization from opset 23, else SimplifiedLayerNormalization (default
//                                   domain, ONNX Runtime's registration)
//   SkipLayerNormalization          com.microsoft::SkipLayerNormalization (2-D / 3-D input, the last dim
//                                   normalized, Skip of the input's shape; Sum is its output 3)
//   everything else (ScaleShift,    the op's decomposition into ONNX primitives (legalize/decomposition.h)
//   Attention, other forms)
//
// Each rewrite computes what the ai.ferry node does (ONNX Runtime's kernels define the same math). Nodes of other
// domains are left as they are.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry::convert {

struct OrtConversion {
  int mapped = 0;                    // ai.ferry nodes rewritten into an ONNX Runtime op
  int decomposed = 0;                // ai.ferry nodes rewritten into ONNX primitives
  std::vector<std::string> applied;  // "node 'x' (ai.ferry::FusedConv): com.microsoft::FusedConv", one per node
  // "ai.ferry::FusedConv -> com.microsoft::FusedConv" -> how many nodes were rewritten so.
  std::map<std::string, int> by_rewrite;
};

// Rewrites every ai.ferry node of `model` (subgraphs included). Throws InvalidModelError naming each node that
// has neither an ONNX Runtime op nor a decomposition (the model is then partly rewritten: callers discard it).
OrtConversion ConvertToOrtOps(ir::Model& model);

}  // namespace ferry::convert
