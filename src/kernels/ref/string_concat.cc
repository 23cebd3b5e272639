// StringConcat (opset 20): elementwise concatenation of two string tensors with numpy broadcasting (planned by
// Prepare).
#include <string>
#include <utility>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class StringConcat : public OpKernel {
 public:
  explicit StringConcat(const ir::Node&) {}
  // Both inputs strings; the broadcast shape and its walk.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != DataType::kString || b.dtype != DataType::kString) {
      throw InvalidArgumentError(ctx.Describe() + ": inputs must be string tensors, got " + ctx.InputString(0) +
                                 " and " + ctx.InputString(1));
    }
    Shape out_shape = BroadcastShapes({a.shape, b.shape}, ctx.Describe());
    ctx.EmplaceState(BroadcastIterator(out_shape, {a.shape, b.shape}));
    ctx.SetOutput(0, DataType::kString, std::move(out_shape));
  }
  void Compute(KernelContext& ctx) const override {
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& y = ctx.Output(0);
    const std::string* pa = a.strings();
    const std::string* pb = b.strings();
    std::string* py = y.strings();
    const BroadcastIterator& it = ctx.state<BroadcastIterator>();
    it.ForEach([&](int64_t i, const int64_t* off) { py[i] = pa[off[0]] + pb[off[1]]; });
  }
};

}  // namespace

void RegisterStringConcatKernels(KernelRegistry& r) {
  r.Add({.op = "StringConcat", .since = 20, .types = {{"T", {DataType::kString}}}, .create = MakeKernel<StringConcat>});
}

}  // namespace ferry::ref
