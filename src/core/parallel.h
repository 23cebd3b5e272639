// Intra-op parallelism for kernels: split [0, n) into chunks over `threads` OpenMP threads.
// Runs inline when threads <= 1 or the work is small, so kernels can call it unconditionally.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferry {

// The most intra-op threads a kernel may use on this thread now; 0: no cap. The adaptive thread policy sets it to 1
// for a serial run (runtime/thread_policy.h), whatever thread count a kernel prepared for: ParallelFor and the cpu
// backend's OpenMP thread counts for oneDNN (kernels/cpu/dnnl_util.h) honour it, so that a library planning its
// split by the thread count it is told never plans for a team it will not get.
inline thread_local int thread_cap = 0;
inline int CappedThreads(int threads) { return thread_cap > 0 ? std::min(threads, thread_cap) : threads; }

template <typename Fn>
void ParallelFor(int threads, int64_t n, int64_t min_chunk, Fn&& fn) {
  if (n <= 0) return;
  threads = CappedThreads(threads);
  int64_t chunks = std::min<int64_t>(threads, (n + min_chunk - 1) / std::max<int64_t>(min_chunk, 1));
  if (chunks <= 1) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = n * c / chunks;
    int64_t end = n * (c + 1) / chunks;
    fn(begin, end);
  }
}

}  // namespace ferry
