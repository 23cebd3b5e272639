#include "runtime/placement.h"

#include <algorithm>
#include <set>

#include "backends/plugin/plugin_loader.h"
#include "ferry/error.h"
#include "runtime/flops.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::runtime {
namespace {

bool IsStandardDomain(std::string_view domain) {
  const std::string_view d = schemas::CanonicalDomain(domain);
  return d.empty() || d == "ai.onnx.ml" || d == "ai.onnx.preview.training";
}

std::string RefusalsText(const std::vector<BackendRefusal>& refused) {
  std::string s;
  for (const auto& r : refused) {
    s += (s.empty() ? "" : "; ") + r.backend->name() + " [" + FailureLayerName(r.layer) + "] " + r.reason;
  }
  return s;
}

int64_t StaticBytes(const ir::Value& v) {
  const ir::TypeInfo& t = v.type();
  if (!t.is_tensor() || !t.has_static_shape() || t.elem_type == DataType::kUndefined) return -1;
  const int bits = DataTypeBits(t.elem_type);
  if (bits == 0) return -1;  // strings: size unknown until run
  int64_t n = 1;
  for (const ir::Dim& d : *t.shape) n *= d.value;
  return (n * bits + 7) / 8;
}

class Partitioner {
 public:
  Partitioner(const PlacementOptions& options, Placement& out)
      : options_(options), out_(out), pin_used_(options.pins.size(), false) {}

  void Place(const ir::Graph& g) {
    for (const auto& n : g.nodes()) {
      PlaceNode(*n);
      for (const ir::Graph* sub : n->subgraphs()) Place(*sub);
    }
  }

  void Segment(const ir::Graph& g) {
    const Backend* current = nullptr;
    for (const auto& n : g.nodes()) {
      auto it = out_.nodes.find(n.get());
      if (it == out_.nodes.end()) {
        current = nullptr;  // an unplaced node ends a segment
        continue;
      }
      if (it->second.backend != current) {
        current = it->second.backend;
        out_.segments.push_back({&g, current, {}});
      }
      out_.segments.back().nodes.push_back(n.get());
    }
    for (const auto& n : g.nodes()) {
      for (const ir::Graph* sub : n->subgraphs()) Segment(*sub);
    }
  }

  void PlanCopies(const ir::Graph& g) {
    std::set<std::pair<const ir::Value*, std::string>> available;
    const auto& nodes = g.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      auto it = out_.nodes.find(nodes[i].get());
      if (it == out_.nodes.end()) continue;
      const NodePlacement& p = it->second;
      for (size_t k = 0; k < nodes[i]->num_inputs(); ++k) {
        const ir::Value* v = nodes[i]->input(k);
        if (!v) continue;
        const bool host = IsHostDevice(InputDevice(p, k));
        Need(g, *v, host ? nullptr : p.backend, i, available,
             std::string(host && !IsHostDevice(p.backend->device()) ? "host input " : "input ") + std::to_string(k) +
                 " of " + nodes[i]->Describe());
      }
    }
    for (const ir::Value* v : g.outputs()) {
      if (v) Need(g, *v, nullptr, nodes.size(), available, "graph output");
    }
    for (const auto& n : nodes) {
      for (const ir::Graph* sub : n->subgraphs()) PlanCopies(*sub);
    }
  }

  void CheckPinsUsed() const {
    for (size_t i = 0; i < options_.pins.size(); ++i) {
      if (!pin_used_[i]) {
        throw InvalidArgumentError("--pin " + options_.pins[i].pattern + "=" + options_.pins[i].backend->name() +
                                   ": the model has no node named '" + options_.pins[i].pattern +
                                   "' and no node of that op type");
      }
    }
  }

 private:
  // The rule by name wins over a rule by op type. Every rule that matches counts as used, even when overridden.
  const PinRule* PinFor(const ir::Node& n) {
    const PinRule* by_name = nullptr;
    const PinRule* by_op = nullptr;
    for (size_t i = 0; i < options_.pins.size(); ++i) {
      const PinRule& pin = options_.pins[i];
      if (!n.name().empty() && pin.pattern == n.name()) {
        if (!by_name) by_name = &pin;
        pin_used_[i] = true;
      } else if (pin.pattern == n.op_type()) {
        if (!by_op) by_op = &pin;
        pin_used_[i] = true;
      }
    }
    return by_name ? by_name : by_op;
  }

  void PlaceNode(const ir::Node& n) {
    NodePlacement p;
    try {
      p.flops = EstimateFlops(n);
    } catch (const Error&) {
      p.flops = 0;  // an attribute of the wrong type: validation reports it
    }
    if (const PinRule* pin = PinFor(n)) {
      const std::string rule = "--pin " + pin->pattern + "=" + pin->backend->name();
      NodeDecision d = DecideNode(n, {pin->backend}, options_.target);
      if (!d.backend) {
        out_.unplaced.push_back({&n, d.refused.front().layer,
                                 "pinned to " + pin->backend->name() + " by " + rule + ", which cannot run it: [" +
                                     FailureLayerName(d.refused.front().layer) + "] " + d.refused.front().reason,
                                 std::move(d.refused), true, nullptr});
        return;
      }
      p.backend = d.backend;
      p.kernel = d.kernel;
      p.kind = PlacementKind::kPinned;
      p.reason = "pinned by " + rule;
      out_.nodes[&n] = std::move(p);
      return;
    }
    NodeDecision d = DecideNode(n, options_.backends, options_.target);
    if (!d.backend) {
      const FailureLayer layer = d.refused.empty() ? FailureLayer::kNone : d.refused.front().layer;
      out_.unplaced.push_back({&n, layer, RefusalsText(d.refused), std::move(d.refused)});
      return;
    }
    // A custom-domain op that only a plugin provides is native to that plugin: no earlier backend could have
    // run it, so nothing fell back.
    const bool plugin_op = d.backend->is_plugin() && !IsStandardDomain(n.domain());
    const bool native = d.refused.empty() || plugin_op;
    if (!native && !options_.allow_fallback) {
      out_.unplaced.push_back({&n, d.refused.front().layer,
                               "fallback is forbidden (--no-fallback) and " + RefusalsText(d.refused) +
                                   " (only " + d.backend->name() + " could run it)",
                               std::move(d.refused), false, d.backend});
      return;
    }
    p.backend = d.backend;
    p.kernel = d.kernel;
    p.kind = native ? PlacementKind::kNative : PlacementKind::kFallback;
    if (d.refused.empty()) p.reason = "native on " + d.backend->name();
    else if (plugin_op) p.reason = "custom op of plugin " + d.backend->name();
    else p.reason = "fallback to " + d.backend->name() + ": " + RefusalsText(d.refused);
    p.refused = std::move(d.refused);
    out_.nodes[&n] = std::move(p);
  }

  // The backend whose device holds `v` (nullptr: the host).
  const Backend* Home(const ir::Value& v) const {
    const ir::Node* producer = v.producer();
    if (!producer) return nullptr;  // graph input, initializer, subgraph input
    auto it = out_.nodes.find(producer);
    if (it == out_.nodes.end() || IsHostDevice(it->second.backend->device())) return nullptr;
    return it->second.backend;
  }

  void Need(const ir::Graph& g, const ir::Value& v, const Backend* to, size_t before,
            std::set<std::pair<const ir::Value*, std::string>>& available, const std::string& reason) {
    if (to && IsHostDevice(to->device())) to = nullptr;
    const Backend* from = Home(v);
    const std::string from_device = from ? from->device() : std::string(kHostDevice);
    const std::string to_device = to ? to->device() : std::string(kHostDevice);
    if (from_device == to_device) return;
    if (!available.insert({&v, to_device}).second) return;
    CopyPlan c;
    c.graph = &g;
    c.value = &v;
    c.from = from;
    c.to = to;
    c.from_device = from_device;
    c.to_device = to_device;
    c.before = before;
    c.once = v.is_initializer() && v.owner() == &g;
    c.bytes = StaticBytes(v);
    c.reason = reason;
    out_.copies.push_back(std::move(c));
  }

  const PlacementOptions& options_;
  Placement& out_;
  std::vector<bool> pin_used_;
};

}  // namespace

std::string InputDevice(const NodePlacement& p, size_t k) {
  const auto& h = p.kernel->host_inputs;
  if (std::find(h.begin(), h.end(), static_cast<int>(k)) != h.end()) return std::string(kHostDevice);
  return p.backend->device();
}

const char* PlacementKindName(PlacementKind kind) {
  switch (kind) {
    case PlacementKind::kNative: return "native";
    case PlacementKind::kFallback: return "fallback";
    case PlacementKind::kPinned: return "pinned";
  }
  return "unknown";
}

NodeDecision DecideNode(const ir::Node& node, const std::vector<const Backend*>& backends, const Target& target) {
  std::vector<DataType> types;
  types.reserve(node.num_inputs());
  for (const ir::Value* v : node.inputs()) {
    types.push_back(v && v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined);
  }
  NodeDecision d;
  for (const Backend* b : backends) {
    SupportResult r;
    try {
      r = b->kernels().Query(node, types, target);
    } catch (const Error& e) {
      // A predicate read an attribute of the wrong type (custom-domain nodes escape schema validation).
      r = {nullptr, FailureLayer::kGraph, e.what()};
    }
    if (r.supported()) {
      d.backend = b;
      d.kernel = r.kernel;
      break;
    }
    d.refused.push_back({b, r.layer, std::move(r.reason)});
  }
  return d;
}

PlacementOptions ResolvePlacementOptions(const std::vector<std::string>& backends,
                                         const std::vector<std::pair<std::string, std::string>>& pins,
                                         const std::vector<std::string>& plugins, bool allow_fallback) {
  std::vector<const Backend*> plugin_backends;
  for (const auto& path : plugins) plugin_backends.push_back(&LoadPlugin(path));
  auto find = [](const std::string& name, const std::string& where) {
    const Backend* b = FindBackend(name);
    if (!b) {
      std::string known;
      for (const auto& n : BackendNames()) known += (known.empty() ? "" : ", ") + n;
      throw InvalidArgumentError(where + "unknown backend '" + name + "' (available: " + known + ")");
    }
    return b;
  };
  PlacementOptions options;
  for (const auto& name : backends) options.backends.push_back(find(name, ""));
  for (const Backend* b : plugin_backends) {
    if (std::find(options.backends.begin(), options.backends.end(), b) == options.backends.end()) {
      options.backends.push_back(b);
    }
  }
  for (size_t i = 0; i < pins.size(); ++i) {
    const auto& [pattern, backend] = pins[i];
    for (size_t j = 0; j < i; ++j) {
      if (pins[j].first == pattern && pins[j].second != backend) {
        throw InvalidArgumentError("--pin " + pattern + "=" + pins[j].second + " and --pin " + pattern + "=" +
                                   backend + ": one node or op type pinned to two backends");
      }
    }
    options.pins.push_back({pattern, find(backend, "--pin " + pattern + "=" + backend + ": ")});
  }
  options.allow_fallback = allow_fallback;
  return options;
}

Placement PlaceModel(const ir::Model& model, const PlacementOptions& options) {
  if (options.backends.empty()) throw InvalidArgumentError("placement: the backend list is empty");
  for (const PinRule& pin : options.pins) {
    if (!pin.backend) throw InvalidArgumentError("--pin " + pin.pattern + ": no backend given");
  }
  Placement p;
  Partitioner partitioner(options, p);
  partitioner.Place(*model.graph);
  partitioner.CheckPinsUsed();
  partitioner.Segment(*model.graph);
  partitioner.PlanCopies(*model.graph);
  return p;
}

void RequireFullPlacement(const ir::Model& model, const Placement& placement) {
  if (placement.unplaced.empty()) return;
  bool graph_layer = false;
  std::string msg = model.Describe() + ": " + std::to_string(placement.unplaced.size()) + " node(s) cannot run:";
  const auto& schemas = schemas::SchemaRegistry::Get();
  for (const auto& u : placement.unplaced) {
    const ir::Node& n = *u.node;
    msg += "\n  " + n.Describe() + " opset " + std::to_string(n.opset()) + ": " + u.reason;
    const schemas::OpOrigin origin = schemas::OriginOf(n.domain(), n.op_type(), n.opset());
    if (origin == schemas::OpOrigin::kOrtContrib || origin == schemas::OpOrigin::kOrtConvention) {
      msg += " (" + std::string(schemas::OriginName(origin)) + ")";
    }
    if (!IsStandardDomain(n.domain()) && schemas.Versions(schemas::CanonicalDomain(n.domain()), n.op_type()).empty()) {
      msg += " (a custom op: load the plugin that implements " + n.domain() + "::" + n.op_type() +
             " with --plugin PATH, or write one: docs/plugins.md)";
    }
    graph_layer = graph_layer || u.layer == FailureLayer::kGraph;
  }
  if (graph_layer) throw InvalidModelError(msg);
  throw UnsupportedError(msg);
}

}  // namespace ferry::runtime
