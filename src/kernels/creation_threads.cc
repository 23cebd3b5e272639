#include "kernels/creation_threads.h"

#include <algorithm>
#include <thread>

namespace ferry {
namespace {
thread_local int creation_threads = 0;  // 0: none set
}  // namespace

int CreationThreads() {
  if (creation_threads > 0) return creation_threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

ScopedCreationThreads::ScopedCreationThreads(int threads) : saved_(creation_threads) {
  creation_threads = std::max(threads, 0);
}

ScopedCreationThreads::~ScopedCreationThreads() { creation_threads = saved_; }

}  // namespace ferry
