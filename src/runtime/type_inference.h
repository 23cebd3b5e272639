// Static type and shape inference over a model: the top graph and every subgraph, node by node in topological
// order, through the schemas' element-type rules (InferOutputElementTypes) and shape-inference functions
// (OpSchema::infer, src/schemas/shape_inference/), with partial values of small integer tensors propagated
// through shape computations. Declared and inferred types are merged: a declared static dim or element type
// wins, an inferred one fills what is unknown (an inferred static dim also replaces a declared symbol).
// Throws InvalidModelError naming the model, node, op and shapes when inference proves the model invalid
// (MatMul inner dims 3 vs 4, a broadcast of 3 vs 4, Concat inputs of different rank, a model output declared as
// another element type or kind than its node produces); anything merely unknown stays unknown. Unknown ops and nodes that fail schema validation are skipped: placement reports them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry::runtime {

struct TypeInferenceReport {
  // Declared types that disagree with the inferred ones (the declared type is kept), one message each.
  std::vector<std::string> conflicts;
  size_t nodes = 0;           // nodes visited, subgraphs included
  size_t nodes_inferred = 0;  // nodes whose schema has a shape-inference function
};

void InferTypes(ir::Model& model, TypeInferenceReport* report = nullptr);

}  // namespace ferry::runtime
