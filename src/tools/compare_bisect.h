// `ferry compare --bisect FILE.onnx`: the smallest subgraph around the first divergence that still diverges.
//
// Starting from the first divergent node alone, fed with the values side A computed for its inputs (side B's
// where A fused them away), each attempt cuts the nodes out of the original model (tools/compare_extract.h),
// runs the standalone model under both configurations and compares the divergent value. When it agrees (the
// error came from a fusion or from earlier nodes), the set grows by the producers of its inputs, one level of
// ancestors at a time. The first set that diverges is written as FILE.onnx, with its inputs (and side B's
// outputs) in FILE_data/test_data_set_0/{input,output}_K.pb, so that
//   ferry compare FILE.onnx --inputs FILE_data --a A --b B
// reproduces the breach.
#pragma once

#include <string>
#include <vector>

#include "tools/compare_config.h"
#include "tools/compare_layerwise.h"

namespace ferry::tools {

struct BisectAttempt {
  size_t nodes = 0;
  bool reproduced = false;
  std::string detail;  // "agrees (max abs 1e-7)", "diverges: 12 of 64 elements, max abs 0.01", "cannot feed 'x'"
};

struct BisectResult {
  bool reproduced = false;
  std::string value;               // the divergent value, the subgraph's output
  std::vector<std::string> nodes;  // the subgraph's nodes (original names), in topological order
  ErrorStats stats;                // of the subgraph's output, A against B
  CompareTolerance tolerance;      // the divergent value's
  std::vector<BisectAttempt> attempts;
  std::string model_path, data_dir;  // what was written (when reproduced)
};

// Needs report.first. `max_levels`: how many levels of ancestors to add at most.
BisectResult Bisect(const ir::Model& original, const LayerwiseReport& report, const CapturedRun& a,
                    const CapturedRun& b, const CompareConfig& config_a, const CompareConfig& config_b,
                    const std::string& out_path, int max_levels = 8);

// The folder Bisect writes the data set of `model_path` to: "sub.onnx" -> "sub_data".
std::string BisectDataDir(const std::string& model_path);

}  // namespace ferry::tools
