// Compress's checks and loop bounds, shared by the ref and cpu kernels: the slices along `axis` (of the flattened
// input when axis is absent) whose `condition` entry is true are kept. A condition shorter than the axis drops the
// remaining slices; true entries past its end are an InvalidArgumentError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"

namespace ferry::ref {

// The loop around the axis: x is [outer, dim, inner] (its shape, or [size] without an axis).
struct CompressPlan {
  Shape shape;  // x's shape, or [size] without an axis
  int64_t axis = 0, dim = 0, outer = 1, inner = 1;
};

// The condition's type and rank, the axis and the loop around it; the output's length along the axis is the
// number of true entries (data): output 0 is dynamic.
inline CompressPlan PrepareCompress(PrepareContext& ctx, bool has_axis, int64_t axis) {
  const InputSpec& x = ctx.tensor_input(0);
  const InputSpec& cond = ctx.tensor_input(1);
  if (cond.dtype != DataType::kBool || cond.shape.size() != 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'condition' must be a 1-D bool tensor, got " +
                               ctx.InputString(1));
  }
  DispatchElements(x.dtype, ctx.Describe(), [](auto) {});  // a type with a storage layout
  CompressPlan p;
  p.shape = has_axis ? x.shape : Shape{ShapeElementCount(x.shape)};
  const int64_t rank = static_cast<int64_t>(p.shape.size());
  p.axis = has_axis ? NormalizeAxis(axis, rank, ctx.Describe()) : 0;
  p.dim = p.shape[static_cast<size_t>(p.axis)];
  for (int64_t d = 0; d < rank; ++d) {
    if (d < p.axis) p.outer *= p.shape[static_cast<size_t>(d)];
    if (d > p.axis) p.inner *= p.shape[static_cast<size_t>(d)];
  }
  ctx.SetOutputDynamic(0);
  return p;
}

// The indices along the axis that the condition keeps, and the output's shape; throws naming the node for a true
// entry past the axis' end.
inline std::vector<int64_t> CompressKept(const KernelContext& ctx, const CompressPlan& p, Shape& out_shape) {
  const Tensor& cond = ctx.required_input(1);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.size(); ++i) {
    if (!cond.data<bool>()[i]) continue;
    if (i >= p.dim) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'condition' " + DescribeTensor(cond) + " selects index " +
                                 std::to_string(i) + " beyond dimension " + std::to_string(p.dim));
    }
    keep.push_back(i);
  }
  out_shape = p.shape;
  out_shape[static_cast<size_t>(p.axis)] = static_cast<int64_t>(keep.size());
  return keep;
}

}  // namespace ferry::ref
