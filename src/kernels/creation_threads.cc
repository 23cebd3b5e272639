#include "kernels/creation_threads.h"

#include <algorithm>
#include <thread>

#include "ferry/limits.h"

namespace ferry {
namespace {
thread_local int creation_threads = 0;  // 0: none set
}  // namespace

int CreationThreads() {
  if (creation_threads > 0) return creation_threads;
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

ScopedCreationThreads::ScopedCreationThreads(int threads) : saved_(creation_threads) {
  creation_threads = std::clamp(threads, 0, kMaxThreads);
}

ScopedCreationThreads::~ScopedCreationThreads() { creation_threads = saved_; }

}  // namespace ferry
