#include "runtime/placement.h"

#include "ferry/error.h"

namespace ferry::runtime {
namespace {

void PlaceGraph(const ir::Graph& g, const std::vector<const Backend*>& backends, Placement& out) {
  for (const auto& n : g.nodes()) {
    std::vector<DataType> types;
    for (const ir::Value* v : n->inputs()) {
      types.push_back(v && v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined);
    }
    std::string skipped;
    SupportResult last;
    bool placed = false;
    for (const Backend* b : backends) {
      SupportResult r = b->kernels().Query(*n, types);
      if (r.supported()) {
        out.nodes[n.get()] = {b, r.kernel, skipped.empty() ? "native on " + b->name() : "fallback: " + skipped};
        placed = true;
        break;
      }
      skipped += (skipped.empty() ? "" : "; ") + b->name() + " [" + FailureLayerName(r.layer) + "] " + r.reason;
      last = r;
    }
    if (!placed) out.unplaced.push_back({n.get(), last.layer, skipped});
    for (const ir::Graph* sub : n->subgraphs()) PlaceGraph(*sub, backends, out);
  }
}

}  // namespace

Placement PlaceModel(const ir::Model& model, const std::vector<const Backend*>& backends) {
  Placement p;
  PlaceGraph(*model.graph, backends, p);
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
