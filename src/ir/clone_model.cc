#include "ir/clone_model.h"

#include <unordered_map>

namespace ferry::ir {
namespace {

class Cloner {
 public:
  // Copies `from` into the empty graph `to`. Every value of `from` is created before any node, so a node of a
  // subgraph reading a value of an enclosing graph finds its copy in `map_`.
  void Fill(const ir::Graph& from, ir::Graph& to) {
    to.set_name(from.name());
    to.set_doc(from.doc());
    for (const auto& v : from.values()) {
      ir::Value* nv = to.AddValue(v->name(), v->type());
      nv->set_doc(v->doc());
      map_[v.get()] = nv;
    }
    for (const ir::Value* v : from.initializers()) to.AddInitializer(v->name(), v->initializer_ptr());
    for (const ir::Value* v : from.inputs()) to.mutable_inputs().push_back(Map(v));
    for (const ir::Value* v : from.outputs()) to.mutable_outputs().push_back(Map(v));
    for (const auto& n : from.nodes()) {
      std::vector<ir::Value*> inputs, outputs;
      for (const ir::Value* v : n->inputs()) inputs.push_back(Map(v));
      for (const ir::Value* v : n->outputs()) outputs.push_back(Map(v));
      std::vector<ir::Attribute> attrs = n->attributes();
      for (ir::Attribute& a : attrs) {
        if (a.g) a.g = Sub(*a.g, to);
        for (auto& g : a.graphs) {
          if (g) g = Sub(*g, to);
        }
      }
      ir::Node* nn =
          to.AddNode(n->name(), n->op_type(), n->domain(), std::move(inputs), std::move(outputs), std::move(attrs));
      nn->set_opset(n->opset());
      nn->set_overload(n->overload());
      nn->set_doc(n->doc());
    }
  }

 private:
  ir::Value* Map(const ir::Value* v) const {
    if (!v) return nullptr;
    auto it = map_.find(v);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<ir::Graph> Sub(const ir::Graph& from, ir::Graph& parent) {
    auto g = std::make_shared<ir::Graph>(&parent);
    Fill(from, *g);
    return g;
  }

  std::unordered_map<const ir::Value*, ir::Value*> map_;
};

}  // namespace

std::unique_ptr<Model> CloneModel(const Model& model) {
  auto out = std::make_unique<ir::Model>();
  out->ir_version = model.ir_version;
  out->opsets = model.opsets;
  out->producer_name = model.producer_name;
  out->producer_version = model.producer_version;
  out->domain = model.domain;
  out->doc = model.doc;
  out->model_version = model.model_version;
  out->metadata = model.metadata;
  out->path = model.path;
  Cloner cloner;
  if (model.graph) {
    out->graph = std::make_unique<ir::Graph>();
    cloner.Fill(*model.graph, *out->graph);
  }
  for (const ir::Function& f : model.functions) {
    ir::Function nf = f;
    if (f.body) {
      nf.body = std::make_shared<ir::Graph>();
      cloner.Fill(*f.body, *nf.body);
    }
    out->functions.push_back(std::move(nf));
  }
  return out;
}

}  // namespace ferry::ir
