// ConstantOfShape: a tensor of the shape given by input 0 (int64, read on the host), filled with the one-element
// `value` attribute (float32 0 by default): one parallel fill of storage words by element size, so every
// byte-sized type works (strings fall back to ref). The attribute, the checks and the output shape are ref's
// (ref/constant_of_shape.h).
#include <string>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/constant_of_shape.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class ConstantOfShape final : public ref::ConstantOfShapeBase {
 public:
  using ref::ConstantOfShapeBase::ConstantOfShapeBase;

  void Compute(KernelContext& ctx) const override {
    Tensor& y = ShapedOutput(ctx, /*zeroed=*/false);
    const int elem = ElementBytes(y.dtype());
    ParallelFill(elem, y.raw_data(), y.size(), value().raw_data(), CopyThreads(ctx.threads(), y.size() * elem));
  }
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
