// The memory planner: buffer lifetimes in, offsets into one arena and the arena's size out. Standalone (no IR,
// no executor): callers describe each buffer as a BufferRequest over their own step numbering.
//
// Algorithm: "greedy by size" with best fit (Pisarchyk & Lee 2020, "Efficient Memory Management for Deep
// Neural Net Inference"; TFLite's greedy planner). Buffers are placed largest first (ties: earlier first_step,
// then lower index, so plans are deterministic); each goes into the gap between already-placed buffers whose
// lifetimes overlap its own that fits it with the least room to spare (lowest offset among equals), else after
// the highest of them. An in-place chain (alias_of) is placed as one unit: the union of its lifetimes, the
// largest of its sizes, one offset for all its members.
//
// Quality: `lower_bound` is the most bytes live at any one step; no plan can use less. arena_bytes /
// lower_bound (1.0 at best) is the figure to watch; greedy by size is usually within a few percent of it on
// CNNs and transformers, but interval placement is NP-hard in general, so some inputs stay above it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ferry::runtime {

struct BufferRequest {
  int64_t bytes = 0;
  int first_step = 0;  // defined at first_step ...
  int last_step = 0;   // ... last read at last_step (inclusive)
  // In place: this buffer takes over request `alias_of`'s memory. That request must die at this buffer's
  // first_step (its last_step == this first_step) and be at least as large; a request is taken over at most
  // once. -1: none.
  int alias_of = -1;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, a multiple of `alignment`; 0 for zero-byte buffers
  int64_t arena_bytes = 0;       // end of the highest placed buffer (sizes rounded up to `alignment`)
  int64_t lower_bound = 0;       // max over steps of the (rounded) bytes live then; an alias chain counts once
  int64_t alignment = 0;         // what the plan was made with
};

// Plans `requests`. Two buffers whose lifetimes ([first_step, last_step]) intersect never share bytes, except
// the members of one alias chain, which share one offset. Zero-byte buffers get offset 0 and occupy nothing.
// O(n^2) in the worst case (every buffer overlapping every other). Throws InvalidArgumentError naming the
// request index for: a negative size, first_step > last_step, alias_of out of range or on a cycle, an alias
// whose target does not die at its first step or is smaller, a request taken over twice; and for an alignment
// that is not positive or sizes whose total overflows int64.
MemoryPlan PlanMemory(std::span<const BufferRequest> requests, int64_t alignment = 64);

// Checks `plan` against `requests` (for tests and debugging): one offset per request, each a multiple of the
// plan's alignment, every buffer inside the arena, alias chains on one offset, no two buffers with intersecting
// lifetimes sharing a byte. On failure returns false and, when `why` is given, says which requests and why.
bool PlanIsValid(std::span<const BufferRequest> requests, const MemoryPlan& plan, std::string* why = nullptr);

}  // namespace ferry::runtime
