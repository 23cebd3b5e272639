// TopK's attributes, checks and plan, shared by the ref and cpu kernels, which differ only in how they select.
// Opset 1 takes k as an attribute, later versions as a 1-element K input (a host input): Prepare plans the outputs
// when k is known before the run, else the outputs are dynamic and Compute resolves the run's K with Resolve.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// k of the axis' n elements, X as [outer, n, inner] around the axis, and the outputs' shape.
struct TopKPlan {
  int64_t k = 0, n = 0, outer = 1, inner = 1;
  Shape out_shape;
};

class TopKBase : public OpKernel {
 public:
  // Reads k (opset 1), axis and largest; throws InvalidModelError naming the node for a missing or negative k.
  explicit TopKBase(const ir::Node& node);

  // X's rank, the axis and K's dtype and size; with k known, the plan (the kernel's state) and the outputs.
  void Prepare(PrepareContext& ctx) const override;

 protected:
  // The plan for X's shape and k (the attribute, or `k_data`: K's data, of the dtype and size Prepare checked);
  // throws InvalidArgumentError naming `what` when k does not fit the axis.
  TopKPlan Resolve(const Shape& x_shape, const Tensor* k_data, const std::string& what) const;
  bool largest() const { return largest_; }

 private:
  bool k_from_input_;
  int64_t k_attr_;
  int64_t axis_;
  bool largest_;
};

}  // namespace ferry::ref
