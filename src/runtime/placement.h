// Placement, the partitioner: which backend's kernel runs each node (of the top graph and every subgraph),
// why, and where values must be copied between devices. Session and `ferry check` both call PlaceModel, so a
// check verdict is the placement a session would make.
//
// The steps, each over every graph (subgraphs included), in the graph's topological node order:
//   1. decide: pinned nodes go to their pinned backend; every other node to the first backend in priority order
//      whose kernel supports it (DecideNode, the registry query). With fallback forbidden, only the first
//      backend (or a plugin backend, for a custom-domain op only a plugin provides) may take a node.
//   2. classify: native (first backend, or a plugin's own custom-domain op), fallback (a later backend; the
//      reason lists why each earlier backend refused), pinned (the user chose).
//   3. segment: maximal runs of consecutive nodes on one backend.
//   4. copy: a value produced on one device and read on another gets one copy per (value, device), placed right
//      before its first reader there. Kernel inputs declared host_inputs are read on the host; graph inputs,
//      initializers and subgraph inputs live on the host; graph outputs must end on the host. Host backends
//      share memory: no copies between them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ferry/placement_report.h"
#include "ir/graph.h"
#include "kernels/registry.h"

namespace ferry::runtime {

// --pin NODE_OR_OP=BACKEND: the node of that name, or else every node of that op type, runs on `backend`.
struct PinRule {
  std::string pattern;
  const Backend* backend = nullptr;
};

struct PlacementOptions {
  std::vector<const Backend*> backends;  // priority order
  Target target;                         // hardware kernels are judged against (ISA, compute capability)
  bool allow_fallback = true;            // false: --no-fallback
  std::vector<PinRule> pins;
};

enum class PlacementKind { kNative, kFallback, kPinned };
const char* PlacementKindName(PlacementKind kind);  // "native", "fallback", "pinned"

// Why one backend did not take a node.
struct BackendRefusal {
  const Backend* backend = nullptr;
  FailureLayer layer = FailureLayer::kNone;
  std::string reason;
};

// One node's decision: the backends are asked in priority order until one takes the node.
struct NodeDecision {
  const Backend* backend = nullptr;     // nullptr when no backend takes the node
  const KernelDef* kernel = nullptr;
  std::vector<BackendRefusal> refused;  // the backends asked before `backend` (all of them when unplaced)
};
// A kernel predicate that throws (an attribute of the wrong type on a custom-domain node) counts as a
// graph-layer refusal by that backend.
NodeDecision DecideNode(const ir::Node& node, const std::vector<const Backend*>& backends, const Target& target);

struct NodePlacement {
  const Backend* backend = nullptr;
  const KernelDef* kernel = nullptr;
  PlacementKind kind = PlacementKind::kNative;
  std::string reason;                   // "native on cpu", "fallback: cpu [kernel] ...", "pinned: --pin Conv=ref"
  std::vector<BackendRefusal> refused;  // backends asked before `backend`
  double flops = 0;                     // estimated from static shapes (runtime/flops.h); 0 when unknown
};

// The device node input `k` is read on: the host for host backends and for the kernel's host_inputs, else the
// backend's device.
std::string InputDevice(const NodePlacement& p, size_t k);

struct UnplacedNode {
  const ir::Node* node = nullptr;
  FailureLayer layer = FailureLayer::kNone;  // the first backend's refusal layer
  std::string reason;                         // every backend's refusal
  std::vector<BackendRefusal> refused;
  bool pinned = false;                        // its pinned backend refused it (refused: that backend only)
  const Backend* fallback_forbidden = nullptr;  // --no-fallback: the later backend that could have run it
};

// Consecutive nodes of one graph on one backend.
struct Segment {
  const ir::Graph* graph = nullptr;
  const Backend* backend = nullptr;
  std::vector<const ir::Node*> nodes;
};

// A copy of `value` from the device it lives on to `to_device`, run right before node `before` of `graph`
// (index into graph->nodes(); graph->nodes().size() = after the last node, for graph outputs).
struct CopyPlan {
  const ir::Graph* graph = nullptr;
  const ir::Value* value = nullptr;
  const Backend* from = nullptr;  // backend owning the source device (nullptr: the host)
  const Backend* to = nullptr;    // backend owning the destination device (nullptr: the host)
  std::string from_device, to_device;
  size_t before = 0;
  bool once = false;     // an initializer: copied at session creation, not per run
  int64_t bytes = -1;    // from the static shape; -1 when unknown
  std::string reason;    // "input 1 of node 'c' (Conv)", "graph output", "host input 1 of node 'r' (Reshape)"
};

struct Placement {
  std::unordered_map<const ir::Node*, NodePlacement> nodes;
  std::vector<UnplacedNode> unplaced;
  std::vector<Segment> segments;  // graph by graph, each graph's segments in node order
  std::vector<CopyPlan> copies;   // graph by graph, each graph's copies in execution order

  bool complete() const { return unplaced.empty(); }
};

// Names to PlacementOptions, as sessions and `ferry check` take them: loads `plugins` first (each adds a backend,
// appended to `backends` unless listed there), then finds every backend and pinned backend (InvalidArgumentError
// naming the available ones). The target is the host's (callers narrow it).
PlacementOptions ResolvePlacementOptions(const std::vector<std::string>& backends,
                                         const std::vector<std::pair<std::string, std::string>>& pins,
                                         const std::vector<std::string>& plugins, bool allow_fallback);

// Places every node of `model` (including subgraph nodes). Never throws for unsupported nodes: they are listed
// in `unplaced`, all of them (a pinned node its pinned backend cannot run is one of them). Throws InvalidArgumentError for options that cannot apply to this model: a pin
// that matches no node name or op type.
Placement PlaceModel(const ir::Model& model, const PlacementOptions& options);

// Throws UnsupportedError / InvalidModelError listing every unplaced node (op, layer, reason).
void RequireFullPlacement(const ir::Model& model, const Placement& placement);

// The path of every graph of `model`, as reports name them: "main" for the top graph, "main/NODE:ATTR" for a
// subgraph held by attribute ATTR of node NODE ("main/NODE:ATTR[i]" for a list of graphs).
std::unordered_map<const ir::Graph*, std::string> GraphPaths(const ir::Model& model);

// The public report of a placement (runtime/placement_report.cc).
PlacementReport MakePlacementReport(const ir::Model& model, const Placement& placement,
                                    const std::vector<const Backend*>& backends);

}  // namespace ferry::runtime
