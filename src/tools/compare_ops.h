// `ferry compare --ops ReduceSum,ReduceMean,...`: every node of those op types, cut out of the model on its own
// (tools/compare_extract.h) and run under both configurations for N trials: trial 0 feeds the values the whole
// model computed for it (side B), the others random values of the same shapes in the same ranges (floating-point
// inputs only; integer and bool inputs such as axes keep their values; initializers stay as they are). A node
// whose outputs breach the tolerance in any trial is flagged: the reduction-order check before moving a model to
// another platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/compare_config.h"
#include "tools/compare_layerwise.h"

namespace ferry::tools {

struct OpCheck {
  std::string node, op;
  std::string inputs;              // "float32[1,64,56,56], float32[64,64,3,3] (initializer)"
  std::string backend_a, backend_b;  // where its steps ran on each side ("cpu", "ref")
  int trials = 0;
  std::string worst_output;
  ErrorStats stats;  // of the worst output in the worst trial
  int worst_trial = 0;
  std::string error;  // why the node could not be checked (then stats are empty)
  bool checked() const { return error.empty(); }
  bool pass() const { return !checked() || stats.pass(); }
};

struct OpsReport {
  std::vector<std::string> ops;      // asked for
  std::vector<std::string> absent;   // asked for but not in the model
  std::vector<OpCheck> checks;       // one per node of those types, in topological order
  int flagged() const;
  int unchecked() const;
};

// `captured`: a run of the whole model keeping every value (CaptureRun with no filter). Throws
// InvalidArgumentError when no node of `ops` is in the model.
OpsReport CompareOps(const ir::Model& original, const CapturedRun& captured, const std::vector<std::string>& ops,
                     const CompareConfig& a, const CompareConfig& b, const ToleranceSet& tolerance, int trials,
                     uint64_t seed);

}  // namespace ferry::tools
