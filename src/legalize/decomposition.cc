// The Builder of a replacement, choosing a decomposition, and replacing a node by one.
#include "legalize/decomposition.h"

#include <algorithm>
#include <unordered_map>

#include "ferry/error.h"
#include "ferry/tensor.h"

namespace ferry::legalize {

// ---- helpers ------------------------------------------------------------------------------------------------

bool OutputUsed(const ir::Node& node, size_t i) {
  const ir::Value* v = node.output(i);
  return v && (!v->consumers().empty() || (node.owner() && ir::IsGraphOutput(*node.owner(), v)));
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

void FillKeptType(const ir::Node& node) {
  ir::Value* y = node.output(0);
  const ir::Value* x = node.input(0);
  if (!y || !x || RankOrMinusOne(x) < 0 || RankOrMinusOne(y) >= 0) return;
  if (const Tensor* t = x->initializer()) {
    y->set_type(ir::StaticTensorType(t->dtype(), t->shape()));
  } else {
    y->set_type(x->type());
  }
}

// ---- Builder ------------------------------------------------------------------------------------------------

Builder::Builder(ir::Graph& graph, const ir::Node& node, int64_t opset, ir::NameScope* names)
    : ir::Builder(graph, opset, names), node_(node), outputs_(node.num_outputs(), nullptr) {
  set_prefix((node.name().empty() ? node.op_type() : node.name()) + "/");
}

DataType Builder::dtype() const { return ElementType(node_.input(0)); }

void Builder::SetOutput(size_t i, ir::Value* v) {
  if (i >= outputs_.size()) {
    throw InternalError("legalize: " + node_.Describe() + " has no output " + std::to_string(i));
  }
  outputs_[i] = v;
}

// ---- choosing and applying ----------------------------------------------------------------------------------

std::vector<const Decomposition*> DecompositionsFor(const ir::Node& node) {
  const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
  std::vector<const Decomposition*> out;
  for (const Decomposition& d : AllDecompositions()) {
    if (d.domain == domain && d.op == node.op_type() && node.opset() >= d.since && node.opset() <= d.until) {
      out.push_back(&d);
    }
  }
  return out;
}

int64_t OnnxOpset(const ir::Model& model) {
  for (const char* key : {"", "ai.onnx"}) {
    if (auto it = model.opsets.find(key); it != model.opsets.end()) return it->second;
  }
  return 0;
}

Choice ChooseDecomposition(const ir::Node& node, int64_t opset) {
  Choice c;
  const std::vector<const Decomposition*> rules = DecompositionsFor(node);
  if (rules.empty()) {
    c.reason = "no decomposition of " + node.qualified_op() + " at opset " + std::to_string(node.opset());
    return c;
  }
  if (opset < 7) {
    c.reason = "ai.onnx opset " + std::to_string(opset) + " predates broadcasting arithmetic (7)";
    return c;
  }
  for (const Decomposition* d : rules) {
    std::string why;
    try {
      why = d->refuse(node, opset);
    } catch (const Error& e) {  // an attribute of the wrong type
      why = e.what();
    }
    if (why.empty()) {
      c.decomposition = d;
      c.reason.clear();
      return c;
    }
    c.reason += (c.reason.empty() ? "" : "; ") + why;
  }
  return c;
}

std::vector<ir::Node*> Decompose(ir::Model&, ir::Graph& graph, ir::Node* node, const Decomposition& d, int64_t opset,
                                 ir::NameScope* names) {
  if (const std::string why = d.refuse(*node, opset); !why.empty()) {
    throw InvalidModelError(node->Describe() + ": cannot decompose: " + why);
  }
  Builder b(graph, *node, opset, names);
  d.build(b);
  std::vector<ir::Value*> originals(node->outputs().begin(), node->outputs().end());
  std::vector<ir::Value*> results = b.outputs();
  for (size_t i = 0; i < originals.size(); ++i) {
    if (originals[i] && !results[i] && OutputUsed(*node, i)) {
      throw InternalError("legalize: " + d.op + " rule left output " + std::to_string(i) + " of " + node->Describe() +
                          " uncomputed");
    }
  }
  if (d.keeps_shape) FillKeptType(*node);
  const std::string node_name = node->name();  // RemoveNode deletes the node
  graph.RemoveNode(node);

  // Each original output value is now produced by the replacement: the node that made the result is re-made
  // writing the original value (its readers rewired), or, when the result is no new node's own (an input, or a
  // value already moved), an Identity copies it.
  std::unordered_map<ir::Value*, ir::Value*> moved;  // result -> original it became
  for (size_t i = 0; i < originals.size(); ++i) {
    ir::Value* o = originals[i];
    ir::Value* r = results[i];
    if (!o) continue;
    if (!r) {
      if (!o->producer() && o->consumers().empty() && !ir::IsGraphOutput(graph, o)) graph.RemoveValue(o);
      continue;
    }
    if (auto it = moved.find(r); it != moved.end()) r = it->second;
    ir::Node* p = r->producer();
    const std::vector<ir::Node*>& created = b.created();
    const bool own = p && std::find(created.begin(), created.end(), p) != created.end() && r->owner() == &graph &&
                     !ir::IsGraphOutput(graph, r) && !ir::IsGraphInput(graph, r) && !moved.count(r) &&
                     std::none_of(moved.begin(), moved.end(), [&](const auto& kv) { return kv.second == r; });
    if (!own) {
      b.AddNode((node_name.empty() ? d.op : o->name()) + "/Identity", "Identity", {r}, {o});
      continue;
    }
    // The result is a value of this replacement: only its nodes read it.
    for (ir::Node* c : std::vector<ir::Node*>(r->consumers().begin(), r->consumers().end())) {
      for (size_t k = 0; k < c->num_inputs(); ++k) {
        if (c->input(k) == r) c->ReplaceInput(k, o);
      }
    }
    b.ReplaceCreated(p, ir::RebuildWithOutput(p, r, o));
    graph.RemoveValue(r);
    moved[r] = o;
  }
  graph.TopologicalSort();
  return b.created();
}

}  // namespace ferry::legalize
