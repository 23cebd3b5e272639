// One `ferry compare` of two sides (no --ops): the sessions, the output comparison over every trial and, when
// asked, the layerwise comparison of one trial and the bisection; and its --json document. The CLI
// (apps/ferry/compare_cmd.cc) and the Python package (ferry.compare) both run it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tools/compare.h"
#include "tools/compare_bisect.h"
#include "tools/compare_layerwise.h"

namespace ferry::tools {

struct CompareResult {
  CompareSides sides;
  OutputReport outputs;
  std::optional<LayerwiseReport> layers;  // with layerwise (or bisect)
  int layer_trial = 0;                    // the trial layerwise ran on: the first failed one, else 0
  std::optional<BisectResult> bisect;     // with bisect, when layerwise found a divergent node
  bool pass() const { return outputs.pass() && (!layers || layers->failed == 0); }
};

// Opens the sides, compares the outputs and, with `layerwise` or a `bisect_dir`, the values node by node (and
// writes the bisected reproducer to `bisect_dir`). Throws ferry::Error as OpenSides does.
CompareResult RunComparison(const CompareSetup& setup, bool layerwise, const std::string& bisect_dir);

// A side of the --json document: {"config", "description"} and, given its session, "backends".
nlohmann::json CompareSideJson(const CompareConfig& config, const Session* session);

// The --json document (docs/compare.md), indented by 2.
std::string CompareResultJson(const CompareSetup& setup, const CompareResult& result);

}  // namespace ferry::tools
