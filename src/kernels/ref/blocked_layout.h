// The blocked channel layout of the ai.ferry ops (schemas_ferry.cc): a tensor of logical shape [N, C, D...] is
// stored as [N, ceil(C/b), D..., b], element (n, c, d...) at [n, c / b, d..., c % b]. The lanes past C in the last
// block are padding. Block 0 is channels-last, [N, D..., C]: the same addressing with b = C and the unit dim
// dropped. Block / unblock between the layouts, shapes, and the validation the kernels share.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/parallel.h"
#include "ferry/tensor.h"

namespace ferry::ref {

// Lanes per block: `block`, or every channel for channels-last (block 0).
inline int64_t Lanes(int64_t channels, int64_t block) { return block > 0 ? block : channels; }
inline int64_t BlockCount(int64_t channels, int64_t block) {
  const int64_t lanes = Lanes(channels, block);
  return lanes == 0 ? 0 : channels / lanes + (channels % lanes != 0);
}

// [N, C, D...] -> [N, ceil(C/b), D..., b] (block 0: [N, D..., C]). plain must have rank >= 2.
Shape BlockedShape(std::span<const int64_t> plain, int64_t block);
// The spatial dims D... of a blocked shape (empty when the rank is too small for one).
std::span<const int64_t> BlockedSpatial(std::span<const int64_t> blocked, int64_t block);

// Throws InvalidArgumentError "<what>: input <name> has shape [..], expected [..] (<logical> blocked by b)" unless
// `shape` is BlockedShape(logical, block).
void CheckBlockedShape(const Shape& shape, std::span<const int64_t> logical, int64_t block, const std::string& what,
                       const char* name);

// Copies plain x [N, C, S] (S = the product of the dims after C) into blocked y [N, ceil(C/b), S, b] (block 0:
// [N, S, C]). The padding lanes of y are not written: pass a zeroed y to get zero padding.
template <typename T>
void BlockChannels(const T* x, int64_t batch, int64_t channels, int64_t spatial, int64_t block, T* y,
                   int threads = 1) {
  const int64_t cb = BlockCount(channels, block);
  block = Lanes(channels, block);
  const int64_t planes = batch * channels;
  ParallelFor(planes * spatial < (1 << 16) ? 1 : threads, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / channels, c = p % channels;
      const T* src = x + p * spatial;
      T* dst = y + (n * cb + c / block) * spatial * block + c % block;
      for (int64_t s = 0; s < spatial; ++s) dst[s * block] = src[s];
    }
  });
}

// The inverse: blocked x [N, ceil(C/b), S, b] -> plain y [N, C, S]; the padding lanes of x are not read.
template <typename T>
void UnblockChannels(const T* x, int64_t batch, int64_t channels, int64_t spatial, int64_t block, T* y,
                     int threads = 1) {
  const int64_t cb = BlockCount(channels, block);
  block = Lanes(channels, block);
  const int64_t planes = batch * channels;
  ParallelFor(planes * spatial < (1 << 16) ? 1 : threads, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / channels, c = p % channels;
      const T* src = x + (n * cb + c / block) * spatial * block + c % block;
      T* dst = y + p * spatial;
      for (int64_t s = 0; s < spatial; ++s) dst[s] = src[s * block];
    }
  });
}

}  // namespace ferry::ref
