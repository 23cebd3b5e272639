// ReverseSequence's checks and loop bounds, shared by the ref and cpu kernels: for each batch entry b, the first
// sequence_lens[b] steps along time_axis are reversed and the rest copied. batch_axis and time_axis are 0 and 1 in
// either order; the input has rank >= 2.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"

namespace ferry::ref {

// The loop over (batch entry, time step) pairs of `inner` contiguous elements.
struct ReverseSequencePlan {
  int64_t batch = 0, time = 0;
  int64_t inner = 0;                 // elements per (batch, time) step
  int64_t bstride = 0, tstride = 0;  // element strides of the batch and time axes
};

// The node's batch_axis and time_axis, checked (0 and 1 in either order).
struct ReverseSequenceAxes {
  explicit ReverseSequenceAxes(const ir::Node& node)
      : batch_axis(node.GetInt("batch_axis", 1)), time_axis(node.GetInt("time_axis", 0)) {
    if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0))) {
      throw InvalidModelError(node.Describe() + ": batch_axis and time_axis must be 0 and 1 (in either order)");
    }
  }
  int64_t batch_axis, time_axis;
};

// The input's rank, sequence_lens' type and size; declares Y (X's type and shape) and returns the loop bounds.
inline ReverseSequencePlan PrepareReverseSequence(PrepareContext& ctx, const ReverseSequenceAxes& axes) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& lens = ctx.tensor_input(1);
  if (x.shape.size() < 2) {
    throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2, got " + ctx.InputString(0));
  }
  if (lens.dtype != DataType::kInt32 && lens.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens': expected an int32 or int64 tensor, got " +
                               ctx.InputString(1));
  }
  ReverseSequencePlan p;
  p.batch = x.shape[static_cast<size_t>(axes.batch_axis)];
  p.time = x.shape[static_cast<size_t>(axes.time_axis)];
  if (ShapeElementCount(lens.shape) != p.batch) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' " + ctx.InputString(1) +
                               " must have one entry per batch entry of " + ctx.InputString(0));
  }
  const int64_t size = ShapeElementCount(x.shape);
  p.inner = size == 0 ? 0 : size / (p.batch * p.time);
  p.bstride = (axes.batch_axis == 0 ? p.time : 1) * p.inner;
  p.tstride = (axes.time_axis == 0 ? p.batch : 1) * p.inner;
  ctx.SetOutput(0, x.dtype, x.shape);
  return p;
}

// sequence_lens' values, each checked against [0, time]; throws naming the node.
inline std::vector<int64_t> ReverseSequenceLengths(const KernelContext& ctx, const ReverseSequencePlan& p) {
  const Tensor& lens_t = ctx.required_input(1);
  std::vector<int64_t> lens(static_cast<size_t>(p.batch));
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t l = IndexAt(lens_t, b);  // int32 or int64: Prepare checked
    if (l < 0 || l > p.time) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' has length " + std::to_string(l) +
                                 " outside [0, " + std::to_string(p.time) + "]");
    }
    lens[static_cast<size_t>(b)] = l;
  }
  return lens;
}

// The time step that output step t of a sequence of length `len` comes from.
inline int64_t ReverseSequenceSource(int64_t t, int64_t len) { return t < len ? len - 1 - t : t; }

}  // namespace ferry::ref
