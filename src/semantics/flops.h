// What a node costs: the floating-point (or integer multiply-add) operations of one node from its static shapes,
// one function per op registered in a table (flops.cc). The placement report and `ferry check` weigh the fallback
// ratio by it.
#pragma once

#include <string_view>

#include "ir/graph.h"

namespace ferry::semantics {

// The operations of one node; 0 when the shapes it needs are not static or the op is not one whose cost is well
// defined (Reshape, Gather, control flow, domains other than ai.onnx and ai.ferry...). Throws ferry::Error when
// an attribute it reads has the wrong type.
double EstimateFlops(const ir::Node& n);

// Whether op `op` of `domain` ("" or "ai.onnx", "ai.ferry") has a FLOPs function.
bool HasFlops(std::string_view domain, std::string_view op);

}  // namespace ferry::semantics
