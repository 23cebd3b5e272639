// Ferry's blocked channel layout (src/schemas/schemas_ferry.cc) on oneDNN: a tensor of logical shape
// [N, C, D1..Dk] stored as [N, ceil(C/b), D1..Dk, b] is oneDNN's nCw{b}c / nChw{b}c / nCdhw{b}c over the logical
// dims, with C padded to a multiple of b ("padded dims": oneDNN computes them from the tag, and the desc's size is
// exactly the Ferry tensor's); block 0, channels-last [N, D1..Dk, C], is its nwc / nhwc / ndhwc. oneDNN's reorders
// and convolutions write zeros into the padding channels; memory objects over a user buffer do not touch it
// (checked on oneDNN 2.6). Blocks 8, 16 and 0, logical rank 3 to 5 (1-D to 3-D): oneDNN has no blocked tag for
// rank 2.
#pragma once

#include <dnnl.hpp>
#include <string>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry::cpu {

inline constexpr int64_t kMinBlockedRank = 3, kMaxBlockedRank = 5;  // logical ranks with a oneDNN blocked tag

// "" when `block` is one the cpu kernels run (8, 16, or 0: channels-last), else the reason, naming `op`.
std::string BlockReason(const std::string& op, int64_t block);

// oneDNN's desc of a blocked tensor over `logical` [N, C, D...] (rank 3 to 5; block 8, 16 or 0); throws
// InternalError when oneDNN's size disagrees with the Ferry tensor's (it never should).
dnnl::memory::desc BlockedDesc(const Shape& logical, int64_t block);

// [N, C, D...] -> [N, ceil(C/b), D..., b] (block 0: [N, D..., C]).
Shape BlockedShape(const Shape& logical, int64_t block);

// The rank of a blocked tensor whose logical rank is `rank`: one more unless channels-last.
inline int64_t BlockedRank(int64_t rank, int64_t block) { return block > 0 ? rank + 1 : rank; }

// Back to the logical shape [N, channels, D...] (the caller checks that `blocked` is BlockedShape of it).
Shape LogicalShape(const Shape& blocked, int64_t channels, int64_t block);

// Copies the tensor `from` (shape `blocked` [N, Cb, D..., b], b = `block` > 0) to `to` with zeros in the padding
// channels (those past `channels`), over `threads` threads. oneDNN's sum post-op needs this of its dst: primitives
// take their inputs' padding to be zero and re-zero the dst's only where an activation does not keep 0 at 0.
void CopyZeroingPadding(const float* from, float* to, const Shape& blocked, int64_t channels, int threads);

}  // namespace ferry::cpu
