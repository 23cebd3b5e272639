// The graph walk of static type and shape inference: for each node in topological order, the schema's element
// types, then its shape-inference function, then a merge into the declared types of the node's outputs.
// Subgraphs are inferred when their node is reached (If/Loop/Scan give their bodies input types), so values
// captured from enclosing graphs are already typed.
#include "runtime/type_inference.h"

#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "ferry/error.h"
#include "schemas/schema.h"
#include "schemas/shape_inference/context.h"
#include "schemas/validate.h"

namespace ferry::runtime {
namespace {

using schemas::PartialValue;

class Walker {
 public:
  Walker(const ir::Model& model, TypeInferenceReport* report)
      : registry_(schemas::SchemaRegistry::Get()),
        model_desc_(model.Describe()),
        report_(report),
        model_outputs_(model.graph->outputs().begin(), model.graph->outputs().end()) {}

  void InferGraph(ir::Graph& g) {
    for (const auto& n : g.nodes()) InferNode(*n);
  }

 private:
  int64_t MaxOpset(std::string_view domain) {
    auto it = max_opset_.find(domain);
    if (it == max_opset_.end()) it = max_opset_.emplace(std::string(domain), registry_.MaxOpset(domain)).first;
    return it->second;
  }

  // The tracked value of `v`: propagated by an earlier node, or read from a small integer initializer.
  const PartialValue* ValueOf(const ir::Value* v) {
    if (!v) return nullptr;
    auto it = values_.find(v);
    if (it != values_.end()) return it->second ? &*it->second : nullptr;
    std::optional<PartialValue> pv;
    if (const Tensor* t = v->initializer()) pv = schemas::PartialValueFromTensor(*t);
    auto [ins, _] = values_.emplace(v, std::move(pv));
    return ins->second ? &*ins->second : nullptr;
  }

  void InferSubgraphsDeclared(ir::Node& n, const std::vector<const ir::Graph*>& visited) {
    for (ir::Graph* sub : n.mutable_subgraphs()) {
      if (std::find(visited.begin(), visited.end(), sub) == visited.end()) InferGraph(*sub);
    }
  }

  void InferNode(ir::Node& n) {
    if (report_) ++report_->nodes;
    const std::string_view domain = schemas::CanonicalDomain(n.domain());
    const schemas::OpSchema* schema = registry_.Find(domain, n.op_type(), n.opset());
    if (!schema || n.opset() > MaxOpset(domain) || !schemas::ValidateNodeAgainstSchema(n, *schema).empty()) {
      InferSubgraphsDeclared(n, {});
      return;
    }
    schemas::InferenceContext ctx(n, *schema, model_desc_);
    ctx.inputs.reserve(n.num_inputs());
    ctx.input_values.reserve(n.num_inputs());
    for (const ir::Value* v : n.inputs()) {
      ctx.inputs.push_back(v && v->type().kind != ir::TypeInfo::Kind::kUnknown ? &v->type() : nullptr);
      ctx.input_values.push_back(ValueOf(v));
    }
    ctx.outputs.resize(n.num_outputs());
    schemas::InferOutputElementTypes(n, *schema, ctx.inputs, ctx.outputs);
    if (schema->infer) {
      if (report_) ++report_->nodes_inferred;
      // The inference function names the subgraph through the node it reads (const); it is one of `n`'s own.
      ctx.infer_subgraph = [this, &n](const ir::Graph& g, const std::vector<const ir::TypeInfo*>& input_types) {
        for (ir::Graph* sub : n.mutable_subgraphs()) {
          if (sub == &g) return InferSubgraph(*sub, input_types);
        }
        throw InternalError(n.Describe() + ": type inference asked for subgraph '" + g.name() +
                            "', which is not one of the node's");
      };
      try {
        schema->infer(ctx);
      } catch (const InvalidModelError&) {
        throw;
      } catch (const std::exception&) {
        // A limitation of an inference function must not make a valid model fail: keep the element types.
        ctx.outputs.assign(n.num_outputs(), ir::TypeInfo{});
        schemas::InferOutputElementTypes(n, *schema, ctx.inputs, ctx.outputs);
        ctx.output_values.clear();
      }
    }
    InferSubgraphsDeclared(n, ctx.visited_subgraphs);
    for (size_t i = 0; i < n.num_outputs(); ++i) {
      ir::Value* out = n.output(i);
      if (!out) continue;
      Merge(out->mutable_type(), ctx.outputs[i], *out, &n);
      if (i < ctx.output_values.size() && ctx.output_values[i]) values_[out] = std::move(ctx.output_values[i]);
    }
  }

  std::vector<ir::TypeInfo> InferSubgraph(ir::Graph& g, const std::vector<const ir::TypeInfo*>& input_types) {
    for (size_t k = 0; k < input_types.size() && k < g.inputs().size(); ++k) {
      if (input_types[k]) Merge(g.inputs()[k]->mutable_type(), *input_types[k], *g.inputs()[k], nullptr);
    }
    InferGraph(g);
    std::vector<ir::TypeInfo> out;
    out.reserve(g.outputs().size());
    for (const ir::Value* v : g.outputs()) out.push_back(v->type());
    return out;
  }

  void Conflict(const ir::Value& v, const ir::Node* n, const ir::TypeInfo& declared, const ir::TypeInfo& inferred) {
    if (!report_) return;
    report_->conflicts.push_back(model_desc_ + ": " + (n ? n->Describe() + " output" : std::string("input")) + " '" +
                                 v.name() + "' is declared " + declared.ToString() + ", inferred " +
                                 inferred.ToString());
  }

  // A model output declared as another kind or element type than its node produces: the model's interface
  // promises what the graph does not give, which ONNX Runtime's type check refuses too. (A disagreeing shape, or a
  // disagreement on a value inside the graph, stays a conflict: ONNX Runtime warns.)
  void TypeMismatch(const ir::Value& v, const ir::Node* n, const ir::TypeInfo& declared, const ir::TypeInfo& inferred) {
    if (!n || !model_outputs_.count(&v)) return Conflict(v, n, declared, inferred);
    throw InvalidModelError(model_desc_ + ": graph output '" + v.name() + "' is declared " + declared.ToString() +
                            ", but " + n->Describe() + " produces " + inferred.ToString());
  }

  // Merges `inferred` into `declared`: what is declared and more specific wins.
  void Merge(ir::TypeInfo& declared, const ir::TypeInfo& inferred, const ir::Value& v, const ir::Node* n) {
    using Kind = ir::TypeInfo::Kind;
    if (inferred.kind == Kind::kUnknown) return;
    if (declared.kind == Kind::kUnknown) {
      declared = inferred;
      return;
    }
    if (declared.kind != inferred.kind) {
      TypeMismatch(v, n, declared, inferred);
      return;
    }
    if (declared.elem_type == DataType::kUndefined) {
      declared.elem_type = inferred.elem_type;
    } else if (inferred.elem_type != DataType::kUndefined && inferred.elem_type != declared.elem_type) {
      TypeMismatch(v, n, declared, inferred);
    }
    if (inferred.shape) {
      if (!declared.shape) {
        declared.shape = inferred.shape;
      } else if (declared.shape->size() != inferred.shape->size()) {
        Conflict(v, n, declared, inferred);
      } else {
        bool conflict = false;
        for (size_t k = 0; k < declared.shape->size(); ++k) {
          ir::Dim& d = (*declared.shape)[k];
          const ir::Dim& i = (*inferred.shape)[k];
          if (d.is_static()) {
            if (i.is_static() && i.value != d.value) conflict = true;
          } else if (i.is_static() || (d.symbol.empty() && !i.symbol.empty())) {
            d = i;
          }
        }
        if (conflict) Conflict(v, n, declared, inferred);
      }
    }
    if (inferred.elem) {
      if (!declared.elem) {
        declared.elem = inferred.elem;
      } else {
        auto copy = std::make_shared<ir::TypeInfo>(*declared.elem);  // elements may be shared between values
        Merge(*copy, *inferred.elem, v, n);
        declared.elem = std::move(copy);
      }
    }
  }

  const schemas::SchemaRegistry& registry_;
  std::string model_desc_;
  TypeInferenceReport* report_;
  std::map<std::string, int64_t, std::less<>> max_opset_;
  std::unordered_map<const ir::Value*, std::optional<PartialValue>> values_;
  std::unordered_set<const ir::Value*> model_outputs_;  // the main graph's outputs: their declared types must hold
};

}  // namespace

void InferTypes(ir::Model& model, TypeInferenceReport* report) {
  Walker walker(model, report);
  walker.InferGraph(*model.graph);
}

}  // namespace ferry::runtime
