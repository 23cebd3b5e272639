// Static element-type propagation over the graph (through the schemas' type variables), so placement can
// check kernels' dtype constraints before running. Unknown types stay unknown; never throws for them.
#pragma once

#include "ir/graph.h"

namespace ferry::runtime {

void InferTypes(ir::Model& model);

}  // namespace ferry::runtime
