// How much of a model falls to the backends after the first one (`ref`, in the usual `cpu,ref`): the share of
// nodes and of estimated FLOPs (from the placement, before running) and, after a profiled run, of the run's
// time. `ferry run --report`, `ferry bench` and `ferry check` print it, and warn when the fallback takes more
// than kFallbackWarnShare of the time (or, before any run, of the FLOPs): a model that "runs" but spends its
// time in the oracle backend is the slow path users must not find by accident.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ferry/placement_report.h"
#include "ferry/session.h"

namespace ferry::tools {

inline constexpr double kFallbackWarnShare = 0.05;

struct FallbackOp {
  std::string op;  // with its domain when not ai.onnx: "com.microsoft::FusedConv"
  int nodes = 0;
  double ms = 0;   // time of its fallback nodes in the profiled run (0 without one)
};

struct FallbackShare {
  std::string first_backend;      // the backend the others fall back from ("cpu")
  std::vector<std::string> to;    // the backends that took fallback nodes ("ref")
  int64_t nodes = 0, fallback_nodes = 0;
  double flops = 0, fallback_flops = 0;  // estimated from static shapes; 0 when unknown
  bool timed = false;             // a profiled run's node times were given
  double ms = 0, fallback_ms = 0; // main-graph step times (a subgraph's steps count in their If/Loop/Scan node)
  std::vector<FallbackOp> ops;    // fallback nodes per op, the most time (then nodes) first

  double node_share() const { return nodes ? static_cast<double>(fallback_nodes) / static_cast<double>(nodes) : 0; }
  double flop_share() const { return flops > 0 ? fallback_flops / flops : 0; }
  double time_share() const { return ms > 0 ? fallback_ms / ms : 0; }
};

// From the placement and, when `times` is not null, one profiled run's node times (RunStats::node_times).
// Pinned nodes placed on a later backend count as fallback too: they run there all the same.
FallbackShare MeasureFallbackShare(const PlacementReport& placement, const std::vector<NodeTime>* times = nullptr);

// One line: "fallback to ref: 3 of 120 nodes (2.5%), 0.1% of 4.1 GFLOPs, 58.0% of the run time (Resize 40.1%, ...)".
std::string FormatFallbackShare(const FallbackShare& share);
// "" when the fallback is within kFallbackWarnShare of the time (of the FLOPs when not timed; of the nodes when
// neither is known), else a warning naming the share and the ops that take it.
std::string FallbackWarning(const FallbackShare& share);
// {"first_backend", "to", "nodes", "fallback_nodes", "node_share", "flops", "fallback_flops", "flop_share",
//  "timed", "ms", "fallback_ms", "time_share", "ops": [{"op", "nodes", "ms"}], "warning"}
std::string FallbackShareJson(const FallbackShare& share);

}  // namespace ferry::tools
