// ConstantOfShape: a tensor of the shape given by input 0, filled with the one-element `value` attribute
// (float32 0 by default). Moves raw elements, so every dtype the attribute can hold works.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ConstantOfShape : public OpKernel {
 public:
  explicit ConstantOfShape(const ir::Node& node) {
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

  void Compute(KernelContext& ctx) const override {
    const Tensor& shape_t = ctx.required_input(0);
    if (shape_t.rank() > 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input' must be a 1-D shape, got " + DescribeTensor(shape_t));
    }
    Shape shape = ReadInt64s(shape_t, ctx.Describe() + ": input 'input'");
    for (int64_t d : shape) {
      if (d < 0) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'input' has a negative dimension in " +
                                   ShapeToString(shape));
      }
    }
    Tensor& y = ctx.Output(0, value_.dtype(), shape);
    FillElements(y.dtype(), y.raw_data(), 0, y.size(), value_.raw_data(), 0);
  }

 private:
  Tensor value_;
};

}  // namespace

void RegisterConstantOfShapeKernels(KernelRegistry& r) {
  r.Add({.op = "ConstantOfShape",
         .since = 9,
         .types = {{"T1", {DataType::kInt64}}, {"T2", dtypes::All()}},
         .create = MakeKernel<ConstantOfShape>,
         .host_inputs = {0}});
}

}  // namespace ferry::ref
