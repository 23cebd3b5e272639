// Tensor buffers: 64-byte aligned, and for large ones (>= 64 KiB) recycled through a process-wide pool, so that
// a model run again and again reuses its activation buffers instead of mapping fresh pages (and faulting them
// in) on every run. Blocks are grouped in size classes 1/8 of a power of two apart (at most 12.5% slack); the
// pool keeps at most kPoolCapBytes of free blocks and frees the rest. Thread-safe.
//
// An interim measure: the memory planner (one arena per plan, no allocation in steady state) replaces it.
#pragma once

#include <cstddef>
#include <memory>

namespace ferry {

inline constexpr size_t kPoolMinBytes = size_t{64} << 10;
inline constexpr size_t kPoolCapBytes = size_t{1} << 30;

// A buffer of at least `bytes` (never null), zero-filled when `zero`. Throws ResourceExhaustedError when out of
// memory. The shared_ptr's deleter returns the block to the pool.
std::shared_ptr<void> AllocateBuffer(size_t bytes, bool zero);

// Bytes currently held by the pool's free lists (for tests and reports).
size_t PooledBytes();

}  // namespace ferry
