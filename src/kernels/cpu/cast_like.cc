// CastLike (opsets 15, 19, 21, 23, 24, 25): Cast with the target type taken from input 1 (only its type is
// read). Prepare, the conversion choice and `saturate`/`round_mode` are Cast's (cast_plan.h): every non-complex
// pair, bit-exact with ref, the same-type cast sharing input 0's buffer.
#include "kernels/cpu/cast_plan.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class CastLike : public OpKernel {
 public:
  CastLike(const ir::Node& node, CastIsa isa) : isa_(isa), opt_(ref::ReadCastOptions(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& target = ctx.tensor_input(1);
    if (!ref::Castable(target.dtype)) {
      throw UnsupportedError(ctx.Describe() + ": cannot cast to " + std::string(DataTypeName(target.dtype)) + " (" +
                             ctx.InputString(1) + ")");
    }
    PrepareCastTo(ctx, target.dtype, isa_, opt_);
  }
  void Compute(KernelContext& ctx) const override { ComputeCastTo(ctx, ctx.required_input(1).dtype()); }

 private:
  CastIsa isa_;
  ref::CastOptions opt_;
};

}  // namespace

void RegisterCastLikeKernels(KernelRegistry& r) {
  AddCastKernels(r, {.op = "CastLike", .since = 15}, "cast_like",
                 [](const ir::Node& n, CastIsa isa) -> std::unique_ptr<OpKernel> {
                   return std::make_unique<CastLike>(n, isa);
                 });
}

}  // namespace ferry::cpu
