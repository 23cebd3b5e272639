// `ferry check`: the front-end pipeline (runtime/pipeline.h) without weights and without the passes: import ->
// inline functions -> --shape overrides -> type inference -> the placement a session would make -> verdicts,
// remedies, FLOPs and ratios. Formatting (text, JSON) lives in check_format.cc.
#include "tools/check.h"

#include <algorithm>
#include <cstdio>

#include "backends/backend.h"
#include "ferry/error.h"
#include "kernels/cpu/dnnl_isa.h"
#include "kernels/refused_ops.h"
#include "legalize/legalize.h"
#include "runtime/flops.h"
#include "runtime/pipeline.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "tools/fallback_share.h"

namespace ferry::tools {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNative: return "native";
    case Verdict::kFallback: return "fallback";
    case Verdict::kUnsupported: return "unsupported";
    case Verdict::kPinned: return "pinned";
  }
  return "unknown";
}

double CheckReport::fallback_ratio_nodes() const {
  return nodes.empty() ? 0.0 : static_cast<double>(fallback + unsupported) / static_cast<double>(nodes.size());
}

double CheckReport::fallback_ratio_flops() const { return total_flops > 0 ? fallback_flops / total_flops : 0.0; }

namespace {

std::string DomainName(std::string_view domain) { return domain.empty() ? "ai.onnx" : std::string(domain); }

// ---- remedies ----------------------------------------------------------------------------------------------

std::string CcName(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// For a hardware-layer refusal: what the kernel the backend would pick on unlimited hardware needs.
std::string HardwareRemedy(const Backend& b, const ir::Node& n, const Target& target, const Backend* fallback,
                           bool narrowed) {
  std::vector<DataType> types;
  for (const ir::Value* v : n.inputs()) types.push_back(v && v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined);
  Target unlimited;
  unlimited.isa = IsaSet::All();
  unlimited.compute_capability = 1000;
  SupportResult r = b.kernels().Query(n, types, unlimited);
  std::string need;
  bool host_has = false;
  if (r.kernel && !target.isa.contains(r.kernel->isa)) {
    IsaSet missing = r.kernel->isa - target.isa;
    need = "a CPU with " + missing.ToString();
    host_has = DetectHostIsa().contains(missing);
  } else if (r.kernel && r.kernel->min_compute_capability > target.compute_capability) {
    need = "a GPU of compute capability " + CcName(r.kernel->min_compute_capability) + " or newer";
  } else {
    need = "other hardware";
  }
  const std::string drop = host_has && narrowed ? " (this CPU has it: drop --isa / FERRY_ISA)" : "";
  if (fallback) return "falls back to " + fallback->name() + "; to run on " + b.name() + ", run on " + need + drop;
  return "run on " + need + drop + ", or use another backend";
}

std::string GraphRemedy(const ir::Node& n, const std::string& reason, const Backend* fallback) {
  if (fallback) return "falls back to " + fallback->name();
  const auto& registry = schemas::SchemaRegistry::Get();
  const std::string_view domain = schemas::CanonicalDomain(n.domain());
  const int64_t max = registry.MaxOpset(domain);
  if (max > 0 && n.opset() > max) {
    if (domain.empty()) {
      return "convert the model to opset " + std::to_string(max) + " with `ferry optimize --opset " +
             std::to_string(max) + "`";
    }
    return "re-export the model with " + DomainName(domain) + " opset " + std::to_string(max) + " or older";
  }
  if (registry.Versions(domain, n.op_type()).empty()) {
    return "a custom op: load the plugin that implements " + DomainName(domain) + "::" + n.op_type() + " (opset " +
           std::to_string(n.opset()) + ") with --plugin PATH, or write one (docs/plugins.md)";
  }
  // The validator's reason names the node first ("node 'r' (Relu) [Relu at opset 17, ...]: unknown attribute
  // 'alpha'"); the table already shows the node, so the remedy keeps only what is wrong.
  std::string what = reason;
  if (what.rfind(n.Describe(), 0) == 0) {
    size_t at = what.find("]: ");
    if (at != std::string::npos) what = what.substr(at + 3);
    else if (what.compare(n.Describe().size(), 2, ": ") == 0) what = what.substr(n.Describe().size() + 2);
  }
  return "fix the model: " + what;
}

// A built-in op no listed backend has a kernel for (a plugin cannot implement a built-in op): the registered
// backends outside `listed` whose kernels take the node (ref has one for nearly every op), or that none does.
std::string KernelRemedy(const ir::Node& n, const std::vector<std::string>& listed, const Target& target) {
  // An op of ONNX Runtime's (a contrib op, or its default-domain convention) says so: its schema is known, its
  // kernels are what is missing.
  const schemas::OpOrigin origin = schemas::OriginOf(n.domain(), n.op_type(), n.opset());
  std::string from;
  if (origin == schemas::OpOrigin::kOrtContrib || origin == schemas::OpOrigin::kOrtConvention) {
    from = std::string(schemas::OriginName(origin)) + " " + DomainName(schemas::CanonicalDomain(n.domain())) +
           "::" + n.op_type() + ": ";
  }
  // An op no backend implements by decision (kernels/refused_ops.h): its reason says what to do instead.
  if (const std::string_view refused = RefusedOpReason(n.domain(), n.op_type()); !refused.empty()) {
    return from + std::string(refused);
  }
  std::vector<std::string> others;
  for (const std::string& name : BackendNames()) {
    if (std::find(listed.begin(), listed.end(), name) != listed.end()) continue;
    const Backend* b = FindBackend(name);
    if (b && IsHostDevice(b->device()) && runtime::DecideNode(n, {b}, target).backend == b) others.push_back(name);
  }
  std::string list;
  for (const std::string& name : listed) list += (list.empty() ? "" : ",") + name;
  if (others.empty()) {
    return from +
           "no backend Ferry has runs this opset/dtype/attribute: a rewrite (`ferry optimize --legalize`, where one "
           "exists) or another opset (`ferry optimize --opset N`)";
  }
  std::string with;
  for (const std::string& name : others) with += (with.empty() ? "`" : "` or `") + name;
  return from + "no kernel on " + list + " for this opset/dtype/attribute; " + with + "` has one: add it (--backends " +
         list + "," + others.front() + ")";
}

struct Walk {
  const runtime::Placement& placement;
  const std::unordered_map<const ir::Node*, const runtime::UnplacedNode*>& unplaced;
  const Target& target;
  bool isa_narrowed;
  CheckReport& report;
  const ir::Model& model;
  const legalize::LegalizeTarget& legal;  // what `--legalize` would rewrite for

  void VisitGraph(const ir::Graph& g, const std::string& path) {
    for (const auto& n : g.nodes()) {
      VisitNode(*n, path);
      for (const auto& a : n->attributes()) {
        if (a.type == ir::AttrType::kGraph && a.g) VisitGraph(*a.g, path + "/" + n->name() + ":" + a.name);
        if (a.type == ir::AttrType::kGraphs) {
          for (size_t i = 0; i < a.graphs.size(); ++i) {
            if (a.graphs[i]) VisitGraph(*a.graphs[i], path + "/" + n->name() + ":" + a.name + "[" + std::to_string(i) + "]");
          }
        }
      }
    }
  }

  void VisitNode(const ir::Node& n, const std::string& path) {
    NodeCheck c;
    c.name = n.name();
    c.op = n.op_type();
    c.domain = std::string(schemas::CanonicalDomain(n.domain()));
    c.opset = n.opset();
    c.graph = path;
    for (const ir::Value* v : n.inputs()) {
      c.inputs.push_back(v ? v->name() : "");
      c.input_types.push_back(v ? v->type().ToString() : "");
    }
    for (const ir::Value* v : n.outputs()) {
      c.outputs.push_back(v ? v->name() : "");
      c.output_types.push_back(v ? v->type().ToString() : "");
    }
    try {
      c.flops = runtime::EstimateFlops(n);
      // An op that does arithmetic with a cost of 0: its shapes are not static (a --shape would tell).
      if (c.flops == 0 && runtime::HasFlops(n.domain(), n.op_type())) {
        ++report.flops_unknown;
      }
    } catch (const Error&) {
      c.flops = 0;  // an attribute of the wrong type: validation reports it
    }

    // The node's fate, from the placement a session would make.
    const Backend* taken = nullptr;
    bool pinned = false;
    std::vector<runtime::BackendRefusal> refused;
    if (auto it = placement.nodes.find(&n); it != placement.nodes.end()) {
      const runtime::NodePlacement& p = it->second;
      taken = p.backend;
      refused = p.refused;
      c.backend = p.backend->name();
      c.kernel = p.kernel ? p.kernel->name : "";
      if (p.kernel) c.library = p.kernel->library;
      c.verdict = p.kind == runtime::PlacementKind::kNative   ? Verdict::kNative
                  : p.kind == runtime::PlacementKind::kPinned ? Verdict::kPinned
                                                               : Verdict::kFallback;
      if (p.kind == runtime::PlacementKind::kPinned) c.reason = p.reason;
    } else {
      const runtime::UnplacedNode& u = *unplaced.at(&n);
      refused = u.refused;
      c.verdict = Verdict::kUnsupported;
      pinned = u.pinned;
      if (u.pinned) {
        c.layer = u.layer;
        c.reason = u.reason;
        c.remedy = "remove the pin, or pin it to a backend that can run it";
      } else if (u.fallback_forbidden) {
        c.remedy = "only " + u.fallback_forbidden->name() + " can run it, and --no-fallback forbids falling back";
      }
    }
    for (const auto& r : refused) c.attempts.push_back({r.backend->name(), r.layer, r.reason});
    if (taken) c.attempts.push_back({taken->name(), FailureLayer::kNone, ""});
    if (c.verdict != Verdict::kNative && c.verdict != Verdict::kPinned && !refused.empty() && c.reason.empty()) {
      const runtime::BackendRefusal& first = refused.front();
      c.layer = first.layer;
      c.reason = first.reason;
      if (c.remedy.empty()) {
        switch (first.layer) {
          case FailureLayer::kGraph: c.remedy = GraphRemedy(n, first.reason, taken); break;
          case FailureLayer::kHardware:
            try {
              c.remedy = HardwareRemedy(*first.backend, n, target, taken, isa_narrowed);
            } catch (const Error&) {
              c.remedy = taken ? "falls back to " + taken->name() : "run on other hardware, or use another backend";
            }
            break;
          default:
            c.remedy = taken ? "falls back to " + taken->name() : KernelRemedy(n, report.backends, target);
            break;
        }
      }
    }
    // What `--legalize` would do for it (a pinned node is left as it is).
    if (c.verdict == Verdict::kUnsupported && !pinned) {
      try {
        const legalize::RewritePlan plan = legalize::PlanRewrite(model, n, legal);
        if (plan.decomposition) {
          c.rewrite = plan.decomposition->description;
          c.remedy = "rewrite available: " + c.rewrite + " (ferry optimize --legalize / ferry run --legalize)" +
                     (c.remedy.empty() ? "" : "; or " + c.remedy);
          ++report.rewritable;
          // As the pass does: the nodes after it see the rewritten node's output shape (inference may lack it).
          if (plan.decomposition->keeps_shape) legalize::FillKeptType(n);
        } else if (!legalize::DecompositionsFor(n).empty()) {  // a rule exists: say why it does not apply
          c.remedy += (c.remedy.empty() ? "" : "; ") + std::string("--legalize cannot: ") + plan.reason;
        }
      } catch (const Error&) {  // a rule tripping on an odd node: no rewrite to offer
      }
    }
    switch (c.verdict) {
      case Verdict::kNative: ++report.native; break;
      case Verdict::kPinned: ++report.pinned; break;
      case Verdict::kFallback: ++report.fallback; break;
      case Verdict::kUnsupported: ++report.unsupported; break;
    }
    report.total_flops += c.flops;
    if (c.verdict == Verdict::kFallback || c.verdict == Verdict::kUnsupported) report.fallback_flops += c.flops;
    report.nodes.push_back(std::move(c));
  }
};

void ApplyShapes(ir::Model& model, const std::map<std::string, std::vector<int64_t>>& shapes,
                 const std::vector<std::string>& not_inputs) {
  for (const auto& [name, dims] : shapes) {
    ir::Value* v = nullptr;
    for (ir::Value* in : model.graph->inputs()) {
      if (in->name() == name && !in->is_initializer() &&
          std::find(not_inputs.begin(), not_inputs.end(), name) == not_inputs.end()) {
        v = in;
      }
    }
    const std::string where = "--shape " + name;
    if (!v) {
      std::string known;
      for (const ir::Value* in : model.graph->inputs()) {
        if (in->is_initializer() || std::find(not_inputs.begin(), not_inputs.end(), in->name()) != not_inputs.end()) {
          continue;
        }
        known += (known.empty() ? "" : ", ") + in->name();
      }
      throw InvalidArgumentError(where + ": the model has no input '" + name + "' (its inputs: " +
                                 (known.empty() ? "none" : known) + ")");
    }
    for (int64_t d : dims) {
      if (d < 0) throw InvalidArgumentError(where + ": negative dimension " + std::to_string(d));
    }
    ir::TypeInfo& t = v->mutable_type();
    if (t.kind != ir::TypeInfo::Kind::kTensor && t.kind != ir::TypeInfo::Kind::kUnknown) {
      throw InvalidArgumentError(where + ": input '" + name + "' is a " + t.ToString() + ", not a tensor");
    }
    if (t.shape) {
      if (t.shape->size() != dims.size()) {
        throw InvalidArgumentError(where + ": input '" + name + "' has rank " + std::to_string(t.shape->size()) +
                                   " (" + t.ToString() + "), the override has " + std::to_string(dims.size()) +
                                   " dims");
      }
      for (size_t i = 0; i < dims.size(); ++i) {
        const ir::Dim& d = (*t.shape)[i];
        if (d.is_static() && d.value != dims[i]) {
          throw InvalidArgumentError(where + ": dimension " + std::to_string(i) + " of input '" + name + "' is " +
                                     std::to_string(d.value) + " in the model (" + t.ToString() +
                                     "); --shape only fixes symbolic dims");
        }
      }
    }
    t.kind = ir::TypeInfo::Kind::kTensor;
    std::vector<ir::Dim> fixed;
    for (int64_t d : dims) fixed.push_back(ir::Dim::Static(d));
    t.shape = std::move(fixed);
  }
}

}  // namespace

CheckReport CheckModel(const std::string& model_path, const CheckOptions& options) {
  // Options first: a wrong flag is reported before the model is read.
  if (options.backends.empty()) throw InvalidArgumentError("check: the backend list is empty");
  runtime::PipelineOptions pipeline;
  // As a session resolves its target, but --cc (or none: no GPU) instead of the devices here, and --target-isa
  // exactly as given.
  pipeline.target = runtime::ResolveTarget({.backends = options.backends,
                                            .pins = options.pins,
                                            .plugins = options.plugins,
                                            .allow_fallback = options.allow_fallback,
                                            .isa = options.isa,
                                            .isa_exact = options.isa_exact,
                                            .devices = runtime::DeviceRule::kGiven,
                                            .compute_capability = options.compute_capability});
  const runtime::ResolvedTarget& resolved = pipeline.target;
  const Target& target = resolved.target();

  // The stages a session runs up to placement, without the passes (the verdicts are on the model as written), the
  // weights never loaded, and every problem reported rather than thrown.
  pipeline.import.load_initializer_data = false;
  pipeline.fix_shapes = [&](ir::Model& model, const ir::ImportStats& stats) {
    ApplyShapes(model, options.shapes, stats.skipped_names);
  };
  pipeline.optimize = false;
  pipeline.keep_going = true;
  // The same partitioner a session runs (a pin that matches no node is an InvalidArgumentError here too).
  runtime::PreparedModel prepared = runtime::PrepareModel(model_path, pipeline, runtime::Stage::kPlaced);
  const ir::Model& model = *prepared.model;
  const ir::ImportStats& stats = prepared.import_stats;

  CheckReport report;
  report.model_path = model_path;
  report.ir_version = model.ir_version;
  report.producer = model.producer_name;
  if (!model.producer_version.empty()) {
    report.producer += (report.producer.empty() ? "" : " ") + model.producer_version;
  }
  const auto& registry = schemas::SchemaRegistry::Get();
  for (const auto& [domain, version] : model.opsets) {
    report.opsets.push_back({domain, version, registry.MaxOpset(domain)});
  }
  report.initializer_count = stats.initializers;
  report.initializers_not_loaded = stats.initializers_skipped;
  report.initializer_bytes_not_loaded = stats.bytes_skipped;
  for (const Backend* b : resolved.placement.backends) report.backends.push_back(b->name());
  report.isa = target.isa.ToString();
  if (std::find(report.backends.begin(), report.backends.end(), "cpu") != report.backends.end()) {
    report.onednn_isa = cpu::DnnlIsaFor(target.isa);
  }
  report.compute_capability = target.compute_capability;
  report.problems = prepared.problems;
  report.warnings = prepared.inference.conflicts;

  const runtime::Placement& placement = prepared.placement;
  std::unordered_map<const ir::Node*, const runtime::UnplacedNode*> unplaced;
  for (const auto& u : placement.unplaced) unplaced[u.node] = &u;
  // Legalization judges support as a session would place: by any backend, or without fallback by the first
  // (and the plugins, for their custom ops).
  const legalize::LegalizeTarget legal{resolved.legalize_backends, target};
  Walk walk{placement, unplaced, target, resolved.isa_narrowed, report, model, legal};
  walk.VisitGraph(*model.graph, "main");
  report.node_count = static_cast<int64_t>(report.nodes.size());
  for (const ir::Value* v : model.graph->RequiredInputs()) {
    if (v->type().kind == ir::TypeInfo::Kind::kTensor && !v->type().has_static_shape()) {
      report.symbolic_inputs.push_back(v->name() + " " + v->type().ToString());
    }
  }
  // No silent slow path: warn when the estimated FLOPs (the nodes, without static shapes) that fall to a later
  // backend pass kFallbackWarnShare. Unsupported nodes are problems of their own, not a fallback.
  PlacementReport placed;
  placed.backends = report.backends;
  for (const NodeCheck& n : report.nodes) {
    if (n.verdict == Verdict::kUnsupported) continue;
    placed.nodes.push_back({.name = n.name, .op = n.op, .domain = n.domain, .graph = n.graph, .backend = n.backend,
                            .flops = n.flops});
  }
  const std::string slow = FallbackWarning(MeasureFallbackShare(placed));
  if (!slow.empty()) report.warnings.push_back(slow);
  return report;
}

std::vector<std::string> GateFailures(const CheckReport& report, const CheckGate& gate) {
  std::vector<std::string> out;
  if (gate.fail_on != FailOn::kNever && report.unsupported > 0) {
    out.push_back(std::to_string(report.unsupported) + " node(s) unsupported (--fail-on " +
                  (gate.fail_on == FailOn::kFallback ? "fallback" : "unsupported") + ")");
  }
  if (gate.fail_on == FailOn::kFallback && report.fallback > 0) {
    out.push_back(std::to_string(report.fallback) + " node(s) fall back from " +
                  (report.backends.empty() ? std::string("the first backend") : report.backends.front()) +
                  " (--fail-on fallback)");
  }
  if (gate.max_fallback_pct >= 0) {
    const double pct = 100.0 * report.fallback_ratio_nodes();
    if (pct > gate.max_fallback_pct + 1e-9) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "fallback ratio %.1f%% of nodes exceeds --max-fallback %g%%", pct,
                    gate.max_fallback_pct);
      out.emplace_back(buf);
    }
  }
  return out;
}

}  // namespace ferry::tools
