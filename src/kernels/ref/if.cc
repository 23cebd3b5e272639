// If: runs then_branch or else_branch depending on a single-element bool condition; the branch's outputs
// (tensors, sequences or optionals) become the node's outputs, all dynamic for Prepare.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class If : public OpKernel {
 public:
  explicit If(const ir::Node& node)
      : then_branch_(node.GetGraph("then_branch")), else_branch_(node.GetGraph("else_branch")) {
    if (!then_branch_ || !else_branch_) {
      throw InvalidModelError(node.Describe() + ": attributes 'then_branch' and 'else_branch' are required");
    }
    for (const ir::Graph* g : {then_branch_, else_branch_}) {
      if (g->outputs().size() < node.num_outputs()) {
        throw InvalidModelError(node.Describe() + ": branch '" + g->name() + "' has " +
                                std::to_string(g->outputs().size()) + " outputs, the node has " +
                                std::to_string(node.num_outputs()));
      }
    }
  }

  // Checks the condition's type and shape; the outputs are whatever the branch makes (dynamic).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& cond = ctx.tensor_input(0);
    if (cond.dtype != DataType::kBool || ShapeElementCount(cond.shape) != 1) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'cond' must be a bool tensor with one element, got " +
                                 std::string(DataTypeName(cond.dtype)) + ShapeToString(cond.shape));
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutputDynamic(i);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.required_input(0);
    const ir::Graph& branch = cond.data<bool>()[0] ? *then_branch_ : *else_branch_;
    std::vector<Value> results = ctx.RunSubgraph(branch, {});
    if (results.size() < static_cast<size_t>(ctx.output_count())) {
      throw InternalError(ctx.Describe() + ": branch '" + branch.name() + "' returned " +
                          std::to_string(results.size()) + " values, expected " + std::to_string(ctx.output_count()));
    }
    for (int i = 0; i < ctx.output_count(); ++i) ctx.SetOutput(i, std::move(results[static_cast<size_t>(i)]));
  }

 private:
  const ir::Graph* then_branch_;
  const ir::Graph* else_branch_;
};

}  // namespace

void RegisterIfKernels(KernelRegistry& r) {
  // Versions 1, 11, 13, 16, 19, 21, 23, 24, ...: only the allowed output types grew, the semantics did not.
  r.Add({.op = "If", .since = 1, .types = {{"B", {DataType::kBool}}, {"V", dtypes::All()}}, .create = MakeKernel<If>});
}

}  // namespace ferry::ref
