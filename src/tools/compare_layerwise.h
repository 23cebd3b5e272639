// `ferry compare --layerwise`: where do two configurations first diverge inside the model?
//
// Both sides run their real, optimized graphs; RunStats::on_value hands over every value a node produced. Only
// values that exist in the original model (the model as written, functions inlined) are compared, and only where
// both sides produced them with the same dtype and shape: a fused node writes the output of the last node it
// replaced, so that value maps back to its producer in the original model; the values that vanished into a
// fusion (or a folded constant) are reported as "fused into X" and not compared. A value that a side computed
// only in a blocked channel layout (its twin "X_blocked", written at level 3 by the blocked_layout pass) holds
// exactly the values of X in another addressing: it is mapped back to X's ONNX layout (tools/compare_unblock.h)
// and compared as X, and the row says so ("through its blocked twin").
//
// Walking the original model in topological order, the first node with an output beyond tolerance is the first
// divergence. Its inputs' errors tell whether it introduced the error (every compared input agrees) or inherited
// it (an input already differs).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "ir/graph.h"
#include "tools/compare_stats.h"

namespace ferry::tools {

// The model as written, with model-local functions inlined and types inferred (as a session sees it before its
// passes) and the main graph's nodes in topological order.
std::unique_ptr<ir::Model> LoadOriginalModel(const std::string& path);

// One run with every produced value kept (cloned).
struct CapturedRun {
  std::map<std::string, Value> values;       // graph inputs and the values of `keep` the run produced
  std::map<std::string, std::string> step;   // value -> "'name' (op) on backend" of the step that produced it
  std::vector<NamedValue> outputs;
  // value -> "'X_blocked' (blocked by 8)": values[X] is its blocked twin mapped back (the run had no plain X)
  std::map<std::string, std::string> twin;
  // value -> why its blocked twin (the run had no plain X) could not be mapped back: "'X_blocked': ..."
  std::map<std::string, std::string> twin_problem;
};

// Runs `session` on `inputs`, keeping the produced values whose names are in `keep` (all when `keep` is null,
// twins included under their own names). With `keep`, a value X the run wrote only as its blocked twin is kept
// as X, mapped back to the ONNX layout of X (the shape `keep`'s producer declares for X, the model's types
// inferred): `twin` or `twin_problem` says so; its step is the twin's.
CapturedRun CaptureRun(const Session& session, const std::vector<NamedValue>& inputs,
                       const std::map<std::string, const ir::Node*>* keep);

// The producer of every value of `model`'s main graph, by value name.
std::map<std::string, const ir::Node*> ProducedValues(const ir::Model& model);

struct ValueComparison {
  std::string value;
  std::string node, op;  // its producer in the original model
  size_t order = 0;      // the producer's position in topological order
  bool compared = false;
  ErrorStats stats;      // when compared
  CompareTolerance tolerance;
  std::string note;      // why not compared: "fused into 'conv1' (ai.ferry::FusedConv) on A", "layout differs ..."
  std::string step_a, step_b;  // the steps that produced it on each side ("" when none did)
  std::string twin_a, twin_b;  // "'X_blocked' (blocked by 8)" when that side's value is its blocked twin, mapped back
  bool failed() const { return compared && !stats.pass(); }
};

struct InputError {
  std::string value;
  std::string kind;   // "graph input", "initializer", "value"
  std::optional<size_t> comparison;  // kind "value": index into LayerwiseReport::values
};

struct Divergence {
  size_t index = 0;  // into LayerwiseReport::values
  std::string node, op;
  std::vector<InputError> inputs;
  bool inherited = false;    // an input already differs
  bool uncertain = false;    // not inherited, but some input was not compared (fused on a side)
};

struct LayerwiseReport {
  std::vector<ValueComparison> values;  // every output of every main-graph node, in topological order
  std::optional<Divergence> first;
  int compared = 0, failed = 0, not_compared = 0;
  int through_twin = 0;  // compared values read through a blocked twin on a side (or both)
  // Rows for a short error table: a few values before and after the first divergence, the worst others and
  // the model's outputs (indices into values, in order).
  std::vector<size_t> TableRows(size_t around = 3, size_t worst = 4) const;
};

LayerwiseReport CompareLayerwise(const ir::Model& original, const CapturedRun& a, const CapturedRun& b,
                                 const ToleranceSet& tolerance);

}  // namespace ferry::tools
