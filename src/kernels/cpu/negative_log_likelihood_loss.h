// What the cpu NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss kernels share beyond ref's loss_util.h (whose
// checks and per-position loss they use): their attributes, the split of the [N, D] positions into (batch entry,
// column block) items run on several threads, and the reduction of the items' partial sums in item order, so the
// result does not depend on the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.h"
#include "ir/graph.h"
#include "kernels/ref/loss_util.h"

namespace ferry::cpu {

struct LossAttributes {
  explicit LossAttributes(const ir::Node& node)
      : reduction(ref::ParseLossReduction(node)),
        has_ignore(node.has_attr("ignore_index")),
        ignore_index(node.GetInt("ignore_index", 0)) {}
  ref::LossReduction reduction;
  bool has_ignore;
  int64_t ignore_index;
};

// Calls body(scratch, i, j0, j1, sum, weight_sum) for every batch entry i and block [j0, j1) of at most `block` of
// its D positions, items split over `threads` threads (at least `grain` items a thread; `scratch`, a vector of S,
// is the thread's for its items); returns the reduced loss of the partial sums and weights the bodies added,
// summed in item order.
template <typename S, typename Body>
double ForLossBlocks(int threads, const ref::LossShape& s, ref::LossReduction reduction, int64_t block,
                     int64_t grain, Body&& body) {
  const int64_t blocks = (s.d + block - 1) / block;
  const int64_t items = s.n * blocks;
  std::vector<double> partial(static_cast<size_t>(2 * items), 0.0);
  ParallelFor(threads, items, std::max<int64_t>(1, grain), [&](int64_t b, int64_t e) {
    std::vector<S> scratch;
    for (int64_t it = b; it < e; ++it) {
      const int64_t i = it / blocks, j0 = (it % blocks) * block, j1 = std::min(s.d, j0 + block);
      body(scratch, i, j0, j1, partial[static_cast<size_t>(2 * it)], partial[static_cast<size_t>(2 * it + 1)]);
    }
  });
  double sum = 0, weight_sum = 0;
  for (int64_t it = 0; it < items; ++it) {
    sum += partial[static_cast<size_t>(2 * it)];
    weight_sum += partial[static_cast<size_t>(2 * it + 1)];
  }
  return ref::ReduceLoss(reduction, sum, weight_sum);
}

}  // namespace ferry::cpu
