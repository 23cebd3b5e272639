// Legalization: the support query, planning a rewrite on a scratch copy, and rewriting a model to a fixed point.
#include "legalize/legalize.h"

#include <memory>
#include <unordered_map>

#include "ferry/error.h"

namespace ferry::legalize {
namespace {

std::string BackendNames(const LegalizeTarget& t) {
  std::string s;
  for (const Backend* b : t.backends) s += (s.empty() ? "" : ",") + b->name();
  return s.empty() ? "(none)" : s;
}

std::string OpName(const ir::Node& n) {
  return n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "::" + n.op_type();
}

// A model holding a copy of `node` alone: its inputs as graph inputs (initializers stay initializers), its read
// outputs as graph outputs, so a rule builds there what it would build in the model.
std::unique_ptr<ir::Model> Scratch(const ir::Model& model, const ir::Node& node, ir::Node** copy) {
  auto m = std::make_unique<ir::Model>();
  m->ir_version = model.ir_version;
  m->opsets = model.opsets;
  m->graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *m->graph;
  g.set_name("scratch");
  std::unordered_map<const ir::Value*, ir::Value*> map;
  std::vector<ir::Value*> inputs, outputs;
  for (const ir::Value* v : node.inputs()) {
    if (!v) {
      inputs.push_back(nullptr);
      continue;
    }
    if (auto it = map.find(v); it != map.end()) {
      inputs.push_back(it->second);
      continue;
    }
    ir::Value* c;
    if (v->is_initializer()) {
      c = g.AddInitializer(v->name(), v->initializer_ptr());
    } else {
      c = g.AddValue(v->name());
      g.mutable_inputs().push_back(c);
    }
    c->set_type(v->type());
    map[v] = c;
    inputs.push_back(c);
  }
  for (size_t i = 0; i < node.num_outputs(); ++i) {
    const ir::Value* v = node.output(i);
    if (!v) {
      outputs.push_back(nullptr);
      continue;
    }
    ir::Value* c = g.AddValue(v->name(), v->type());
    if (OutputUsed(node, i)) g.mutable_outputs().push_back(c);
    outputs.push_back(c);
  }
  *copy = g.AddNode(node.name(), node.op_type(), node.domain(), std::move(inputs), std::move(outputs),
                    node.attributes());
  (*copy)->set_opset(node.opset());
  return m;
}

RewritePlan PlanAt(const ir::Model& model, const ir::Node& node, const LegalizeTarget& t, int depth) {
  RewritePlan plan;
  const int64_t opset = OnnxOpset(model);
  if (opset <= 0) {
    plan.reason = "the model imports no ai.onnx opset to write the rewrite in";
    return plan;
  }
  const Choice first = ChooseDecomposition(node, opset);
  if (!first.decomposition) {
    plan.reason = first.reason;
    return plan;
  }
  for (const Decomposition* d : DecompositionsFor(node)) {
    std::string why;
    try {
      why = d->refuse(node, opset);
      if (why.empty()) {
        ir::Node* copy = nullptr;
        std::unique_ptr<ir::Model> scratch = Scratch(model, node, &copy);
        Decompose(*scratch, *scratch->graph, copy, *d, opset);
        // Every node made must run somewhere, directly or rewritten in turn.
        for (const auto& made : scratch->graph->nodes()) {
          if (Supported(*made, t)) continue;
          RewritePlan inner;
          if (depth < kMaxDepth) inner = PlanAt(*scratch, *made, t, depth + 1);
          if (!inner.decomposition) {
            why = "it makes " + OpName(*made) + ", which no target backend (" + BackendNames(t) + ") runs";
            break;
          }
        }
      }
    } catch (const Error& e) {  // a rule tripping on an odd node: not this rule
      why = e.what();
    }
    if (why.empty()) {
      plan.decomposition = d;
      plan.reason.clear();
      return plan;
    }
    plan.reason += (plan.reason.empty() ? "" : "; ") + why;
  }
  return plan;
}

bool LegalizeGraph(ir::Model& model, ir::Graph& graph, const LegalizeTarget& t,
                   const std::function<bool(const ir::Node&)>& frozen, int64_t opset, LegalizeResult& result) {
  bool changed = false;
  std::vector<ir::Node*> nodes;
  for (const auto& n : graph.nodes()) nodes.push_back(n.get());
  for (ir::Node* n : nodes) {
    for (ir::Attribute& a : n->mutable_attributes()) {
      if (a.type == ir::AttrType::kGraph && a.g) changed |= LegalizeGraph(model, *a.g, t, frozen, opset, result);
      if (a.type == ir::AttrType::kGraphs) {
        for (auto& sub : a.graphs) {
          if (sub) changed |= LegalizeGraph(model, *sub, t, frozen, opset, result);
        }
      }
    }
    if ((frozen && frozen(*n)) || Supported(*n, t)) continue;
    const RewritePlan plan = PlanRewrite(model, *n, t);
    if (!plan.decomposition) continue;
    result.applied.push_back(n->Describe() + ": " + plan.decomposition->description);
    Decompose(model, graph, n, *plan.decomposition, opset);
    ++result.rewritten;
    changed = true;
  }
  return changed;
}

}  // namespace

bool Supported(const ir::Node& node, const LegalizeTarget& t) {
  std::vector<DataType> types;
  for (const ir::Value* v : node.inputs()) types.push_back(ElementType(v));
  for (const Backend* b : t.backends) {
    try {
      if (b->kernels().Query(node, types, t.target).supported()) return true;
    } catch (const Error&) {  // a predicate refusing a malformed node: not this backend
    }
  }
  return false;
}

RewritePlan PlanRewrite(const ir::Model& model, const ir::Node& node, const LegalizeTarget& t) {
  return PlanAt(model, node, t, 1);
}

LegalizeResult Legalize(ir::Model& model, const LegalizeTarget& t, const std::function<bool(const ir::Node&)>& frozen) {
  LegalizeResult result;
  const int64_t opset = OnnxOpset(model);
  if (opset <= 0 || t.backends.empty()) return result;
  // Each round rewrites what the previous one made; a plan already checked that the rounds end (kMaxDepth).
  for (int round = 0; round <= kMaxDepth; ++round) {
    if (!LegalizeGraph(model, *model.graph, t, frozen, opset, result)) break;
  }
  return result;
}

}  // namespace ferry::legalize
