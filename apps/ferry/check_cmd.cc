// ferry check MODEL: will this model run on these backends and this hardware, node by node, and if not, where
// (graph / kernel / hardware layer), why and what to do. Exit codes: 0 the report was produced and the gates
// (--fail-on, --max-fallback) pass, even for a model that cannot run (the report is the product); 3 a gate
// failed; 1 the model (or the --profile trace) cannot be read; 2 a usage error (flags, --shape naming no input or
// of the wrong rank).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "memory_json.h"
#include "placement_flags.h"
#include "session_flags.h"
#include "core/file_fingerprint.h"
#include "core/human_format.h"
#include "core/isa.h"
#include "core/parse_number.h"
#include "core/regular_file.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "runtime/target.h"
#include "tools/check.h"
#include "tools/check_html.h"
#include "tools/profile.h"
#include "tools/run_inputs.h"

namespace ferry::cli {
namespace {

struct CheckArgs {
  std::string model;
  std::string backends = "cpu,ref";
  std::string isa, target_isa, cc;
  std::vector<std::string> shapes;
  bool json = false, verbose = false;
  PlacementFlags placement;
  std::string html;
  std::string profile;  // --profile TRACE: overlay the times of a `ferry run --profile` trace on the HTML
  std::string fail_on;
  double max_fallback = -1;
  bool memory = false;        // --memory: predict the memory a session needs (weights, packed copies, arena)
  std::string memory_limit;   // --memory-limit BYTES (implies --memory): exit 3 when the prediction exceeds it
  int threads = 0;            // --threads N: the intra-op threads the prediction is for (0 = all cores)
};

// "123", "512K", "1.5M", "2G" (binary units) -> bytes: a number, then a unit (the trailing letters, if any).
int64_t ParseBytes(const std::string& text) {
  const size_t unit_at = text.find_last_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") + 1;
  const std::string unit = text.substr(unit_at);
  const std::optional<double> v = ParseDouble(std::string_view(text).substr(0, unit_at));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") scale = 1024.0;
  else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  if (!v || scale == 0 || !(*v > 0) || *v * scale > 9.0e18) {
    throw InvalidArgumentError("--memory-limit: expected a positive size like 512M, 2G or 1048576, got '" + text + "'");
  }
  return static_cast<int64_t>(*v * scale);
}

struct MemoryResult {
  bool predicted = false;
  std::string error;  // why there is no prediction (the model cannot run on these backends)
  MemoryPrediction p;
};

MemoryResult PredictMemory(const CheckArgs& a, const tools::CheckOptions& options) {
  SessionOptions so;
  so.backends = options.backends;
  so.pins = options.pins;
  so.allow_fallback = options.allow_fallback;
  so.plugins = options.plugins;
  so.isa = options.isa_exact ? "" : options.isa;
  so.input_shapes = options.shapes;
  so.threads = a.threads;
  MemoryResult r;
  try {
    r.p = Session::Create(a.model, so)->PredictMemory();
    r.predicted = true;
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

std::string FormatMemoryText(const MemoryResult& r) {
  std::ostringstream out;
  if (!r.predicted) {
    out << "memory: no prediction, the model cannot be loaded for these backends: " << r.error << "\n";
    return out.str();
  }
  const MemoryPrediction& p = r.p;
  auto line = [&](const char* what, int64_t bytes, const std::string& note = "") {
    out << "  " << std::left << std::setw(22) << what << std::right << std::setw(11) << HumanBytes(bytes)
        << (note.empty() ? "" : "  " + note) << "\n";
  };
  out << "memory (predicted for the graph the session runs, at these input shapes):\n";
  line("weights", p.weights_bytes);
  line("kernels' own copies", p.kernel_bytes, "pre-packed weights");
  std::ostringstream ratio;
  ratio << std::fixed << std::setprecision(2)
        << (p.lower_bound > 0 ? static_cast<double>(p.arena_bytes) / static_cast<double>(p.lower_bound) : 1.0);
  line("activation arena", p.arena_bytes, "lower bound " + HumanBytes(p.lower_bound) + ", " + ratio.str() + "x");
  line("inputs and outputs", p.io_bytes);
  // One line per device: its buffers, largest first.
  std::map<std::string, std::vector<const WorkspaceBuffer*>> by_device;
  for (const WorkspaceBuffer& b : p.workspace) by_device[b.device].push_back(&b);
  if (by_device.empty()) line("workspace", 0, "no kernel keeps scratch buffers at these shapes");
  for (auto& [device, buffers] : by_device) {
    std::stable_sort(buffers.begin(), buffers.end(), [](auto* a, auto* b) { return a->bytes > b->bytes; });
    int64_t bytes = 0;
    std::string note;
    for (const WorkspaceBuffer* b : buffers) {
      bytes += b->bytes;
      note += (note.empty() ? "" : ", ") + b->name + " " + HumanBytes(b->bytes) +
              (b->threads > 1 ? " (" + std::to_string(b->threads) + " threads)" : "");
    }
    line(("workspace (" + device + ")").c_str(), bytes, note);
  }
  line("JIT code", p.jit_code_bytes, "generated for the kernels while the session was built (measured)");
  line("total", p.total());
  if (!p.unknown.empty()) {
    out << "  " << p.unknown.size() << " value(s) of unknown size not counted (give --shape), e.g. " << p.unknown.front()
        << "\n";
  }
  return out.str();
}

nlohmann::json MemoryJson(const MemoryResult& r) {
  if (!r.predicted) return {{"error", r.error}};
  nlohmann::json j = MemoryPredictionJson(r.p);
  j["unknown"] = r.p.unknown;
  return j;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

// "7.5" -> 75, "8" -> 80.
int ParseComputeCapability(const std::string& text) {
  size_t dot = text.find('.');
  std::string major = text.substr(0, dot), minor = dot == std::string::npos ? "0" : text.substr(dot + 1);
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 2 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(major) || !digits(minor) || minor.size() != 1) {
    throw InvalidArgumentError("--cc: expected MAJOR.MINOR like 8.0 or 7.5, got '" + text + "'");
  }
  return std::stoi(major) * 10 + std::stoi(minor);
}

int Usage(const std::string& message) {
  std::cerr << "ferry check: " << message << "\n";
  return 2;
}

int Check(const CheckArgs& a) {
  tools::CheckOptions options;
  tools::CheckGate gate;
  // Plugins first (a bad plugin is an error, exit 1, like a bad model): their backends may be named below.
  LoadPlugins(a.placement.plugins);
  options.plugins = a.placement.plugins;
  // Usage errors first (exit 2), before the model is read.
  try {
    options.backends = SplitList(a.backends);
    options.pins = a.placement.ParsedPins();
    options.allow_fallback = !a.placement.no_fallback;
    CheckBackendNames(options.backends, options.pins);
    if (!a.isa.empty() && !a.target_isa.empty()) throw InvalidArgumentError("--isa and --target-isa exclude each other");
    options.isa = a.target_isa.empty() ? a.isa : a.target_isa;
    options.isa_exact = !a.target_isa.empty();
    if (!options.isa.empty()) IsaSet::Parse(options.isa);
    (void)DefaultIsa();  // a bad FERRY_ISA is a usage error too
    if (!a.cc.empty()) options.compute_capability = ParseComputeCapability(a.cc);
    for (const auto& s : a.shapes) {
      auto [name, dims] = tools::ParseAssignment(s, "--shape");
      if (options.shapes.count(name)) throw InvalidArgumentError("--shape " + name + " is given twice");
      options.shapes[name] = tools::ParseDims(dims, "--shape " + name);
    }
    if (!a.profile.empty() && a.html.empty()) {
      throw InvalidArgumentError("--profile TRACE colors the graph of --html FILE: give --html too");
    }
    if (a.fail_on == "unsupported") gate.fail_on = tools::FailOn::kUnsupported;
    if (a.fail_on == "fallback") gate.fail_on = tools::FailOn::kFallback;
    gate.max_fallback_pct = a.max_fallback;
    if (!a.memory_limit.empty()) ParseBytes(a.memory_limit);
  } catch (const Error& e) {
    return Usage(e.what());
  }

  // GPU backends without --cc: judged against this machine's GPU; with none, against no GPU (their kernels are
  // hardware-layer refusals) and a note says how to judge another machine (docs/cuda.md).
  if (a.cc.empty()) {
    runtime::TargetOptions gpus;
    gpus.backends = options.backends;
    gpus.devices = runtime::DeviceRule::kProbe;
    const runtime::ResolvedTarget probed = runtime::ResolveTarget(gpus);
    options.compute_capability = probed.target().compute_capability;
    for (const runtime::MissingDevice& m : probed.missing_devices) {
      (a.json ? std::cerr : std::cout) << "note: " << m.problem << "; judging '" << m.backend->name()
                                       << "' against no GPU (give --cc MAJOR.MINOR to judge a GPU)\n";
    }
  }

  // The trace is read before the model (a bad one fails fast, exit 1, naming the file and what is wrong).
  tools::Profile profile;
  if (!a.profile.empty()) profile = tools::SummarizeProfile(tools::LoadProfileTrace(a.profile));
  // The model must exist (exit 1); from here on an InvalidArgumentError is about the options (--shape), and any
  // other error means the model cannot be read.
  if (const RegularFile file = RegularFile::Open(a.model); !file.ok()) {  // a FIFO is refused without blocking
    std::cerr << "ferry: error [InvalidArgument]: model '" << a.model
              << "': " << (file.error() == "does not exist" ? "no such file" : file.error()) << "\n";
    return 1;
  }
  // A trace recorded on another model would paint its times on the wrong nodes: an error (exit 1) when the trace
  // names its model's fingerprint and this model's differs. (A trace without one, from another tool, is taken.)
  if (!a.profile.empty()) {
    const std::string traced = tools::ProfileTraceModel(a.profile);
    if (const std::string here = traced.empty() ? "" : FileFingerprint(a.model); traced != here) {
      std::cerr << "ferry: error [InvalidArgument]: profile trace '" << a.profile << "' was recorded on another model ("
                << traced << "), not on '" << a.model << "' (" << here << "): record one with `ferry run " << a.model
                << " --profile " << a.profile << "`\n";
      return 1;
    }
  }
  tools::CheckReport report;
  try {
    report = tools::CheckModel(a.model, options);
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::kInvalidArgument) return Usage(e.what());
    throw;
  }

  const bool memory = a.memory || !a.memory_limit.empty();
  MemoryResult predicted;
  if (memory) predicted = PredictMemory(a, options);
  if (a.json) {
    if (memory) {
      auto j = nlohmann::json::parse(tools::FormatCheckJson(report, &gate));
      j["memory"] = MemoryJson(predicted);
      if (!a.memory_limit.empty()) j["memory"]["limit_bytes"] = ParseBytes(a.memory_limit);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << tools::FormatCheckJson(report, &gate) << "\n";
    }
  } else {
    std::cout << tools::FormatCheckText(report, a.verbose);
    if (memory) std::cout << FormatMemoryText(predicted);
  }
  if (!a.html.empty()) {
    tools::CheckHtmlOptions html_options;
    if (!a.profile.empty()) {
      html_options.profile = &profile;
      html_options.profile_source = a.profile;
    }
    tools::WriteCheckHtml(report, a.html, html_options);
    if (!a.json) std::cout << "HTML report written to " << a.html << "\n";
  }
  auto failures = tools::GateFailures(report, gate);
  if (!a.memory_limit.empty()) {
    const int64_t limit = ParseBytes(a.memory_limit);
    if (!predicted.predicted) {
      failures.push_back("--memory-limit: no memory prediction (" + predicted.error + ")");
    } else if (predicted.p.total() > limit) {
      failures.push_back("predicted memory " + HumanBytes(predicted.p.total()) + " exceeds --memory-limit " +
                         HumanBytes(limit) + " (weights " + HumanBytes(predicted.p.weights_bytes) +
                         ", kernels' copies " + HumanBytes(predicted.p.kernel_bytes) + ", activation arena " +
                         HumanBytes(predicted.p.arena_bytes) + ", inputs and outputs " +
                         HumanBytes(predicted.p.io_bytes) + ", JIT code " +
                         HumanBytes(predicted.p.jit_code_bytes) + ", kernels' workspace " +
                         HumanBytes(predicted.p.workspace_bytes) + ")");
    }
  }
  for (const auto& f : failures) (a.json ? std::cerr : std::cout) << "CHECK FAILED: " << f << "\n";
  return failures.empty() ? 0 : 3;
}

}  // namespace

Command AddCheckCommand(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "will this model run here? per-node verdicts, reasons and remedies");
  cmd->add_option("model", args->model, "model.onnx")->required();
  cmd->add_option("--backends,--backend", args->backends, "backends in priority order, comma-separated (default cpu,ref)");
  cmd->add_option("--isa", args->isa, "emulate this CPU with only these extensions, e.g. avx2,fma (or none)");
  cmd->add_option("--target-isa", args->target_isa,
                  "judge against a CPU with exactly these extensions (another machine), not this one");
  cmd->add_option("--cc", args->cc, "GPU compute capability of the target, e.g. 8.0");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x224x224 for inputs with symbolic dims; repeatable");
  cmd->add_flag("--json", args->json, "the whole report as JSON (schema: docs/check.md)");
  cmd->add_option("--html", args->html, "also write a self-contained HTML report (graph and details) to FILE");
  cmd->add_option("--profile", args->profile,
                  "with --html: color each node by its share of the run time in TRACE (written by `ferry run "
                  "--profile TRACE`; the same backends and level give the same node names)")
      ->type_name("TRACE");
  cmd->add_option("--fail-on", args->fail_on, "exit 3 when a node is unsupported, or also when one falls back")
      ->check(CLI::IsMember({"unsupported", "fallback"}));
  cmd->add_option("--max-fallback", args->max_fallback,
                  "exit 3 when more than PCT percent of the nodes do not run on the first backend")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("--memory", args->memory,
                "predict the memory a session needs at these input shapes (--shape): weights, kernels' packed copies, "
                "the planned activation arena and its lower bound, inputs and outputs, kernels' workspace, JIT code");
  cmd->add_option("--memory-limit", args->memory_limit,
                  "exit 3 when the predicted memory exceeds BYTES (512M, 2G, ...; implies --memory)")
      ->type_name("BYTES");
  cmd->add_option("--threads", args->threads,
                  "with --memory: the intra-op threads the session will run with (0 = all cores; oneDNN sizes its "
                  "scratchpads, and the ref GEMM its per-thread panels, by it; at most 1024)")
      ->check(ThreadCount());
  cmd->add_flag("-v,--verbose", args->verbose, "list every node, not only the ones that are not native");
  AddPlacementFlags(*cmd, args->placement);
  return [args] { return Check(*args); };
}

}  // namespace ferry::cli
