// ConstantOfShape: a tensor of the shape given by input 0 (int64, read on the host), filled with the one-element
// `value` attribute (float32 0 by default): one parallel fill of storage words by element size, so every
// byte-sized type works (strings fall back to ref). The output is declared in Prepare when the shape is known
// before the run, else Compute reads it (a negative dimension is the data's error, naming the node, as in ref).
#include <string>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class ConstantOfShape : public OpKernel {
 public:
  explicit ConstantOfShape(const ir::Node& node) {
    if (const Tensor* t = node.GetTensor("value")) {
      if (t->size() != 1) {
        throw InvalidModelError(node.Describe() + ": attribute 'value' must hold exactly one element, got " +
                                ref::DescribeTensor(*t));
      }
      value_ = *t;
    } else {
      value_ = Tensor(DataType::kFloat, {1});
    }
  }

  void Prepare(PrepareContext& ctx) const override {
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

  void Compute(KernelContext& ctx) const override {
    const OutputSpec* planned = ctx.prepared_output(0);
    Tensor& y = planned && planned->is_tensor()
                    ? ctx.OutputUninitialized(0)
                    : ctx.OutputUninitialized(0, value_.dtype(),
                                              OutputShape(ctx.required_input(0), [&] { return ctx.Describe(); }));
    const int elem = ElementBytes(y.dtype());
    ParallelFill(elem, y.raw_data(), y.size(), value_.raw_data(), CopyThreads(ctx.threads(), y.size() * elem));
  }

 private:
  // The shape input's values (int32 or int64, Prepare checked), refusing negative dims; what() names the node.
  template <typename What>
  static Shape OutputShape(const Tensor& shape_t, const What& what) {
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

  Tensor value_;
};

// "" when the `value` attribute's dtype (float32 when absent) has a storage word; strings and packed types go to ref.
std::string FillableValue(const ir::Node& node) {
  const Tensor* t = node.GetTensor("value");
  if (!t || ElementBytes(t->dtype()) > 0) return "";
  return "value of type " + std::string(DataTypeName(t->dtype())) + " not implemented";
}

}  // namespace

void RegisterConstantOfShapeKernels(KernelRegistry& r) {
  r.Add({.op = "ConstantOfShape",
         .since = 9,
         .types = {{"T1", {DataType::kInt64}}, {"T2", ByteSizedTypes()}},
         .create = MakeKernel<ConstantOfShape>,
         .predicate = FillableValue,
         .host_inputs = {0},
         .name = "cpu.any_constant_of_shape__fill.9",
         .constraints = "value of a type without a storage word (string, 4-bit) not implemented"});
}

}  // namespace ferry::cpu
