// com.microsoft::CDist's node, shared by the ref and cpu kernels (semantics: cdist.cc): the metric attribute and
// the check of A [M, N] and B [K, N].
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// metric "sqeuclidean" (the default) or "euclidean"; InvalidModelError naming the node for any other.
bool CDistIsEuclidean(const ir::Node& node);

struct CDistGeometry {
  int64_t m = 0, k = 0, n = 0;  // A [m, n], B [k, n], C [m, k]
};

// A and B 2-D of one type with equal column counts; throws InvalidArgumentError naming the node and inputs.
CDistGeometry CheckCDistInputs(const PrepareContext& ctx);

}  // namespace ferry::ref
