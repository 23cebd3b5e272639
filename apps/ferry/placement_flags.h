// Flags every verb that places a model shares: --plugin, --pin, --no-fallback (`ferry ops` takes --plugin only).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ferry::cli {

struct PlacementFlags {
  std::vector<std::string> plugins;
  std::vector<std::string> pins;  // NODE_OR_OP=BACKEND
  bool no_fallback = false;

  // (pattern, backend) pairs; throws InvalidArgumentError for a malformed --pin.
  std::vector<std::pair<std::string, std::string>> ParsedPins() const;
};

void AddPluginFlag(CLI::App& cmd, PlacementFlags& flags);
void AddPlacementFlags(CLI::App& cmd, PlacementFlags& flags);  // --plugin, --pin, --no-fallback

}  // namespace ferry::cli
