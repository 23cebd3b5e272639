#include "core/buffer_pool.h"

#include <atomic>
#include <bit>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

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

void Release(void* p, size_t size) {
  Pool& pool = ThePool();
  if (size <= kPoolMaxBlockBytes) {
    std::lock_guard lock(pool.mu);
    if (pool.held + size <= kPoolCapBytes) {
      pool.free[size].push_back(p);
      pool.held += size;
      return;
    }
  }
  ::operator delete(p, kAlign);
}

void* Take(size_t size) {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  auto it = pool.free.find(size);
  if (it == pool.free.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  pool.held -= size;
  return p;
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
  const size_t size = ClassSize(rounded);
  void* p = Take(size);
  if (!p) p = ::operator new(size, kAlign, std::nothrow);
  if (!p) throw ResourceExhaustedError("out of memory allocating " + std::to_string(bytes) + " bytes for a tensor");
  if (zero) std::memset(p, 0, bytes);
  return std::shared_ptr<void>(p, [size](void* q) { Release(q, size); });
}

size_t PooledBytes() {
  Pool& pool = ThePool();
  std::lock_guard lock(pool.mu);
  return pool.held;
}

}  // namespace ferry
