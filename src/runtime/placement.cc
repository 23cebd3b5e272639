#include "runtime/placement.h"

#include "ferry/error.h"

namespace ferry::runtime {
namespace {

void PlaceGraph(const ir::Graph& g, const std::vector<const Backend*>& backends, const Target& target,
                Placement& out) {
  for (const auto& n : g.nodes()) {
    NodeDecision d = DecideNode(*n, backends, target);
    std::string skipped;
    for (const auto& r : d.refused) {
      skipped += (skipped.empty() ? "" : "; ") + r.backend->name() + " [" + FailureLayerName(r.layer) + "] " + r.reason;
    }
    if (d.backend) {
      out.nodes[n.get()] = {d.backend, d.kernel, skipped.empty() ? "native on " + d.backend->name() : "fallback: " + skipped};
    } else {
      out.unplaced.push_back({n.get(), d.refused.empty() ? FailureLayer::kNone : d.refused.back().layer, skipped});
    }
    for (const ir::Graph* sub : n->subgraphs()) PlaceGraph(*sub, backends, target, out);
  }
}

}  // namespace

NodeDecision DecideNode(const ir::Node& node, const std::vector<const Backend*>& backends, const Target& target) {
  std::vector<DataType> types;
  types.reserve(node.num_inputs());
  for (const ir::Value* v : node.inputs()) {
    types.push_back(v && v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined);
  }
  NodeDecision d;
  for (const Backend* b : backends) {
    SupportResult r = b->kernels().Query(node, types, target);
    if (r.supported()) {
      d.backend = b;
      d.kernel = r.kernel;
      break;
    }
    d.refused.push_back({b, r.layer, std::move(r.reason)});
  }
  return d;
}

Placement PlaceModel(const ir::Model& model, const std::vector<const Backend*>& backends, const Target& target) {
  Placement p;
  PlaceGraph(*model.graph, backends, target, p);
  return p;
}

void RequireFullPlacement(const ir::Model& model, const Placement& placement) {
  if (placement.unplaced.empty()) return;
  bool graph_layer = false;
  std::string msg = model.Describe() + ": " + std::to_string(placement.unplaced.size()) + " node(s) cannot run:";
  for (const auto& u : placement.unplaced) {
    msg += "\n  " + u.node->Describe() + " opset " + std::to_string(u.node->opset()) + ": " + u.reason;
    graph_layer = graph_layer || u.layer == FailureLayer::kGraph;
  }
  if (graph_layer) throw InvalidModelError(msg);
  throw UnsupportedError(msg);
}

}  // namespace ferry::runtime
