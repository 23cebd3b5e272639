// ConstantOfShape's attribute, checks and output shape, shared by the ref and cpu kernels, which differ only in how
// they fill the output (ref: FillElements for every type, strings included; cpu: a parallel fill of storage words).
#pragma once

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

class ConstantOfShapeBase : public OpKernel {
 public:
  // Reads the one-element `value` attribute (float32 0 when absent); throws InvalidModelError naming the node when
  // it holds another number of elements.
  explicit ConstantOfShapeBase(const ir::Node& node);

  // The shape input's rank and type are checked here; with its values known the output is declared here, else it
  // is dynamic and Compute reads them.
  void Prepare(PrepareContext& ctx) const override;

 protected:
  // Output 0 with the prepared shape, or the shape read from input 0 now (a negative dim is an InvalidArgumentError
  // naming the node); zeroed or not.
  Tensor& ShapedOutput(KernelContext& ctx, bool zeroed) const;
  const Tensor& value() const { return value_; }

 private:
  Tensor value_;
};

}  // namespace ferry::ref
