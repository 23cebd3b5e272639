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

// One node's decision, the single code path shared by placement and `ferry check`: the backends are asked in
// priority order until one takes the node.
struct BackendRefusal {
  const Backend* backend = nullptr;
  FailureLayer layer = FailureLayer::kNone;
  std::string reason;
};
struct NodeDecision {
  const Backend* backend = nullptr;     // nullptr when no backend takes the node
  const KernelDef* kernel = nullptr;
  std::vector<BackendRefusal> refused;  // the backends asked before `backend` (all of them when unplaced)
};
NodeDecision DecideNode(const ir::Node& node, const std::vector<const Backend*>& backends, const Target& target);

struct Placement {
  std::unordered_map<const ir::Node*, NodePlacement> nodes;
  std::vector<UnplacedNode> unplaced;
};

// Places every node of `model` (including subgraph nodes) on the first backend in `backends` that supports it.
// Never throws for unsupported nodes: they are listed in `unplaced`.
// `target` is the hardware kernels are judged against (ISA, compute capability).
Placement PlaceModel(const ir::Model& model, const std::vector<const Backend*>& backends,
                     const Target& target = Target());

// Throws UnsupportedError / InvalidModelError listing every unplaced node (op, layer, reason).
void RequireFullPlacement(const ir::Model& model, const Placement& placement);

}  // namespace ferry::runtime
