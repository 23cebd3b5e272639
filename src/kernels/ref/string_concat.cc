// StringConcat (opset 20): elementwise concatenation of two string tensors with numpy broadcasting.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class StringConcat : public OpKernel {
 public:
  explicit StringConcat(const ir::Node&) {}
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    if (a.dtype() != DataType::kString || b.dtype() != DataType::kString)
      throw InvalidArgumentError(ctx.Describe() + ": inputs must be string tensors");
    Shape out_shape = BroadcastShapes({a.shape(), b.shape()}, ctx.Describe());
    Tensor& y = ctx.Output(0, DataType::kString, out_shape);
    const std::string* pa = a.strings();
    const std::string* pb = b.strings();
    std::string* py = y.strings();
    BroadcastIterator it(out_shape, {a.shape(), b.shape()});
    it.ForEach([&](int64_t i, const int64_t* off) { py[i] = pa[off[0]] + pb[off[1]]; });
  }
};

}  // namespace

void RegisterStringConcatKernels(KernelRegistry& r) {
  r.Add({.op = "StringConcat", .since = 20, .types = {{"T", {DataType::kString}}}, .create = MakeKernel<StringConcat>});
}

}  // namespace ferry::ref
