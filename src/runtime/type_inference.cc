#include "runtime/type_inference.h"

#include "schemas/schema.h"
#include "schemas/validate.h"

namespace ferry::runtime {
namespace {

void InferGraph(ir::Graph& g) {
  const auto& registry = schemas::SchemaRegistry::Get();
  for (const auto& n : g.nodes()) {
    for (const ir::Graph* sub : n->subgraphs()) InferGraph(const_cast<ir::Graph&>(*sub));
    const schemas::OpSchema* schema = registry.Find(schemas::CanonicalDomain(n->domain()), n->op_type(), n->opset());
    if (!schema) continue;
    std::vector<const ir::TypeInfo*> inputs;
    for (const ir::Value* v : n->inputs()) {
      inputs.push_back(v && v->type().kind != ir::TypeInfo::Kind::kUnknown ? &v->type() : nullptr);
    }
    std::vector<ir::TypeInfo> outputs(n->num_outputs());
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      if (n->output(i)) outputs[i] = n->output(i)->type();
    }
    schemas::InferOutputElementTypes(*n, *schema, inputs, outputs);
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      ir::Value* out = n->output(i);
      if (!out) continue;
      ir::TypeInfo& t = out->mutable_type();
      if (t.kind == ir::TypeInfo::Kind::kUnknown) {
        t = outputs[i];
      } else if (t.kind == ir::TypeInfo::Kind::kTensor && t.elem_type == DataType::kUndefined &&
                 outputs[i].kind == ir::TypeInfo::Kind::kTensor) {
        t.elem_type = outputs[i].elem_type;
      }
    }
  }
}

}  // namespace

void InferTypes(ir::Model& model) { InferGraph(*model.graph); }

}  // namespace ferry::runtime
