#include "session_flags.h"

#include <map>
#include <sstream>

#include "backends/backend.h"
#include "backends/plugin/plugin_loader.h"
#include "core/isa.h"
#include "core/parse_number.h"
#include "ferry/error.h"
#include "ferry/limits.h"
#include "kernels/cpu/dnnl_isa.h"
#include "passes/pass_manager.h"

namespace ferry::cli {

SessionOptions SessionFlags::Options() const {
  SessionOptions options;
  options.backends = SplitList(backends);
  options.isa = isa;
  options.plugins = placement.plugins;
  options.pins = placement.ParsedPins();
  options.allow_fallback = !placement.no_fallback;
  options.optimization_level = level;
  options.disabled_passes = disabled_passes;
  options.legalize = legalize;
  options.memory_arena = !no_memory_arena;
  options.deterministic = deterministic;
  options.adapt_threads = SessionOptions::ParseThreadAdaptation(adapt_threads);  // CLI checked the value
  passes::CheckPassNames({disabled_passes.begin(), disabled_passes.end()}, "--disable-pass: ");
  if (!isa.empty()) IsaSet::Parse(isa);  // a malformed --isa, or FERRY_ISA, is a usage error too
  (void)DefaultIsa();
  return options;
}

void AddSessionFlags(CLI::App& cmd, SessionFlags& flags) {
  cmd.add_option("--backend,--backends", flags.backends, "backends in priority order, comma-separated (default cpu,ref)");
  cmd.add_option("-O,--level,--opt-level", flags.level, "graph optimization level 0-3 (default 3; docs/optimize.md)")
      ->check(CLI::Range(0, 3));
  cmd.add_option("--disable-pass", flags.disabled_passes, "do not run this optimizer pass; repeatable");
  cmd.add_flag("--no-memory-arena", flags.no_memory_arena,
               "allocate every activation buffer on its own instead of from the arena planned after the first run "
               "of each input shape");
  cmd.add_flag("--deterministic", flags.deterministic,
               "bitwise-identical outputs across runs and sessions with the same options (needs --threads N; "
               "docs/determinism.md)");
  cmd.add_option("--adapt-threads", flags.adapt_threads,
                 "give up threads while the host is busy: auto (when --threads is 0, the default), on, off "
                 "(docs/threads.md)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd.add_flag("--legalize", flags.legalize,
               "rewrite nodes no listed backend has a kernel for into standard ops they run, where a rewrite "
               "exists (`ferry check` lists them as \"rewrite available\")");
  cmd.add_option("--isa", flags.isa, "emulate a CPU with only these extensions, e.g. avx2,fma (or none)");
  AddPlacementFlags(cmd, flags.placement);
}

void LoadPlugins(const std::vector<std::string>& plugins) {
  for (const std::string& path : plugins) LoadPlugin(path);
}

void CheckBackendNames(const std::vector<std::string>& backends,
                       const std::vector<std::pair<std::string, std::string>>& pins, const std::string& where) {
  const auto unknown = [&](const std::string& flag, const std::string& name) {
    std::string known;
    for (const auto& n : BackendNames()) known += (known.empty() ? "" : ", ") + n;
    throw InvalidArgumentError((where.empty() ? flag : where) + "unknown backend '" + name + "' (available: " + known +
                               ")");
  };
  if (backends.empty()) throw InvalidArgumentError((where.empty() ? "--backends: " : where) + "the list is empty");
  for (const std::string& name : backends) {
    if (!FindBackend(name)) unknown("--backends: ", name);
  }
  for (const auto& [pattern, name] : pins) {
    if (!FindBackend(name)) unknown("--pin " + pattern + "=" + name + ": ", name);
  }
}

void CapOneDnnIsa(const std::string& isa) {
  // The session's target is this CPU narrowed by FERRY_ISA and then by --isa (runtime/target.cc): so is oneDNN.
  if (!isa.empty()) cpu::CapDnnlIsa(DefaultIsa() & IsaSet::Parse(isa));
}

std::vector<std::string> SplitList(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

namespace {

// Refuses the second value of a NAME=VALUE flag for the same NAME: a map keeps one of them, and which one the
// command used would be an accident of parsing.
void RequireFirst(const std::map<std::string, std::string>& seen, const std::string& flag, const std::string& name,
                  const std::string& value) {
  auto it = seen.find(name);
  if (it != seen.end()) {
    throw InvalidArgumentError(flag + " " + name + " is given twice ('" + it->second + "' and '" + value + "')");
  }
}

}  // namespace

void ParseInputFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& ranges,
                     tools::InputSpec& spec) {
  std::map<std::string, std::string> seen;
  for (const auto& s : shapes) {
    auto [n, v] = tools::ParseAssignment(s, "--shape");
    RequireFirst(seen, "--shape", n, v);
    seen[n] = v;
    spec.shapes[n] = tools::ParseDims(v, "--shape " + n);
  }
  seen.clear();
  for (const auto& s : ranges) {
    auto [n, v] = tools::ParseAssignment(s, "--range");
    RequireFirst(seen, "--range", n, v);
    seen[n] = v;
    const std::vector<std::string> parts = SplitList(v);
    const std::optional<double> lo = parts.size() == 2 ? ParseDouble(parts[0]) : std::nullopt;
    const std::optional<double> hi = parts.size() == 2 ? ParseDouble(parts[1]) : std::nullopt;
    if (!lo || !hi) throw InvalidArgumentError("--range " + n + ": expected LO,HI, got '" + v + "'");
    if (!(*lo < *hi)) throw InvalidArgumentError("--range " + n + ": LO must be below HI");
    spec.ranges[n] = {*lo, *hi};
  }
}

void ParseInputFiles(const std::vector<std::string>& inputs, tools::InputSpec& spec) {
  for (const auto& s : inputs) {
    auto [n, v] = tools::ParseAssignment(s, "--input");
    RequireFirst(spec.files, "--input", n, v);
    spec.files[n] = v;
  }
}

CLI::Validator ThreadCount() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const std::optional<int64_t> v = ParseInt64(s);
        if (!v) return "'" + s + "' is not an integer";
        if (*v < 0 || *v > kMaxThreads) {
          return std::to_string(*v) + " is out of range: expected 0 (all cores) to " + std::to_string(kMaxThreads);
        }
        return "";
      },
      "INT in 0.." + std::to_string(kMaxThreads));
}

}  // namespace ferry::cli
