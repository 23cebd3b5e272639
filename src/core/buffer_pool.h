// Tensor buffers: 64-byte aligned, and for large ones (>= 64 KiB) recycled through a process-wide pool, so that
// repeated allocations of one size do not map and fault in fresh pages each time. Blocks are grouped in size
// classes 1/8 of a power of two apart (at most 12.5% slack); the pool keeps at most kPoolCapBytes of free blocks
// of at most kPoolMaxBlockBytes each and frees the rest (so weights freed once packed go back to the allocator,
// where the packed copies reuse them, instead of lingering here). Thread-safe.
//
// Activations of a top-level graph come from the executor's planned arena instead (src/runtime/arena.h) once a
// run has shown their sizes and lifetimes; this pool serves everything else (graph outputs, subgraph values,
// kernel temporaries, the first run of each input-shape signature).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferry {

inline constexpr size_t kPoolMinBytes = size_t{64} << 10;
// Freed blocks up to this size wait in the pool for reuse, up to kPoolCapBytes in all; larger ones, and any
// beyond the cap, go back to the system (activations of steady-state runs come from the executor's arena, so
// the pool mostly serves outputs and first runs; a small cap keeps freed weights from lingering in it).
inline constexpr size_t kPoolMaxBlockBytes = size_t{16} << 20;
inline constexpr size_t kPoolCapBytes = size_t{64} << 20;

// A buffer of at least `bytes` (never null), zero-filled when `zero`. Throws ResourceExhaustedError when out of
// memory. The shared_ptr's deleter returns the block to the pool.
std::shared_ptr<void> AllocateBuffer(size_t bytes, bool zero);

// Bytes currently held by the pool's free lists (for tests and reports).
size_t PooledBytes();

// Buffers AllocateBuffer has handed out in this process so far (pooled or not): tests count the allocations a
// run makes with it.
uint64_t BufferAllocationCount();

}  // namespace ferry
