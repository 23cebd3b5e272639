// A deep copy of a model's IR: graphs, values (with their types), nodes, attributes, subgraphs and functions.
// Initializer and attribute tensors share their buffers with the original (the IR never writes into them), so
// the copy costs the graph structure, not the weights. The opset converter works on such a copy so that a
// conversion that fails half way leaves the caller's model as it was (src/convert/opset_conversion.cc).
#pragma once

#include <memory>

#include "ir/graph.h"

namespace ferry::ir {

std::unique_ptr<Model> CloneModel(const Model& model);

}  // namespace ferry::ir
