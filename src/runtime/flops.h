// An estimate of a node's cost, for placement reports and `ferry check` (fallback ratio by FLOPs): the
// op-semantics layer's per-op FLOPs table (semantics/flops.h).
#pragma once

#include "semantics/flops.h"

namespace ferry::runtime {

// The floating-point (or integer multiply-add) operations of one node; 0 when the shapes are not static or the
// op is not one whose cost is well defined (Reshape, Gather, control flow...). Throws ferry::Error when an
// attribute it reads has the wrong type.
using semantics::EstimateFlops;
// Whether an op has a FLOPs estimate (it does arithmetic): a 0 from EstimateFlops then means "unknown".
using semantics::HasFlops;

}  // namespace ferry::runtime
