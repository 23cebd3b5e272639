// What a kernel can know of its inputs before a run, from the graph alone: for decisions made at creation
// (pre-packing weights, building primitives); Prepare sees the concrete shapes (kernel.h).
#pragma once

#include <optional>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry {

// The static shape of input i of `node` (an initializer's shape, or its type's when every dim is known), or nullopt
// when the input is omitted or its rank or any dim is unknown.
std::optional<Shape> StaticShape(const ir::Node& node, size_t i);

}  // namespace ferry
