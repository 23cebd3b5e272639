// Intra-op parallelism for kernels: split [0, n) into chunks over `threads` OpenMP threads.
// Runs inline when threads <= 1 or the work is small, so kernels can call it unconditionally.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ferry {

template <typename Fn>
void ParallelFor(int threads, int64_t n, int64_t min_chunk, Fn&& fn) {
  if (n <= 0) return;
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
