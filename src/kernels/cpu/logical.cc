// And Or Xor (opset 7+: numpy broadcasting) on bool tensors on the cpu backend, with ref's semantics (a && b,
// a || b, a != b on the bool values). Opsets 1-6 (the legacy broadcast/axis attributes) are left to ref. Prepare
// checks the types and resolves the broadcast once per signature (binary_elementwise_map.h); Compute walks that plan
// with row loops the compiler vectorizes.
#include <memory>
#include <string>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct AndOp {
  static bool Apply(bool a, bool b) { return a && b; }
};
struct OrOp {
  static bool Apply(bool a, bool b) { return a || b; }
};
struct XorOp {
  static bool Apply(bool a, bool b) { return a != b; }
};

class LogicalKernel final : public OpKernel {
 public:
  explicit LogicalKernel(BinaryMapRows<bool, bool, bool> rows) : rows_(rows) {}

  // Both inputs bool, shapes that broadcast (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& a = ctx.tensor_input(0);
    const InputSpec& b = ctx.tensor_input(1);
    if (a.dtype != DataType::kBool || b.dtype != DataType::kBool) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and " + ctx.InputString(1) +
                                 ": expected bool for both");
    }
    BinaryMapPlan p(a.shape, b.shape, ref::BroadcastShapes({a.shape, b.shape}, ctx.Describe()));
    ctx.SetOutput(0, DataType::kBool, p.out_shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& a = ctx.required_input(0);
    const Tensor& b = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, a.data<bool>(), b.data<bool>(), out.data<bool>(), rows_);
  }

 private:
  BinaryMapRows<bool, bool, bool> rows_;
};

template <class Op>
void AddLogical(KernelRegistry& r, const std::string& op, const std::string& lower) {
  r.Add({.op = op,
         .since = 7,
         .types = {{"T", {DataType::kBool}}, {"T1", {DataType::kBool}}},
         .create = [](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
           return std::make_unique<LogicalKernel>(MapRows<bool, bool, bool, Op>());
         },
         .name = "cpu.bool_" + lower + ".7"});
}

}  // namespace

void RegisterLogicalKernels(KernelRegistry& r) {
  AddLogical<AndOp>(r, "And", "and");
  AddLogical<OrOp>(r, "Or", "or");
  AddLogical<XorOp>(r, "Xor", "xor");
}

}  // namespace ferry::cpu
