// Expands calls to model-local functions (FunctionProto) into their bodies, so the runtime only sees ops.
#pragma once

#include "ir/graph.h"

namespace ferry::ir {

// Inlines every call of a function in model.functions, in the top graph and all subgraphs, recursively
// (nested calls too). A recursive function, or calls nested more than 64 levels deep, is InvalidModelError;
// calls nested so that the inlined graph would have more than 2^20 nodes are ResourceExhaustedError, before
// anything is inlined.
void InlineModelFunctions(Model& model);

}  // namespace ferry::ir
