// Where a session runs each node and why: the placement report (`ferry run --report`, Session::placement()).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ferry {

struct NodePlacementInfo {
  std::string name, op, domain;  // domain "" = ai.onnx
  std::string graph;             // "main", or the subgraph's path: "main/loop:body"
  std::string backend, kernel;
  std::string kind;              // "native", "fallback" or "pinned"
  std::string reason;            // "native on cpu", "fallback to ref: cpu [kernel] ...", "pinned by --pin Conv=ref"
  double flops = 0;              // estimated from static shapes; 0 when unknown
};

// Consecutive nodes of one graph on one backend.
struct SegmentInfo {
  std::string graph, backend, device;
  std::vector<std::string> nodes;
};

// A copy of a value between devices, inserted where a value crosses devices.
struct CopyInfo {
  std::string graph, value;
  std::string from_device, to_device;
  std::string before_node;  // the node it runs before ("" = at the end of the graph, for graph outputs)
  std::string reason;       // "input 0 of node 'r' (Relu)", "graph output", ...
  bool once = false;        // an initializer, copied when the session is created
  int64_t bytes = -1;       // from the static shape; -1 when unknown until run time
};

struct PlacementReport {
  std::vector<std::string> backends;  // priority order, plugin backends included
  std::vector<NodePlacementInfo> nodes;  // execution order, a subgraph's nodes right after its node
  std::vector<SegmentInfo> segments;
  std::vector<CopyInfo> copies;

  int64_t native = 0, fallback = 0, pinned = 0;
  double total_flops = 0, fallback_flops = 0;
  double fallback_ratio_nodes() const;  // fallback / nodes
  double fallback_ratio_flops() const;  // fallback FLOPs / total FLOPs (0 when no FLOPs are known)
  int64_t copies_per_run() const;       // copies outside loops (a subgraph's copies count once)
  int64_t copy_bytes_per_run() const;   // their bytes; -1 when a size is unknown before running
};

// Text for `ferry run --report`: totals, segments, non-native nodes (every node when `verbose`), copies.
std::string FormatPlacementText(const PlacementReport& report, bool verbose = false);
// JSON (`ferry run --report --json`): {"backends", "summary", "nodes", "segments", "copies"}.
std::string FormatPlacementJson(const PlacementReport& report);

}  // namespace ferry
