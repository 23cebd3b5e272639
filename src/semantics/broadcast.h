// Broadcasting (ONNX / numpy): multidirectional for the elementwise ops, Where, Expand and MatMul's batch dims
// (shapes right-aligned; along each dim the extents are equal, or all but one are 1), unidirectional where one
// operand must fit another (Gemm's C, the normalizations' scale and bias). The one rule shape inference (over
// possibly-symbolic dims) and the kernels (over static shapes) apply.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry::semantics {

// One dim pair: the broadcast extent, or nullopt when neither is 1 and they differ.
inline std::optional<int64_t> BroadcastDim(int64_t a, int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  return std::nullopt;
}

// One dim pair where either may be symbolic or unknown: static pairs as above (*conflict set, an unknown dim
// returned, when they do not broadcast); a static 1 yields the other; a static dim other than 1 decides (the
// other side must be 1 or equal to it at run time); the same symbol stays; anything else is unknown.
ir::Dim BroadcastDim(const ir::Dim& a, const ir::Dim& b, bool* conflict);

// The multidirectional broadcast of `shapes`, or nullopt when two of them conflict.
std::optional<Shape> BroadcastShapes(std::span<const Shape> shapes);

// Unidirectional: whether `from` broadcasts to `to` (rank at most to's; each of its dims, right-aligned, 1 or
// to's).
bool BroadcastsTo(const Shape& from, const Shape& to);

}  // namespace ferry::semantics
