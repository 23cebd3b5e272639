#include "kernels/ref/reduce.h"

namespace ferry::ref {

std::vector<bool> ReduceAxesMask(std::span<const int64_t> axes, int64_t rank, const std::string& what) {
  std::vector<bool> mask(static_cast<size_t>(rank), axes.empty());
  const int64_t r = std::max<int64_t>(rank, 1);
  for (int64_t a : axes) {
    if (a < -r || a >= r) {
      throw InvalidArgumentError(what + ": axis " + std::to_string(a) + " is out of range for rank " +
                                 std::to_string(rank));
    }
    if (rank == 0) continue;  // a scalar: axis 0 / -1 is accepted and there is nothing to reduce
    mask[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  return mask;
}

Shape ReducedShape(const Shape& in, const std::vector<bool>& mask, bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!mask[i]) {
      out.push_back(in[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

ReducePlan MakeReducePlan(const Shape& in, const std::vector<bool>& mask) {
  ReducePlan plan;
  plan.out_count = 1;
  plan.reduce_count = 1;
  for (size_t i = 0; i < in.size(); ++i) (mask[i] ? plan.reduce_count : plan.out_count) *= in[i];
  if (plan.out_count == 0 || plan.reduce_count == 0) return plan;

  // Drop size-1 dims (the remaining dims stay contiguous) and merge neighbours of the same kind.
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == 1) continue;
    if (!dims.empty() && reduced.back() == mask[i]) {
      dims.back() *= in[i];
    } else {
      dims.push_back(in[i]);
      reduced.push_back(mask[i]);
    }
  }
  if (dims.empty()) return plan;  // every dim is 1: one element per output, inner_reduced with inner 1

  std::vector<int64_t> strides = Strides(dims);
  plan.inner_reduced = reduced.back();
  plan.inner = dims.back();
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (reduced[i]) {
      plan.red_dims.push_back(dims[i]);
      plan.red_strides.push_back(strides[i]);
    } else {
      plan.kept_dims.push_back(dims[i]);
      plan.kept_strides.push_back(strides[i]);
    }
  }
  return plan;
}

}  // namespace ferry::ref
