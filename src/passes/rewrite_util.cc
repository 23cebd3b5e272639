#include "passes/rewrite_util.h"

#include <algorithm>

#include "schemas/schema.h"

namespace ferry::passes {

std::optional<std::vector<ir::Dim>> KnownDims(const ir::Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) {
    std::vector<ir::Dim> d;
    for (int64_t x : t->shape()) d.push_back(ir::Dim::Static(x));
    return d;
  }
  if (!v->type().is_tensor() || !v->type().shape) return std::nullopt;
  return *v->type().shape;
}

bool SameShape(const ir::Value* a, const ir::Value* b) {
  const auto da = KnownDims(a), db = KnownDims(b);
  if (!da || !db || da->size() != db->size()) return false;
  for (size_t i = 0; i < da->size(); ++i) {
    const ir::Dim &x = (*da)[i], &y = (*db)[i];
    const bool same = (x.is_static() && y.is_static() && x.value == y.value) ||
                      (!x.is_static() && !y.is_static() && !x.symbol.empty() && x.symbol == y.symbol);
    if (!same) return false;
  }
  return true;
}

ir::Node* SoleConsumer(const ir::Graph& graph, const ir::Value* v) {
  if (!v || v->consumers().size() != 1 || IsGraphOutput(graph, v)) return nullptr;
  ir::Node* c = v->consumers()[0];
  return c->owner() == &graph ? c : nullptr;  // a reader inside a subgraph is not a rewrite candidate
}

const Tensor* ConstantOf(const ir::Graph& graph, const ir::Value* v) {
  if (!v) return nullptr;
  if (const ir::Node* p = v->producer(); p && p->domain().empty() && p->op_type() == "Constant") {
    const ir::Attribute* value = p->attr("value");
    return value && value->type == ir::AttrType::kTensor ? &value->t : nullptr;
  }
  if (!v->is_initializer()) return nullptr;
  const auto& in = graph.inputs();
  if (std::find(in.begin(), in.end(), v) != in.end()) return nullptr;
  return v->initializer();
}

std::optional<float> ConstantScalar(const ir::Graph& graph, const ir::Value* v) {
  const Tensor* t = ConstantOf(graph, v);
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return static_cast<float>(t->data<double>()[0]);
    default: return std::nullopt;
  }
}

ir::Node* AddFerryNode(ir::Model& model, ir::Graph& graph, const std::string& name, const std::string& op,
                       std::vector<ir::Value*> inputs, std::vector<ir::Value*> outputs,
                       std::vector<ir::Attribute> attributes) {
  return ir::Builder(graph).AddNodeIn(model, std::string(schemas::kFerryDomain), 1, name, op, std::move(inputs),
                                     std::move(outputs), std::move(attributes));
}

bool WouldRunOn(ir::Graph& graph, const PassContext& ctx, const Backend* home, const std::string& domain,
                const std::string& op, int64_t opset, const std::vector<ir::Value*>& inputs,
                const std::vector<ir::Attribute>& attributes) {
  if (!home) return false;
  ir::Builder b(graph);
  ir::Value* out = b.AddValue("probe_output");
  ir::Node* probe = graph.AddNode(b.NodeName("probe"), op, domain, inputs, {out}, attributes);  // imports nothing
  probe->set_opset(opset);
  const bool same = ctx.BackendFor(*probe) == home;
  graph.RemoveNode(probe);
  graph.RemoveValue(out);
  return same;
}

}  // namespace ferry::passes
