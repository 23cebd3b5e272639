#include "runtime/pipeline.h"

#include "ferry/error.h"
#include "ir/inline_functions.h"
#include "runtime/fix_input_shapes.h"

namespace ferry::runtime {
namespace {

void Inline(PreparedModel& m, const PipelineOptions& options) {
  if (!options.keep_going) {
    ir::InlineModelFunctions(*m.model);
    return;
  }
  try {
    ir::InlineModelFunctions(*m.model);
  } catch (const Error& e) {
    if (m.model->path.empty()) throw;  // nothing to re-read
    // Inlining may have stopped half-way: take the model as written further (the call nodes are then unknown ops).
    m.problems.push_back(std::string("function inlining: ") + e.what());
    const std::string path = m.model->path;
    m.model = ir::ImportModelFromFile(path, options.import, &m.import_stats);
  }
}

void Infer(PreparedModel& m, const PipelineOptions& options) {
  if (!options.keep_going) {
    InferTypes(*m.model, &m.inference);
    return;
  }
  try {
    InferTypes(*m.model, &m.inference);
  } catch (const Error& e) {
    // Placement still runs on what was inferred before the failure; the model itself is invalid.
    m.problems.push_back(std::string("type inference: ") + e.what());
  }
}

void Optimize(PreparedModel& m, const PipelineOptions& options) {
  if (!options.optimize) return;
  const ResolvedTarget& t = options.target;
  passes::PassContext ctx{.level = options.level,
                          .disabled = {options.disabled_passes.begin(), options.disabled_passes.end()},
                          .backends = options.legalize ? t.legalize_backends : t.placement.backends,
                          .target = t.target(),
                          .frozen = {},
                          .instrument = options.instrument,
                          .legalize = options.legalize};
  for (const PinRule& pin : t.placement.pins) ctx.frozen.insert(pin.pattern);  // passes leave pinned nodes alone
  m.passes = passes::OptimizeModel(*m.model, ctx);
}

void Place(PreparedModel& m, const PipelineOptions& options) {
  m.placement = PlaceModel(*m.model, options.target.placement);
  if (!options.keep_going) RequireFullPlacement(*m.model, m.placement);
}

void RunStage(PreparedModel& m, const PipelineOptions& options, Stage stage) {
  switch (stage) {
    case Stage::kImported: break;  // done by PrepareModel
    case Stage::kInlined: Inline(m, options); break;
    case Stage::kShapesFixed:
      if (options.fix_shapes) {
        options.fix_shapes(*m.model, m.import_stats);
      } else {
        FixInputShapes(*m.model, options.input_shapes);
      }
      break;
    case Stage::kTypesInferred: Infer(m, options); break;
    case Stage::kOptimized: Optimize(m, options); break;
    case Stage::kPlaced: Place(m, options); break;
  }
}

}  // namespace

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kImported: return "imported";
    case Stage::kInlined: return "inlined";
    case Stage::kShapesFixed: return "shapes fixed";
    case Stage::kTypesInferred: return "types inferred";
    case Stage::kOptimized: return "optimized";
    case Stage::kPlaced: return "placed";
  }
  return "unknown";
}

PreparedModel PrepareModel(const std::string& path, const PipelineOptions& options, Stage stop_after) {
  PreparedModel m;
  m.model = ir::ImportModelFromFile(path, options.import, &m.import_stats);
  ContinueModel(m, options, stop_after);
  return m;
}

PreparedModel PrepareModelFromBytes(std::span<const uint8_t> bytes, const std::string& base_dir,
                                    const PipelineOptions& options, Stage stop_after) {
  PreparedModel m;
  m.model = ir::ImportModelFromBytes(bytes, base_dir, "", options.import, &m.import_stats);
  ContinueModel(m, options, stop_after);
  return m;
}

void ContinueModel(PreparedModel& prepared, const PipelineOptions& options, Stage stop_after) {
  if (stop_after < prepared.stage) {
    throw InvalidArgumentError(prepared.model->Describe() + ": cannot stop after stage '" + StageName(stop_after) +
                               "': the model is already " + StageName(prepared.stage));
  }
  while (prepared.stage < stop_after) {
    const Stage next = static_cast<Stage>(static_cast<int>(prepared.stage) + 1);
    RunStage(prepared, options, next);
    prepared.stage = next;
  }
}

}  // namespace ferry::runtime
