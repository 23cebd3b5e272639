#include "core/buffer_pool.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "ferry/error.h"

namespace ferry {
namespace {

constexpr std::align_val_t kAlign{64};

// The smallest class size >= bytes: multiples of 1/8 of the enclosing power of two.
size_t ClassSize(size_t bytes) {
  const size_t pow2 = std::bit_floor(bytes);
  const size_t step = std::max<size_t>(pow2 / 8, 64);
  return (bytes + step - 1) / step * step;
}

struct Pool {
  std::mutex mu;
  std::map<size_t, std::vector<void*>> free;  // class size -> blocks
  size_t held = 0;
};

Pool& ThePool() {
  static auto* pool = new Pool();  // never destroyed: buffers may be released during static destruction
  return *pool;
}

// Blocks of kMapMinBytes and more are pages of their own (mmap), so that freeing one returns it to the system
// at once: from malloc's heap, a freed block in the middle stays resident until everything above it is freed
// too. Fresh pages are zero and cost nothing until written. Under AddressSanitizer every block comes from the
// allocator instead, so that the sanitizer still sees overflows of large tensors.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLargeBlocks = false;
#else
constexpr bool kMapLargeBlocks = true;
#endif

bool Mapped(size_t size) { return kMapLargeBlocks && size >= kMapMinBytes; }

void* MapBlock(size_t size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void FreeBlock(void* p, size_t size) {
  if (Mapped(size)) {
    ::munmap(p, size);
  } else {
    ::operator delete(p, kAlign);
  }
}

thread_local int t_bypass_depth = 0;  // > 0: blocks freed on this thread skip the pool (ScopedPoolBypass)

void Release(void* p, size_t size) {
  Pool& pool = ThePool();
  if (size <= kPoolMaxBlockBytes && t_bypass_depth == 0) {
    std::lock_guard lock(pool.mu);
    if (pool.held + size <= kPoolCapBytes) {
      pool.free[size].push_back(p);
      pool.held += size;
      return;
    }
  }
  FreeBlock(p, size);
}

// A free block of the smallest class that holds `*size` bytes and wastes at most a quarter of itself (it sets
// *size to that class), or nullptr. Taking a larger class than asked lets a run reuse what it freed even
// when its buffers differ in size, instead of mapping new pages beside pooled ones.
void* Take(size_t* size) {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  for (auto it = pool.free.lower_bound(*size); it != pool.free.end() && it->first <= *size + *size / 3; ++it) {
    if (it->second.empty()) continue;
    void* p = it->second.back();
    it->second.pop_back();
    pool.held -= it->first;
    *size = it->first;
    return p;
  }
  return nullptr;
}

std::atomic<uint64_t> g_allocations{0};

}  // namespace

uint64_t BufferAllocationCount() { return g_allocations.load(std::memory_order_relaxed); }

std::shared_ptr<void> AllocateBuffer(size_t bytes, bool zero) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const size_t rounded = std::max<size_t>((bytes + 63) / 64 * 64, 64);
  if (rounded < kPoolMinBytes) {
    void* p = ::operator new(rounded, kAlign, std::nothrow);
    if (!p) throw ResourceExhaustedError("out of memory allocating " + std::to_string(bytes) + " bytes for a tensor");
    if (zero) std::memset(p, 0, rounded);
    return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, kAlign); });
  }
  size_t size = ClassSize(rounded);
  void* p = Take(&size);
  bool zeroed = false;
  if (!p && Mapped(size)) {
    p = MapBlock(size);
    zeroed = p != nullptr;
  } else if (!p) {
    p = ::operator new(size, kAlign, std::nothrow);
  }
  if (!p) throw ResourceExhaustedError("out of memory allocating " + std::to_string(bytes) + " bytes for a tensor");
  if (zero && !zeroed) std::memset(p, 0, bytes);
  return std::shared_ptr<void>(p, [size](void* q) { Release(q, size); });
}

ScopedPoolBypass::ScopedPoolBypass() { ++t_bypass_depth; }
ScopedPoolBypass::~ScopedPoolBypass() { --t_bypass_depth; }

size_t ReleasePooledBuffers() {
  std::map<size_t, std::vector<void*>> blocks;
  size_t released = 0;
  {
    Pool& pool = ThePool();
    std::lock_guard lock(pool.mu);
    blocks.swap(pool.free);
    released = pool.held;
    pool.held = 0;
  }
  for (auto& [size, list] : blocks) {
    for (void* p : list) FreeBlock(p, size);
  }
  return released;
}

void ReturnFreeHeapPages() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

size_t PooledBytes() {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  return pool.held;
}

}  // namespace ferry
