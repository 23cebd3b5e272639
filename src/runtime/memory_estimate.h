// Predicting a graph's memory before running it (`ferry check --memory`): the activation arena the memory
// planner (runtime/memory_plan.h) would make from the graph's static shapes, plus the weights and I/O that live
// outside the arena.
//
// Steps are the top graph's nodes in order (the executor's order). A value produced by node i and last read by
// node j (reads by the node's subgraphs of outer values included: runtime/value_reads.h) is a buffer over
// [i, j]; produced but never read, it lives at step i only. Graph inputs and outputs are io_bytes; initializers
// (and initializers imported without data, which are typed values nothing produces) are weights_bytes; neither
// is in the arena. Copies between devices, kernel workspaces and in-place reuse are not modelled, nor are the
// values inside subgraphs (each node with subgraphs gets an `unknown` entry).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace ferry::runtime {

struct GraphMemoryEstimate {
  int64_t weights_bytes = 0;
  int64_t arena_bytes = 0;  // MemoryPlan::arena_bytes of the activations (64-byte alignment)
  int64_t lower_bound = 0;  // MemoryPlan::lower_bound: no plan of these activations is smaller
  int64_t io_bytes = 0;     // graph inputs + outputs
  // Values whose size is not static, counted as 0: "'name': why" (e.g. "'y': shape float32[N,3] is not static").
  std::vector<std::string> unknown;
};

// Bytes of a value of type `type` when they are known statically (a tensor of static shape and a dtype with a
// fixed element size; sub-byte types round up to whole bytes); otherwise -1 and, when `why` is given, the reason.
int64_t StaticValueBytes(const ir::TypeInfo& type, std::string* why = nullptr);

// Never throws on a well-formed graph (sizes too large to count are listed in `unknown`).
GraphMemoryEstimate EstimateGraphMemory(const ir::Graph& g);

}  // namespace ferry::runtime
