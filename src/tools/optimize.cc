#include "tools/optimize.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "backends/backend.h"
#include "core/isa.h"
#include "ferry/error.h"
#include "runtime/pipeline.h"
#include "runtime/placement.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"

namespace ferry::tools {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() < width ? std::string(width - s.size(), ' ') + s : s;
}

std::string Bytes(int64_t n) {
  if (n >= (int64_t{1} << 20)) return Fixed(static_cast<double>(n) / (1 << 20), 1) + " MiB";
  if (n >= 1024) return Fixed(static_cast<double>(n) / 1024, 1) + " KiB";
  return std::to_string(n) + " B";
}

double PassesMs(const OptimizeResult& r) {
  double ms = 0;
  for (const auto& run : r.passes.runs) ms += run.ms;
  return ms;
}

// "|" would end a Markdown table cell.
std::string MdCell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

// `--target ort`: ONNX Runtime's op set, a target of its own.
bool IsOrtTarget(const std::vector<std::string>& targets) {
  return std::find(targets.begin(), targets.end(), "ort") != targets.end();
}

}  // namespace

void ValidateOptimizeOptions(const OptimizeOptions& options) {
  if (options.level < 0 || options.level > passes::kMaxLevel) {
    throw InvalidArgumentError("--level " + std::to_string(options.level) + ": the optimization level is one of 0.." +
                               std::to_string(passes::kMaxLevel));
  }
  passes::CheckPassNames({options.disabled.begin(), options.disabled.end()}, "--disable: ");
  if (IsOrtTarget(options.targets)) {
    if (options.targets.size() != 1) {
      throw InvalidArgumentError("--target ort: ONNX Runtime's op set is a target of its own; it cannot be listed with "
                                 "Ferry's backends");
    }
    if (options.legalize) {
      throw InvalidArgumentError("--legalize with --target ort: every Ferry op is already written as ONNX Runtime's "
                                 "ops or ONNX primitives");
    }
  } else if (!options.targets.empty()) {
    runtime::ResolvePlacementOptions(options.targets, {}, {}, true);
  }
  if (options.legalize && options.targets.empty()) {
    throw InvalidArgumentError("--legalize needs a --target: it rewrites what those backends have no kernel for");
  }
  if (options.opset != 0 && (options.opset < convert::kMinConvertibleOpset ||
                             options.opset > schemas::SchemaRegistry::Get().MaxOpset(""))) {
    throw InvalidArgumentError("--opset " + std::to_string(options.opset) + ": Ferry converts between opsets " +
                               std::to_string(convert::kMinConvertibleOpset) + ".." +
                               std::to_string(schemas::SchemaRegistry::Get().MaxOpset("")));
  }
  if (!options.isa.empty()) {
    if (options.targets.empty()) throw InvalidArgumentError("--isa applies to a --target: portable mode has none");
    IsaSet::Parse(options.isa);
  }
}

OptimizeResult OptimizeModelFile(const std::string& path, const OptimizeOptions& options) {
  ValidateOptimizeOptions(options);
  OptimizeResult r;
  r.input_path = path;
  runtime::PipelineOptions pipeline;
  // --target ort: the passes fuse for the cpu backend (its kernels decide what is fused), without its blocked
  // layouts (level 3) and without float32 compute for half-precision nodes (ONNX Runtime runs those itself).
  const bool ort = IsOrtTarget(options.targets);
  // No targets: no backend (portable). --target's kernels are judged against no GPU.
  pipeline.target = runtime::ResolveTarget({.backends = ort ? std::vector<std::string>{"cpu"} : options.targets,
                                            .pins = {},
                                            .plugins = {},
                                            .allow_fallback = true,
                                            .isa = options.isa,
                                            .isa_exact = false,
                                            .devices = runtime::DeviceRule::kGiven,
                                            .compute_capability = 0});
  for (const Backend* b : pipeline.target.placement.backends) r.targets.push_back(b->name());
  if (ort) r.targets = {"ort"};
  pipeline.input_shapes = options.shapes;
  pipeline.level = ort ? std::min(options.level, 2) : options.level;
  pipeline.disabled_passes = options.disabled;
  if (ort) pipeline.disabled_passes.push_back("compute_in_float32");
  pipeline.instrument = options.instrument;
  pipeline.legalize = options.legalize;

  auto t0 = Clock::now();
  runtime::PreparedModel prepared = runtime::PrepareModel(path, pipeline, runtime::Stage::kImported);
  r.import_ms = MsSince(t0);

  t0 = Clock::now();
  runtime::ContinueModel(prepared, pipeline, runtime::Stage::kTypesInferred);
  if (options.opset != 0) {
    r.conversion = convert::ConvertOpset(*prepared.model, options.opset);  // before the passes: they see the new opset
    runtime::InferTypes(*prepared.model);
  }
  r.prepare_ms = MsSince(t0);

  r.nodes_before = static_cast<int>(prepared.model->graph->nodes().size());
  r.ops_before = passes::CountOps(*prepared.model->graph);
  t0 = Clock::now();
  runtime::ContinueModel(prepared, pipeline, runtime::Stage::kOptimized);
  if (ort) {
    r.ort = convert::ConvertToOrtOps(*prepared.model);
    runtime::InferTypes(*prepared.model);
  }
  r.optimize_ms = MsSince(t0);
  r.passes = std::move(prepared.passes);
  r.model = std::move(prepared.model);
  r.nodes_after = static_cast<int>(r.model->graph->nodes().size());
  r.ops_after = passes::CountOps(*r.model->graph);
  return r;
}

void WriteOptimizedModel(OptimizeResult& result, const std::string& path, const ir::ExportOptions& options) {
  const auto t0 = Clock::now();
  ir::ExportModelToFile(*result.model, path, options, &result.export_stats);
  result.export_ms = MsSince(t0);
  result.output_path = path;
}

std::string FormatOptimizeText(const OptimizeResult& r) {
  std::ostringstream os;
  os << "optimized " << r.input_path;
  if (!r.output_path.empty()) os << " -> " << r.output_path;
  os << " at level " << r.passes.level << " for ";
  if (r.targets.empty()) {
    os << "no target (portable: standard ONNX ops only)";
  } else {
    for (size_t i = 0; i < r.targets.size(); ++i) os << (i ? "," : "") << r.targets[i];
  }
  os << "\n  nodes: " << r.nodes_before << " -> " << r.nodes_after << "\n";
  if (r.conversion) os << "  " << convert::FormatOpsetConversion(*r.conversion) << "\n";
  if (r.ort) {
    os << "  ONNX Runtime's ops: " << r.ort->mapped << " Ferry node(s) written as ONNX Runtime ops, "
       << r.ort->decomposed << " as ONNX primitives\n";
    for (const auto& [rewrite, n] : r.ort->by_rewrite) os << "    " << rewrite << ": " << n << "\n";
  }
  if (!r.passes.runs.empty()) {
    size_t width = 4;
    for (const auto& run : r.passes.runs) width = std::max(width, run.name.size());
    os << "  " << Pad("pass", width) << "  level  changed      ms  nodes         what it did\n";
    for (const auto& run : r.passes.runs) {
      std::string did = passes::FormatOpDelta(run.op_delta);
      if (run.changed && did.empty()) did = "(op counts unchanged)";
      std::string line = "  " + Pad(run.name, width) + "  " + Pad(std::to_string(run.level), 5) + "  " +
                         Pad(run.changed ? "yes" : "no", 7) + " " + PadLeft(Fixed(run.ms, 2), 7) + "  " +
                         Pad(std::to_string(run.nodes_before) + " -> " + std::to_string(run.nodes_after), 12) + "  " +
                         did;
      while (line.back() == ' ') line.pop_back();  // unchanged passes: no trailing blanks
      os << line << "\n";
    }
  }
  os << "  time: import " << Fixed(r.import_ms, 1) << " ms, prepare (inline, shapes, types) " << Fixed(r.prepare_ms, 1)
     << " ms, passes " << Fixed(r.optimize_ms, 1) << " ms";
  if (!r.output_path.empty()) os << ", export " << Fixed(r.export_ms, 1) << " ms";
  os << "; total " << Fixed(r.import_ms + r.prepare_ms + r.optimize_ms + r.export_ms, 1) << " ms\n";
  if (!r.export_stats.data_path.empty()) {
    os << "  external data: " << r.export_stats.data_path << " (" << r.export_stats.external_tensors
       << " initializers, " << Bytes(r.export_stats.external_bytes) << ")\n";
  }
  return os.str();
}

std::string FormatOptimizeJson(const OptimizeResult& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["input"] = r.input_path;
  j["output"] = r.output_path.empty() ? Json() : Json(r.output_path);
  j["level"] = r.passes.level;
  j["targets"] = r.targets;
  j["portable"] = r.targets.empty();
  j["nodes_before"] = r.nodes_before;
  j["nodes_after"] = r.nodes_after;
  j["ops_before"] = r.ops_before;
  j["ops_after"] = r.ops_after;
  if (r.conversion) {
    j["opset_conversion"] = {{"from", r.conversion->from},
                             {"to", r.conversion->to},
                             {"nodes", r.conversion->nodes},
                             {"nodes_changed", r.conversion->nodes_changed},
                             {"nodes_added", r.conversion->nodes_added},
                             {"by_adapter", Json(r.conversion->by_adapter)}};
  }
  if (r.ort) {
    j["ort_conversion"] = {{"mapped", r.ort->mapped},
                           {"decomposed", r.ort->decomposed},
                           {"by_rewrite", Json(r.ort->by_rewrite)},
                           {"applied", r.ort->applied}};
  }
  Json runs = Json::array();
  for (const auto& run : r.passes.runs) {
    runs.push_back({{"name", run.name},
                    {"level", run.level},
                    {"changed", run.changed},
                    {"ms", run.ms},
                    {"nodes_before", run.nodes_before},
                    {"nodes_after", run.nodes_after},
                    {"op_delta", Json(run.op_delta)}});
  }
  j["passes"] = runs;
  j["time_ms"] = {{"import", r.import_ms},
                  {"prepare", r.prepare_ms},
                  {"passes", r.optimize_ms},
                  {"passes_sum", PassesMs(r)},
                  {"export", r.export_ms},
                  {"total", r.import_ms + r.prepare_ms + r.optimize_ms + r.export_ms}};
  if (!r.export_stats.data_path.empty()) {
    j["external_data"] = {{"path", r.export_stats.data_path},
                          {"initializers", r.export_stats.external_tensors},
                          {"bytes", r.export_stats.external_bytes}};
  }
  return j.dump(2) + "\n";
}

std::string PassListText() {
  size_t width = 4;
  for (const auto& p : passes::AllPasses()) width = std::max(width, p->name().size());
  std::ostringstream os;
  os << Pad("pass", width) << "  level  what it rewrites\n";
  for (const auto& p : passes::AllPasses()) {
    os << Pad(std::string(p->name()), width) << "  " << Pad(std::to_string(p->level()), 5) << "  " << p->summary()
       << "\n";
  }
  return os.str();
}

std::string PassListMarkdown() {
  const auto& all = passes::AllPasses();
  std::ostringstream os;
  os << "<!-- Generated by `ferry optimize --list-passes --md` (cmake --build build --target optimize-doc). -->\n\n";
  os << "| level | passes, in the order they run |\n|---|---|\n";
  for (int level = 1; level <= passes::kMaxLevel; ++level) {
    std::string names;
    for (const auto& p : all) {
      if (p->level() == level) names += (names.empty() ? "" : ", ") + ("`" + std::string(p->name()) + "`");
    }
    os << "| " << level << " | " << (names.empty() ? "none" : names) << " |\n";
  }
  os << "\nEvery pass, in the order the PassManager runs them (a level runs the passes of that level and below):\n\n";
  os << "| # | pass | level | what it rewrites, and the identity it relies on |\n|---|---|---|---|\n";
  int i = 0;
  for (const auto& p : all) {
    os << "| " << ++i << " | `" << p->name() << "` | " << p->level() << " | " << MdCell(p->summary()) << " |\n";
  }
  return os.str();
}

}  // namespace ferry::tools
