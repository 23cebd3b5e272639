// The byte figures of a MemoryPrediction as JSON, shared by `ferry check --memory --json` and `ferry run --json`.
#pragma once

#include <nlohmann/json.hpp>

#include "ferry/session.h"

namespace ferry::cli {

// weights_bytes, kernel_bytes, arena_bytes, lower_bound_bytes, io_bytes, workspace_bytes, jit_code_bytes,
// total_bytes, and workspace: [{device, buffer, bytes, threads}].
inline nlohmann::json MemoryPredictionJson(const MemoryPrediction& p) {
  nlohmann::json buffers = nlohmann::json::array();
  for (const WorkspaceBuffer& b : p.workspace) {
    buffers.push_back({{"device", b.device}, {"buffer", b.name}, {"bytes", b.bytes}, {"threads", b.threads}});
  }
  return {{"weights_bytes", p.weights_bytes},
          {"kernel_bytes", p.kernel_bytes},
          {"arena_bytes", p.arena_bytes},
          {"lower_bound_bytes", p.lower_bound},
          {"io_bytes", p.io_bytes},
          {"workspace_bytes", p.workspace_bytes},
          {"workspace", buffers},
          {"jit_code_bytes", p.jit_code_bytes},
          {"total_bytes", p.total()}};
}

}  // namespace ferry::cli
