// ConstantOfShape: a tensor of the shape given by input 0, filled with the one-element `value` attribute
// (float32 0 by default). Moves raw elements, so every dtype the attribute can hold works.
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/constant_of_shape.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The shape input's values (int32 or int64, Prepare checked), refusing negative dims; what() names the node.
template <typename What>
Shape OutputShape(const Tensor& shape_t, const What& what) {
  Shape shape(static_cast<size_t>(shape_t.size()));
  for (int64_t i = 0; i < shape_t.size(); ++i) {
    shape[static_cast<size_t>(i)] = shape_t.dtype() == DataType::kInt64 ? shape_t.data<int64_t>()[i]
                                                                         : shape_t.data<int32_t>()[i];
  }
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgumentError(what() + ": input 'input' has a negative dimension in " + ShapeToString(shape));
    }
  }
  return shape;
}

class ConstantOfShape final : public ConstantOfShapeBase {
 public:
  using ConstantOfShapeBase::ConstantOfShapeBase;

  void Compute(KernelContext& ctx) const override {
    Tensor& y = ShapedOutput(ctx, /*zeroed=*/true);
    FillElements(y.dtype(), y.raw_data(), 0, y.size(), value().raw_data(), 0);
  }
};

}  // namespace

ConstantOfShapeBase::ConstantOfShapeBase(const ir::Node& node) {
  if (const Tensor* t = node.GetTensor("value")) {
    if (t->size() != 1) {
      throw InvalidModelError(node.Describe() + ": attribute 'value' must hold exactly one element, got " +
                              DescribeTensor(*t));
    }
    value_ = *t;
  } else {
    value_ = Tensor(DataType::kFloat, {1});
  }
}

void ConstantOfShapeBase::Prepare(PrepareContext& ctx) const {
  const InputSpec& shape_t = ctx.tensor_input(0);
  if (shape_t.shape.size() > 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'input' must be a 1-D shape, got " + ctx.InputString(0));
  }
  if (shape_t.dtype != DataType::kInt64 && shape_t.dtype != DataType::kInt32) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'input': expected an int32 or int64 tensor, got " +
                               std::string(DataTypeName(shape_t.dtype)));
  }
  if (const Tensor* known = ctx.constant(0)) {
    ctx.SetOutput(0, value_.dtype(), OutputShape(*known, [&] { return ctx.Describe(); }));
  } else {
    ctx.SetOutputDynamic(0);
  }
}

Tensor& ConstantOfShapeBase::ShapedOutput(KernelContext& ctx, bool zeroed) const {
  const OutputSpec* planned = ctx.prepared_output(0);
  if (planned && planned->is_tensor()) return zeroed ? ctx.Output(0) : ctx.OutputUninitialized(0);
  const Shape shape = OutputShape(ctx.required_input(0), [&] { return ctx.Describe(); });
  return zeroed ? ctx.Output(0, value_.dtype(), shape) : ctx.OutputUninitialized(0, value_.dtype(), shape);
}

void RegisterConstantOfShapeKernels(KernelRegistry& r) {
  r.Add({.op = "ConstantOfShape",
         .since = 9,
         .types = {{"T1", {DataType::kInt64}}, {"T2", dtypes::All()}},
         .create = MakeKernel<ConstantOfShape>,
         .host_inputs = {0}});
}

}  // namespace ferry::ref
