// Expands calls to model-local functions (FunctionProto) into their bodies, so the runtime only sees ops.
#pragma once

#include "ir/graph.h"

namespace ferry::ir {

// Inlines every call of a function in model.functions, in the top graph and all subgraphs, recursively
// (nested calls too; recursion deeper than 64 levels is rejected as InvalidModelError).
void InlineModelFunctions(Model& model);

}  // namespace ferry::ir
