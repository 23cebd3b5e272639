// Tensor buffers: 64-byte aligned, and for large ones (>= 64 KiB) recycled through a process-wide pool, so that
// repeated allocations of one size do not map and fault in fresh pages each time. Blocks are grouped in size
// classes 1/8 of a power of two apart (at most 12.5% slack), and a request may take a pooled block of a class up
// to a third larger. The pool keeps at most kPoolCapBytes of free blocks of at most kPoolMaxBlockBytes each and
// frees the rest. Blocks of kMapMinBytes and more are mapped pages of their own, so a freed one leaves the process
// at once (weights freed once packed do not linger in a fragmented heap). Thread-safe.
//
// Activations of a top-level graph come from the executor's arena instead (src/runtime/arena.h), planned from
// the prepared kernels' shapes before a signature's first run; this pool serves everything else (graph outputs,
// subgraph values, outputs whose shape only the data tells, kernel temporaries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ferry {

inline constexpr size_t kPoolMinBytes = size_t{64} << 10;
// Freed blocks up to this size wait in the pool for reuse, up to kPoolCapBytes in all; larger ones, and any
// beyond the cap, go back to the system (activations come from the executor's arena, so the pool mostly serves
// outputs; a small cap keeps freed weights from lingering in it).
inline constexpr size_t kPoolMaxBlockBytes = size_t{16} << 20;
inline constexpr size_t kPoolCapBytes = size_t{64} << 20;
// Blocks of at least this size are mapped pages of their own (mmap/munmap, not malloc's heap): freeing one
// returns its memory to the system at once, however the heap is fragmented.
inline constexpr size_t kMapMinBytes = size_t{1} << 20;

// A buffer of at least `bytes` (never null), zero-filled when `zero`. Throws ResourceExhaustedError when out of
// memory. The shared_ptr's deleter returns the block to the pool.
std::shared_ptr<void> AllocateBuffer(size_t bytes, bool zero);

// While one exists, blocks freed on this thread go back to the system instead of the pool. Session creation
// holds one: what it frees is weights its kernels have packed and the import's temporaries, which would only
// wait in the pool (resident) for a reuse that rarely comes.
class ScopedPoolBypass {
 public:
  ScopedPoolBypass();
  ~ScopedPoolBypass();
  ScopedPoolBypass(const ScopedPoolBypass&) = delete;
  ScopedPoolBypass& operator=(const ScopedPoolBypass&) = delete;
};

// Frees every block the pool holds and returns the bytes freed (the pool is a cache: nothing else is lost).
size_t ReleasePooledBuffers();

// Hands the free pages of malloc's heap back to the system (malloc_trim), after a phase that freed what the
// process will not reuse: a session's creation. Blocks under kMapMinBytes, and whatever else came from the heap
// (the protobuf's data, oneDNN's packed weights once glibc's dynamic mmap threshold has risen), stay resident when
// freed otherwise, wherever a live block above them keeps the heap from shrinking.
void ReturnFreeHeapPages();

// Bytes currently held by the pool's free lists (for tests and reports).
size_t PooledBytes();

// Buffers AllocateBuffer has handed out in this process so far (pooled or not): tests count the allocations a
// run makes with it.
uint64_t BufferAllocationCount();

}  // namespace ferry
