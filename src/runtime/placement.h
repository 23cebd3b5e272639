// Placement: which backend's kernel runs each node (of the top graph and every subgraph), and why.
// Today a simple first-fit over the backend priority list; the partitioner issue grows this into segments,
// copies and a report.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"
#include "kernels/registry.h"

namespace ferry::runtime {

struct NodePlacement {
  const Backend* backend = nullptr;
  const KernelDef* kernel = nullptr;
  std::string reason;  // "native on ref", or why higher-priority backends were skipped
};

struct UnplacedNode {
  const ir::Node* node = nullptr;
  FailureLayer layer = FailureLayer::kNone;
  std::string reason;
};

struct Placement {
  std::unordered_map<const ir::Node*, NodePlacement> nodes;
  std::vector<UnplacedNode> unplaced;
};

// Places every node of `model` (including subgraph nodes) on the first backend in `backends` that supports it.
// Never throws for unsupported nodes: they are listed in `unplaced`.
Placement PlaceModel(const ir::Model& model, const std::vector<const Backend*>& backends);

// Throws UnsupportedError / InvalidModelError listing every unplaced node (op, layer, reason).
void RequireFullPlacement(const ir::Model& model, const Placement& placement);

}  // namespace ferry::runtime
