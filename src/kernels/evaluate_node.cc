#include "kernels/evaluate_node.h"

#include "ferry/error.h"

namespace ferry {

std::vector<Value> EvaluateNode(const KernelRegistry& registry, const ir::Node& node,
                                std::span<const Value* const> inputs, const Target& target) {
  if (inputs.size() != node.num_inputs()) {
    throw InternalError(node.Describe() + ": evaluated with " + std::to_string(inputs.size()) + " inputs, has " +
                        std::to_string(node.num_inputs()));
  }
  if (!node.subgraphs().empty()) throw UnsupportedError(node.Describe() + ": nodes with subgraphs are not evaluated");
  std::vector<DataType> types;
  for (const Value* v : inputs) types.push_back(v && v->is_tensor() ? v->tensor().dtype() : DataType::kUndefined);
  const SupportResult support = registry.Query(node, types, target);
  if (!support.supported()) {
    throw UnsupportedError(node.Describe() + ": backend '" + registry.backend() + "' cannot run it: " + support.reason);
  }
  const std::unique_ptr<OpKernel> kernel = support.kernel->create(node, KernelOptions{});
  std::vector<Value> outputs(node.num_outputs());
  SubgraphRunner no_subgraphs = [&node](const ir::Graph&, std::vector<Value>) -> std::vector<Value> {
    throw UnsupportedError(node.Describe() + ": nodes with subgraphs are not evaluated");
  };
  // One run: every input's data is what the run reads, so Prepare may see all of it.
  std::vector<InputSpec> specs;
  specs.reserve(inputs.size());
  for (const Value* v : inputs) specs.push_back(InputSpec::Of(v, v && v->is_tensor() ? &v->tensor() : nullptr));
  PrepareContext prepare(node, specs, KernelOptions{});
  kernel->Prepare(prepare);
  const PreparedKernel prepared = prepare.Finish();
  KernelContext ctx(node, inputs, outputs, 1, no_subgraphs);
  ctx.set_prepared(&prepared);
  kernel->Compute(ctx);
  return outputs;
}

}  // namespace ferry
