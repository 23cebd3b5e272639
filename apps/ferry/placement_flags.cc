#include "placement_flags.h"

#include "ferry/error.h"

namespace ferry::cli {

std::vector<std::pair<std::string, std::string>> PlacementFlags::ParsedPins() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& p : pins) {
    const size_t eq = p.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size()) {
      throw InvalidArgumentError("--pin: expected NODE_OR_OP=BACKEND, got '" + p + "'");
    }
    out.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  return out;
}

void AddPluginFlag(CLI::App& cmd, PlacementFlags& flags) {
  cmd.add_option("--plugin", flags.plugins,
                 "load a custom-op plugin (shared library, docs/plugins.md); its backend is named after the file "
                 "and appended to the backends; repeatable");
}

void AddPlacementFlags(CLI::App& cmd, PlacementFlags& flags) {
  AddPluginFlag(cmd, flags);
  cmd.add_option("--pin", flags.pins,
                 "NODE_OR_OP=BACKEND: run that node (by name), or every node of that op type, on BACKEND; repeatable");
  cmd.add_flag("--no-fallback", flags.no_fallback,
               "every node must run on the first backend (or on the plugin providing its custom op)");
}

}  // namespace ferry::cli
