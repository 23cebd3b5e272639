// The float pooling loops of the ref MaxPool / AveragePool (pool.cc) and GlobalMaxPool / GlobalAveragePool
// (global_pool.cc) kernels, for kernels that pool data they have rearranged first (ai.ferry BlockedPool).
// Each reduces `planes` independent planes; planes are split over up to `threads` threads when the work is large.
#pragma once

#include <cstdint>

#include "kernels/ref/conv_util.h"

namespace ferry::ref {

// y[p][o] = max of plane p over output position o's taps inside the input (NaNs skipped; -inf when no tap is
// inside), for planes of g.in_size() elements into planes of g.out_size(). MaxPool without Indices.
void MaxPoolF32(const float* x, int64_t planes, const WindowGeometry& g, float* y, int threads);

// y[p][o] = mean over output position o's taps inside the input, or with count_include_pad the sum divided by
// the taps inside the padded input. AveragePool.
void AveragePoolF32(const float* x, int64_t planes, const WindowGeometry& g, bool count_include_pad, float* y,
                    int threads);

// y[p] = max (NaN propagates) / mean of the `size` elements of plane p. GlobalMaxPool / GlobalAveragePool.
void GlobalMaxPoolF32(const float* x, int64_t planes, int64_t size, float* y, int threads);
void GlobalAveragePoolF32(const float* x, int64_t planes, int64_t size, float* y, int threads);

}  // namespace ferry::ref
