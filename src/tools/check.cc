// `ferry check`: import without weights -> inline functions -> --shape overrides -> type inference -> the
// placement decision of every node (runtime::DecideNode, the function placement itself uses) -> verdicts,
// remedies, FLOPs and ratios. Formatting (text, JSON) lives in check_format.cc.
#include "tools/check.h"

#include <algorithm>
#include <cstdio>

#include "backends/backend.h"
#include "ferry/error.h"
#include "ir/inline_functions.h"
#include "ir/onnx_import.h"
#include "runtime/placement.h"
#include "runtime/type_inference.h"
#include "schemas/schema.h"

namespace ferry::tools {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNative: return "native";
    case Verdict::kFallback: return "fallback";
    case Verdict::kUnsupported: return "unsupported";
  }
  return "unknown";
}

double CheckReport::fallback_ratio_nodes() const {
  return nodes.empty() ? 0.0 : static_cast<double>(fallback + unsupported) / static_cast<double>(nodes.size());
}

double CheckReport::fallback_ratio_flops() const { return total_flops > 0 ? fallback_flops / total_flops : 0.0; }

namespace {

std::string DomainName(std::string_view domain) { return domain.empty() ? "ai.onnx" : std::string(domain); }

// ---- FLOPs from static shapes ------------------------------------------------------------------------------

std::optional<std::vector<int64_t>> StaticShape(const ir::Value* v) {
  if (!v || !v->type().has_static_shape()) return std::nullopt;
  std::vector<int64_t> s;
  for (const ir::Dim& d : *v->type().shape) s.push_back(d.value);
  return s;
}

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

double ProductFrom(const std::vector<int64_t>& shape, size_t first) {
  double n = 1;
  for (size_t i = first; i < shape.size(); ++i) n *= static_cast<double>(shape[i]);
  return n;
}

bool IsElementwise(const std::string& op) {
  static const char* const kOps[] = {
      "Abs",   "Acos",      "Acosh",       "Add",        "And",         "Asin",     "Asinh",    "Atan",
      "Atanh", "BitShift",  "Ceil",        "Celu",       "Clip",        "Cos",      "Cosh",     "Div",
      "Elu",   "Equal",     "Erf",         "Exp",        "Floor",       "Gelu",     "Greater",  "GreaterOrEqual",
      "HardSigmoid",        "HardSwish",   "IsInf",      "IsNaN",       "LeakyRelu", "Less",    "LessOrEqual",
      "Log",   "Max",       "Mean",        "Min",        "Mish",        "Mod",      "Mul",      "Neg",
      "Not",   "Or",        "PRelu",       "Pow",        "Reciprocal",  "Relu",     "Round",    "Selu",
      "Sigmoid", "Sign",    "Sin",         "Sinh",       "Softplus",    "Softsign", "Sqrt",     "Sub",
      "Sum",   "Tan",       "Tanh",        "ThresholdedRelu", "Where",  "Xor",      "Swish",    "BitwiseAnd",
      "BitwiseOr", "BitwiseXor", "BitwiseNot", "Shrink"};
  for (const char* k : kOps) {
    if (op == k) return true;
  }
  return false;
}

// An estimate of the floating-point (or integer multiply-add) operations of one node; 0 when the shapes are
// not static or the op is not one whose cost is well defined (Reshape, Gather, control flow...).
double EstimateFlops(const ir::Node& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return 0;
  const std::string& op = n.op_type();
  auto out = StaticShape(n.output(0));
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    // 2 * N * Cout * spatial_out * (Cin / group) * kernel = 2 * |Y| * prod(W.shape[1:]).
    auto w = StaticShape(n.input(op == "QLinearConv" ? 3 : 1));
    if (!out || !w || w->size() < 2) return 0;
    return 2 * Elements(*out) * ProductFrom(*w, 1);
  }
  if (op == "ConvTranspose") {
    // Every input element scatters into (Cout / group) * kernel outputs: 2 * |X| * prod(W.shape[1:]).
    auto x = StaticShape(n.input(0));
    auto w = StaticShape(n.input(1));
    if (!x || !w || w->size() < 2) return 0;
    return 2 * Elements(*x) * ProductFrom(*w, 1);
  }
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    // 2 * |Y| * K, batched and broadcast (|Y| = batch * M * N).
    auto a = StaticShape(n.input(0));
    if (!out || !a || a->empty()) return 0;
    return 2 * Elements(*out) * static_cast<double>(a->back());
  }
  if (op == "Gemm") {
    auto a = StaticShape(n.input(0));
    if (!out || !a || a->size() != 2) return 0;
    const int64_t k = n.GetInt("transA", 0) ? (*a)[0] : (*a)[1];
    return 2 * Elements(*out) * static_cast<double>(k);
  }
  if (!out) return 0;
  if (IsElementwise(op)) return Elements(*out);
  if (op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization" ||
      op == "GroupNormalization" || op == "RMSNormalization") {
    return 2 * Elements(*out);  // a scale and a shift per element (the statistics are not counted)
  }
  if (op == "Softmax" || op == "LogSoftmax") return 3 * Elements(*out);  // exp, sum, divide
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    const auto k = n.GetInts("kernel_shape");
    double per = 1;
    for (int64_t d : k) per *= static_cast<double>(d);
    return Elements(*out) * per;
  }
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.rfind("Reduce", 0) == 0) {
    auto x = StaticShape(n.input(0));
    return x ? Elements(*x) : 0;
  }
  return 0;
}

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
    return "write a custom-op plugin for " + DomainName(domain) + "::" + n.op_type() + " (opset " +
           std::to_string(n.opset()) + ")";
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

struct Walk {
  const std::vector<const Backend*>& backends;
  const Target& target;
  bool isa_narrowed;
  CheckReport& report;

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
      c.flops = EstimateFlops(n);
    } catch (const Error&) {
      c.flops = 0;  // an attribute of the wrong type: validation reports it
    }

    runtime::NodeDecision d;
    try {
      d = runtime::DecideNode(n, backends, target);
    } catch (const Error& e) {
      // A predicate threw (e.g. reading an attribute of the wrong type of a custom-domain node, which schema
      // validation cannot check): placement would fail the same way, so the node cannot run.
      d = {};
      for (const Backend* b : backends) d.refused.push_back({b, FailureLayer::kGraph, e.what()});
    }
    for (const auto& r : d.refused) c.attempts.push_back({r.backend->name(), r.layer, r.reason});
    if (d.backend) {
      c.attempts.push_back({d.backend->name(), FailureLayer::kNone, ""});
      c.backend = d.backend->name();
      c.kernel = d.kernel ? d.kernel->name : "";
    }
    if (d.refused.empty()) {
      c.verdict = Verdict::kNative;
    } else {
      c.verdict = d.backend ? Verdict::kFallback : Verdict::kUnsupported;
      const runtime::BackendRefusal& first = d.refused.front();
      c.layer = first.layer;
      c.reason = first.reason;
      switch (first.layer) {
        case FailureLayer::kGraph: c.remedy = GraphRemedy(n, first.reason, d.backend); break;
        case FailureLayer::kHardware:
          try {
            c.remedy = HardwareRemedy(*first.backend, n, target, d.backend, isa_narrowed);
          } catch (const Error&) {
            c.remedy = d.backend ? "falls back to " + d.backend->name() : "run on other hardware, or use another backend";
          }
          break;
        default:
          c.remedy = d.backend ? "falls back to " + d.backend->name()
                               : "no kernel for this opset/dtype/attribute: a rewrite (`ferry optimize`) or a plugin";
          break;
      }
    }
    switch (c.verdict) {
      case Verdict::kNative: ++report.native; break;
      case Verdict::kFallback: ++report.fallback; break;
      case Verdict::kUnsupported: ++report.unsupported; break;
    }
    report.total_flops += c.flops;
    if (c.verdict != Verdict::kNative) report.fallback_flops += c.flops;
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
  std::vector<const Backend*> backends;
  for (const auto& name : options.backends) {
    const Backend* b = FindBackend(name);
    if (!b) {
      std::string known;
      for (const auto& k : BackendNames()) known += (known.empty() ? "" : ", ") + k;
      throw InvalidArgumentError("unknown backend '" + name + "' (available: " + known + ")");
    }
    backends.push_back(b);
  }
  Target target;
  if (options.isa_exact) {
    target.isa = IsaSet::Parse(options.isa);
  } else if (!options.isa.empty()) {
    target.isa = target.isa & IsaSet::Parse(options.isa);  // as Session does: --isa narrows this CPU
  }
  target.compute_capability = options.compute_capability;
  const bool isa_narrowed = !options.isa_exact && target.isa != DetectHostIsa();

  ir::ImportOptions import_options;
  import_options.load_initializer_data = false;
  ir::ImportStats stats;
  std::unique_ptr<ir::Model> model = ir::ImportModelFromFile(model_path, import_options, &stats);

  CheckReport report;
  report.model_path = model_path;
  report.ir_version = model->ir_version;
  report.producer = model->producer_name;
  if (!model->producer_version.empty()) {
    report.producer += (report.producer.empty() ? "" : " ") + model->producer_version;
  }
  const auto& registry = schemas::SchemaRegistry::Get();
  for (const auto& [domain, version] : model->opsets) {
    report.opsets.push_back({domain, version, registry.MaxOpset(domain)});
  }
  report.initializer_count = stats.initializers;
  report.initializers_not_loaded = stats.initializers_skipped;
  report.initializer_bytes_not_loaded = stats.bytes_skipped;
  report.backends = options.backends;
  report.isa = target.isa.ToString();
  report.compute_capability = target.compute_capability;

  try {
    ir::InlineModelFunctions(*model);
  } catch (const Error& e) {
    // Inlining may have stopped half-way: check the model as written (the call nodes are then unknown ops).
    report.problems.push_back(std::string("function inlining: ") + e.what());
    model = ir::ImportModelFromFile(model_path, import_options, &stats);
  }
  ApplyShapes(*model, options.shapes, stats.skipped_names);
  runtime::TypeInferenceReport inference;
  try {
    runtime::InferTypes(*model, &inference);
  } catch (const Error& e) {
    // Placement still runs on what was inferred before the failure; the model itself is invalid.
    report.problems.push_back(std::string("type inference: ") + e.what());
  }
  report.warnings = inference.conflicts;

  Walk walk{backends, target, isa_narrowed, report};
  walk.VisitGraph(*model->graph, "main");
  report.node_count = static_cast<int64_t>(report.nodes.size());
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
