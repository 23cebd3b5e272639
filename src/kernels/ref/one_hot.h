// OneHot's depth and output shape, shared by the ref and cpu kernels (the depth is resolved in Prepare when it is a
// constant, else in Compute from the data, so these take either context).
#pragma once

#include <cstdint>
#include <string>

#include "ferry/error.h"
#include "ferry/tensor.h"
#include "kernels/ref/copy_util.h"

namespace ferry::ref {

// Runs fn() (a copy_util reader given an empty description) and puts `ctx`'s description and `what` before the
// message of the InvalidArgumentError it throws: the description is built only on that error path.
template <typename Ctx, typename Fn>
auto OneHotNaming(const Ctx& ctx, const char* what, Fn&& fn) {
  try {
    return fn();
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(ctx.Describe() + what + e.what());
  }
}

// The depth input's value (a positive scalar).
template <typename Ctx>
int64_t ResolveOneHotDepth(const Tensor& depth_t, const Ctx& ctx) {
  const int64_t depth =
      OneHotNaming(ctx, ": input 'depth'", [&] { return ReadScalarInteger(depth_t, std::string()); });
  if (depth <= 0) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'depth' must be positive, got " + std::to_string(depth));
  }
  return depth;
}

// The indices' shape with `depth` inserted at `axis` (in [0, rank]).
inline Shape OneHotShape(const Shape& indices, int64_t axis, int64_t depth) {
  Shape out_shape(indices.begin(), indices.begin() + axis);
  out_shape.push_back(depth);
  out_shape.insert(out_shape.end(), indices.begin() + axis, indices.end());
  return out_shape;
}

}  // namespace ferry::ref
