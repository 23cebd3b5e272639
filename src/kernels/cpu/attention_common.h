// What the cpu backend's two attention kernels share (attention.cc: ai.ferry Attention; onnx_attention.cc: ONNX
// Attention): how the query rows of one unit of work (a head, or a group of heads) are cut into tasks, and the
// parallel loop over the tasks that gives each thread one scores block and reports a failed dnnl_sgemm.
#pragma once

#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "ferry/error.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel.h"

namespace ferry::cpu {

// Query rows per task for `units` units of m > 0 query rows each against `keys` keys: a scores block of at most
// 32K floats (it stays in L2 with the Q, K and V panels the two products stream), min_rows to 64 rows, and enough
// tasks to keep `threads` threads busy while a task keeps min_rows rows. The blocks of a unit are of even size (no
// small remainder block).
inline int64_t AttentionRowsPerTask(int64_t units, int64_t m, int64_t keys, int threads, int64_t min_rows) {
  const int64_t cap = std::clamp<int64_t>(32768 / std::max<int64_t>(keys, 1), min_rows, 64);
  int64_t blocks = (m + cap - 1) / cap;
  while (units * blocks < threads && (m + blocks) / (blocks + 1) >= min_rows) ++blocks;
  return (m + blocks - 1) / blocks;
}

// Runs fn(task, scores) for every task in [0, tasks) over `threads` threads, each thread with one scratch block of
// `block_floats` floats for its scores; fn returns the status of its dnnl_sgemm calls. dnnl_sgemm inside the
// parallel region runs single-threaded (oneDNN does not nest parallelism under OpenMP); when the tasks run inline
// it gets `threads` threads. A failed call throws InternalError naming the node once the tasks have run.
template <class Fn>
void RunAttentionTasks(const KernelContext& ctx, int threads, int64_t tasks, int64_t block_floats, Fn fn) {
  std::atomic<int> status{dnnl_success};
  ScopedOmpThreads omp(threads);  // for dnnl_sgemm when the tasks run inline
  ParallelFor(threads, tasks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<size_t>(block_floats));
    for (int64_t t = begin; t < end; ++t) {
      const dnnl_status_t rc = fn(t, scratch.data());
      if (rc != dnnl_success) status.store(rc);
    }
  });
  if (status.load() != dnnl_success) {
    throw InternalError(ctx.Describe() + ": oneDNN dnnl_sgemm failed with status " + std::to_string(status.load()));
  }
}

}  // namespace ferry::cpu
