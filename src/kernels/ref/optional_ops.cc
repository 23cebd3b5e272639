// ONNX optional values: Optional (wrap an input, or make an empty optional of attribute `type`),
// OptionalHasElement and OptionalGetElement. Opset 18 versions also accept plain tensors/sequences (and, for
// OptionalHasElement, an omitted input).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Optional : public OpKernel {
 public:
  explicit Optional(const ir::Node& node) {
    if (!node.input(0) && !node.has_attr("type")) {
      throw InvalidModelError(node.Describe() + ": without an input, attribute 'type' is required");
    }
  }
  // An optional is not a tensor: dynamic.
  void Prepare(PrepareContext& ctx) const override { ctx.SetOutputDynamic(0); }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (!v || v->is_none()) {
      ctx.SetOutput(0, Value().set_optional(true));
      return;
    }
    Value out = CloneValue(*v);
    out.set_optional(true);
    ctx.SetOutput(0, std::move(out));
  }
};

class OptionalHasElement : public OpKernel {
 public:
  explicit OptionalHasElement(const ir::Node& node) : strict_(node.opset() < 18) {}
  void Prepare(PrepareContext& ctx) const override {
    if (strict_ && !ctx.node().input(0)) {
      throw InvalidModelError(ctx.Describe() + ": required input 'input' is missing");
    }
    ctx.SetOutput(0, DataType::kBool, {});
  }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    ctx.Output(0).data<bool>()[0] = v && !v->is_none();
  }

 private:
  bool strict_;  // opset 15: the input is required
};

class OptionalGetElement : public OpKernel {
 public:
  explicit OptionalGetElement(const ir::Node&) {}
  // The element may be a tensor or a sequence, and an empty optional is known only from the data: dynamic.
  void Prepare(PrepareContext& ctx) const override { ctx.SetOutputDynamic(0); }
  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (!v || v->is_none()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input' is an empty optional; it has no element to get");
    }
    Value out = CloneValue(*v);
    out.set_optional(false);
    ctx.SetOutput(0, std::move(out));
  }
};

}  // namespace

void RegisterOptionalKernels(KernelRegistry& r) {
  const std::vector<DataType> all = dtypes::All();
  r.Add({.op = "Optional", .since = 15, .types = {{"V", all}, {"O", all}}, .create = MakeKernel<Optional>});
  r.Add({.op = "OptionalHasElement",
         .since = 15,
         .until = 17,
         .types = {{"O", all}, {"B", {DataType::kBool}}},
         .create = MakeKernel<OptionalHasElement>});
  r.Add({.op = "OptionalHasElement",
         .since = 18,
         .types = {{"O", all}, {"B", {DataType::kBool}}},
         .create = MakeKernel<OptionalHasElement>});
  // Opset 15 requires an optional input; opset 18 also passes plain tensors and sequences through. Accepting a
  // plain value at opset 15 is harmless (the graph validator rejects such models before they get here).
  r.Add({.op = "OptionalGetElement",
         .since = 15,
         .until = 17,
         .types = {{"O", all}, {"V", all}},
         .create = MakeKernel<OptionalGetElement>});
  r.Add({.op = "OptionalGetElement",
         .since = 18,
         .types = {{"O", all}, {"V", all}},
         .create = MakeKernel<OptionalGetElement>});
}

}  // namespace ferry::ref
