// An estimate of a node's cost, for placement reports and `ferry check` (fallback ratio by FLOPs).
#pragma once

#include "ir/graph.h"

namespace ferry::runtime {

// The floating-point (or integer multiply-add) operations of one node; 0 when the shapes are not static or the
// op is not one whose cost is well defined (Reshape, Gather, control flow...). Throws ferry::Error when an
// attribute it reads has the wrong type.
double EstimateFlops(const ir::Node& n);

}  // namespace ferry::runtime
