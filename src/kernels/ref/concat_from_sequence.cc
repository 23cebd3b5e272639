// ConcatFromSequence: concatenates the tensors of a sequence along `axis` (new_axis=0) or stacks them along a
// new axis inserted at `axis` (new_axis=1, axis in [-r-1, r]).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ConcatFromSequence : public OpKernel {
 public:
  explicit ConcatFromSequence(const ir::Node& node)
      : axis_(node.RequireAttr("axis").i), new_axis_(node.GetInt("new_axis", 0) != 0) {}

  // The input is a sequence (data): its checks and the output's shape are Compute's.
  void Prepare(PrepareContext& ctx) const override { ctx.SetOutputDynamic(0); }

  void Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input_value(0);
    if (!v || !v->is_sequence()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input_sequence' must be a sequence, got " +
                                 (v ? ValueKindName(*v) : std::string("nothing")));
    }
    const std::vector<Tensor>& parts = v->sequence().tensors;
    if (parts.empty()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'input_sequence' is empty; there is nothing to concatenate");
    }
    const int64_t rank = parts.front().rank();
    if (new_axis_) {
      const int64_t a = axis_ < 0 ? axis_ + rank + 1 : axis_;
      if (a < 0 || a > rank) {
        throw InvalidArgumentError(ctx.Describe() + ": axis " + std::to_string(axis_) + " is out of range [" +
                                   std::to_string(-rank - 1) + ", " + std::to_string(rank) +
                                   "] for stacking tensors of rank " + std::to_string(rank));
      }
      ctx.SetOutput(0, Value(StackAlongNewAxis(parts, a, ctx.Describe())));
    } else {
      if (rank < 1) throw InvalidArgumentError(ctx.Describe() + ": cannot concatenate scalars without new_axis=1");
      const int64_t a = NormalizeAxis(axis_, rank, ctx.Describe());
      ctx.SetOutput(0, Value(ConcatAlongAxis(parts, a, ctx.Describe())));
    }
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

}  // namespace

void RegisterConcatFromSequenceKernels(KernelRegistry& r) {
  r.Add({.op = "ConcatFromSequence",
         .since = 11,
         .types = {{"S", dtypes::All()}, {"T", dtypes::All()}},
         .create = MakeKernel<ConcatFromSequence>});
}

}  // namespace ferry::ref
