// The library side of `ferry optimize`: import a model, fix input shapes, run the optimizer's passes for a target
// (or none: portable, standard ONNX out), write ONNX back, and report what each pass did; plus the pass list
// behind `ferry optimize --list-passes` and the generated section of docs/optimize.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "convert/opset_conversion.h"
#include "convert/ort_ops.h"
#include "ir/graph.h"
#include "ir/onnx_export.h"
#include "passes/pass_manager.h"

namespace ferry::tools {

struct OptimizeOptions {
  int level = passes::kDefaultLevel;
  std::map<std::string, std::vector<int64_t>> shapes;  // --shape NAME=DIMS (runtime/fix_input_shapes.h)
  // Backends to optimize for, in priority order, resolved as a session resolves them (`--target cpu,ref`): the
  // passes may then make Ferry's own ops (domain ai.ferry) where those backends run them. Empty: portable mode,
  // no backend, so no pass makes an ai.ferry op and the output is standard ONNX any runtime loads. {"ort"} alone:
  // ONNX Runtime's op set (convert/ort_ops.h): the passes fuse for the cpu backend up to level 2, and every
  // ai.ferry node is then written as ONNX Runtime's op (com.microsoft) or as ONNX primitives.
  std::vector<std::string> targets;
  std::string isa;  // with targets: narrows the host's CPU extensions, as SessionOptions::isa ("" = the host's)
  std::vector<std::string> disabled;  // pass names
  // `--opset N`: convert the default domain (ai.onnx) to opset N before the passes (convert/opset_conversion.h);
  // 0 keeps the model's opset.
  int64_t opset = 0;
  // Run the `legalize` pass (`--legalize`): nodes no target backend has a kernel for are rewritten into standard
  // ONNX ops those backends run, where a decomposition exists. Needs targets (InvalidArgumentError without).
  bool legalize = false;
  // As PassContext::instrument (IR dumps): before the first pass (run == nullptr), after each pass that changed.
  std::function<void(const passes::PassRun* run, const ir::Model& model)> instrument;
};

struct OptimizeResult {
  std::string input_path;
  std::unique_ptr<ir::Model> model;   // the optimized model
  std::vector<std::string> targets;   // the resolved backends' names (empty: portable)
  passes::PassReport passes;
  std::optional<convert::OpsetConversion> conversion;  // with --opset
  std::optional<convert::OrtConversion> ort;            // with --target ort
  int nodes_before = 0, nodes_after = 0;          // top graph
  std::map<std::string, int> ops_before, ops_after;  // every graph, keyed by passes::OpKey
  double import_ms = 0;    // reading and importing the file
  double prepare_ms = 0;   // inlining functions, --shape, type inference
  double optimize_ms = 0;  // the passes (their own times are in `passes`)
  // Filled by WriteOptimizedModel.
  std::string output_path;
  double export_ms = 0;
  ir::ExportStats export_stats;
};

// Checks what can be checked before the model is read: the level, the disabled pass names, the target backends
// and the ISA. Throws InvalidArgumentError naming the option.
void ValidateOptimizeOptions(const OptimizeOptions& options);

// Imports `path` and optimizes it as a session would (inline functions, fix shapes, infer types, run the passes).
// Throws InvalidArgumentError for bad options (--shape naming no input, of the wrong rank, ...), and the
// importer's and inference's errors for a bad model.
OptimizeResult OptimizeModelFile(const std::string& path, const OptimizeOptions& options);

// Writes result.model to `path` (and its external data when asked), timing it into `result`.
void WriteOptimizedModel(OptimizeResult& result, const std::string& path, const ir::ExportOptions& options = {});

// The report of `ferry optimize`: node counts before/after; per pass: name, level, changed, ms, nodes, op delta;
// and the times of import, preparation, passes and export.
std::string FormatOptimizeText(const OptimizeResult& result);
std::string FormatOptimizeJson(const OptimizeResult& result);

// Every pass in run order: name, level, summary (`ferry optimize --list-passes`).
std::string PassListText();
// The generated section of docs/optimize.md (`--list-passes --md`): the passes by level, and a table of every
// pass in run order with its summary.
std::string PassListMarkdown();

}  // namespace ferry::tools
