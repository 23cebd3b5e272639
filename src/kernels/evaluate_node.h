// Evaluating one node outside any executor: the registry's kernel for the node is created, prepared and run once on
// host values. Constant folding (passes/fold_constants.cc) uses it with the ref backend's registry.
#pragma once

#include <span>
#include <vector>

#include "ferry/value.h"
#include "ir/graph.h"
#include "kernels/registry.h"

namespace ferry {

// Runs `node` with `inputs` (one per node input; nullptr for an omitted one) through the kernel `registry`
// supports it with, on one thread. Returns one Value per node output (kNone for an omitted output). Throws
// UnsupportedError when the registry has no kernel for the node or the node holds a subgraph (no executor runs
// bodies here), and whatever the kernel throws.
std::vector<Value> EvaluateNode(const KernelRegistry& registry, const ir::Node& node,
                                std::span<const Value* const> inputs, const Target& target = Target());

}  // namespace ferry
