// ferry check MODEL: will this model run on these backends and this hardware, node by node, and if not, where
// (graph / kernel / hardware layer), why and what to do. Exit codes: 0 the report was produced and the gates
// (--fail-on, --max-fallback) pass, even for a model that cannot run (the report is the product); 3 a gate
// failed; 1 the model cannot be read; 2 a usage error (flags, --shape naming no input or of the wrong rank).
#include <filesystem>
#include <iostream>

#include "backends/backend.h"
#include "backends/plugin/plugin_loader.h"
#include "commands.h"
#include "placement_flags.h"
#include "core/isa.h"
#include "ferry/error.h"
#include "tools/check.h"
#include "tools/check_html.h"
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
  std::string fail_on;
  double max_fallback = -1;
};

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
  for (const auto& path : a.placement.plugins) LoadPlugin(path);
  options.plugins = a.placement.plugins;
  // Usage errors first (exit 2), before the model is read.
  try {
    options.backends = SplitList(a.backends);
    if (options.backends.empty()) throw InvalidArgumentError("--backends: the list is empty");
    options.pins = a.placement.ParsedPins();
    options.allow_fallback = !a.placement.no_fallback;
    for (const auto& name : options.backends) {
      if (!FindBackend(name)) {
        std::string known;
        for (const auto& n : BackendNames()) known += (known.empty() ? "" : ", ") + n;
        throw InvalidArgumentError("--backends: unknown backend '" + name + "' (available: " + known + ")");
      }
    }
    if (!a.isa.empty() && !a.target_isa.empty()) throw InvalidArgumentError("--isa and --target-isa exclude each other");
    options.isa = a.target_isa.empty() ? a.isa : a.target_isa;
    options.isa_exact = !a.target_isa.empty();
    if (!options.isa.empty()) IsaSet::Parse(options.isa);
    (void)DefaultIsa();  // a bad FERRY_ISA is a usage error too
    if (!a.cc.empty()) options.compute_capability = ParseComputeCapability(a.cc);
    for (const auto& s : a.shapes) {
      auto [name, dims] = tools::ParseAssignment(s, "--shape");
      options.shapes[name] = tools::ParseDims(dims, "--shape " + name);
    }
    if (a.fail_on == "unsupported") gate.fail_on = tools::FailOn::kUnsupported;
    if (a.fail_on == "fallback") gate.fail_on = tools::FailOn::kFallback;
    gate.max_fallback_pct = a.max_fallback;
  } catch (const Error& e) {
    return Usage(e.what());
  }

  // The model must exist (exit 1); from here on an InvalidArgumentError is about the options (--shape), and any
  // other error means the model cannot be read.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(a.model, ec)) {
    std::cerr << "ferry: error [InvalidArgument]: model '" << a.model << "': no such file\n";
    return 1;
  }
  tools::CheckReport report;
  try {
    report = tools::CheckModel(a.model, options);
  } catch (const Error& e) {
    if (e.category() == ErrorCategory::kInvalidArgument) return Usage(e.what());
    throw;
  }

  if (a.json) {
    std::cout << tools::FormatCheckJson(report, &gate) << "\n";
  } else {
    std::cout << tools::FormatCheckText(report, a.verbose);
  }
  if (!a.html.empty()) {
    tools::WriteCheckHtml(report, a.html);
    if (!a.json) std::cout << "HTML report written to " << a.html << "\n";
  }
  auto failures = tools::GateFailures(report, gate);
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
  cmd->add_option("--fail-on", args->fail_on, "exit 3 when a node is unsupported, or also when one falls back")
      ->check(CLI::IsMember({"unsupported", "fallback"}));
  cmd->add_option("--max-fallback", args->max_fallback,
                  "exit 3 when more than PCT percent of the nodes do not run on the first backend")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_flag("-v,--verbose", args->verbose, "list every node, not only the ones that are not native");
  AddPlacementFlags(*cmd, args->placement);
  return [args] { return Check(*args); };
}

}  // namespace ferry::cli
