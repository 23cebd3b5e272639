// The front half of the one path through the system (docs/architecture.md, "The pipeline"): import -> inline
// the model's functions -> fix input shapes -> infer types -> passes -> place. Sessions run every stage and then
// build their executor; `ferry check` stops after placement (without the passes: it judges the model as
// written); `ferry optimize` after the passes; `ferry compare --layerwise` after type inference. Each stage is run
// here and nowhere else, so they cannot drift apart.
//
// A PreparedModel can be taken further stage by stage (ContinueModel), so a caller can look at, or add to, the
// model between two stages (`ferry optimize` counts the ops before the passes and converts the opset there).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/onnx_import.h"
#include "passes/pass_manager.h"
#include "runtime/placement.h"
#include "runtime/target.h"
#include "runtime/type_inference.h"

namespace ferry::runtime {

enum class Stage {
  kImported,       // ir::ImportModelFromFile / FromBytes: the file validated at the boundary
  kInlined,        // ir::InlineModelFunctions: calls of model-local functions replaced by their bodies
  kShapesFixed,    // runtime::FixInputShapes (--shape), or PipelineOptions::fix_shapes
  kTypesInferred,  // runtime::InferTypes: every value's type and shape as far as they are known
  kOptimized,      // passes::OptimizeModel for the target (skipped when PipelineOptions::optimize is false)
  kPlaced,         // runtime::PlaceModel: every node's backend and kernel, segments and copies
};
// "imported", "inlined", "shapes fixed", "types inferred", "optimized", "placed".
const char* StageName(Stage stage);

struct PipelineOptions {
  // kImported: e.g. load_initializer_data = false (`ferry check` never needs the weights).
  ir::ImportOptions import;
  // kShapesFixed: these inputs' dims (FixInputShapes; empty: nothing changes). When `fix_shapes` is set it runs
  // instead, given the import's stats (`ferry check` fixes only the inputs it names, and not the weights it did not
  // load, with messages naming its --shape flag).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::function<void(ir::Model& model, const ir::ImportStats& stats)> fix_shapes;
  // kOptimized and kPlaced: the backends and hardware (ResolveTarget). Its pins freeze their nodes for the passes.
  ResolvedTarget target;
  // kOptimized: false skips the passes (the stage is passed, PreparedModel::passes stays empty).
  bool optimize = true;
  int level = passes::kDefaultLevel;        // optimization level, 0..passes::kMaxLevel
  std::vector<std::string> disabled_passes;  // by name (InvalidArgumentError for an unknown one)
  bool legalize = false;  // run the `legalize` pass for target.legalize_backends (--legalize)
  std::function<void(const passes::PassRun* run, const ir::Model& model)> instrument;  // PassContext::instrument
  // false (a session): every failure throws, and kPlaced throws for nodes no backend runs
  // (RequireFullPlacement). true (`ferry check`, which reports everything at once): a function that cannot be
  // inlined (the model is then re-read from its file and taken further as written, the calls unknown ops) and
  // type inference proving the model invalid (what was inferred before the failure stays) become lines of
  // PreparedModel::problems, and unplaced nodes stay in placement.unplaced. A model read from bytes has no file to
  // re-read: there a failed inlining throws. Bad options (a --shape naming no input, a pin matching no node) and
  // the import's errors always throw.
  bool keep_going = false;
};

struct PreparedModel {
  std::unique_ptr<ir::Model> model;
  Stage stage = Stage::kImported;  // the last stage run
  ir::ImportStats import_stats;
  TypeInferenceReport inference;  // after kTypesInferred: declared types that disagree with the inferred ones
  passes::PassReport passes;      // after kOptimized
  Placement placement;            // after kPlaced; its pointers are into `model`
  // keep_going only: "function inlining: ...", "type inference: ...", in the order they happened.
  std::vector<std::string> problems;
};

// Imports the model and runs every stage up to and including `stop_after`. Errors are ferry::Error subclasses
// naming the model ("model 'path/to/model.onnx'") and the node, op and value involved.
PreparedModel PrepareModel(const std::string& path, const PipelineOptions& options, Stage stop_after);
// The same for a model in memory; `base_dir` is where its external data files are.
PreparedModel PrepareModelFromBytes(std::span<const uint8_t> bytes, const std::string& base_dir,
                                    const PipelineOptions& options, Stage stop_after);
// Runs the stages after `prepared.stage` up to and including `stop_after` (nothing when it is that stage).
// Throws InvalidArgumentError naming the model when `stop_after` is a stage already passed.
void ContinueModel(PreparedModel& prepared, const PipelineOptions& options, Stage stop_after);

}  // namespace ferry::runtime
