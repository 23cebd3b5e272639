// Static element-type propagation over the graph through the schemas' type variables, so placement can check
// kernels' dtype constraints before running. Declared types are kept; unknown types stay unknown (shapes are not
// inferred here). Never throws for unknown ops: placement reports those.
#pragma once

#include "ir/graph.h"

namespace ferry::runtime {

void InferTypes(ir::Model& model);

}  // namespace ferry::runtime
