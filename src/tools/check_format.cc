// `ferry check` output: the report as text for people and as JSON for tools (schema: docs/check.md).
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/human_format.h"
#include "tools/check.h"

namespace ferry::tools {
namespace {

std::string QualifiedOp(const NodeCheck& n) { return n.domain.empty() ? n.op : n.domain + "::" + n.op; }

std::string VerdictText(const NodeCheck& n) {
  switch (n.verdict) {
    case Verdict::kNative: return "native: " + n.backend;
    case Verdict::kFallback: return "fallback: " + n.backend;
    case Verdict::kUnsupported: return "unsupported";
    case Verdict::kPinned: return "pinned: " + n.backend;
  }
  return "?";
}

// "Conv 53, Relu 49" sorted by count (then name); with_backend: "Conv 2 (ref)".
std::string OpCounts(const std::vector<const NodeCheck*>& nodes, bool with_backend) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (const NodeCheck* n : nodes) ++counts[{QualifiedOp(*n), with_backend ? n->backend : std::string()}];
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [key, count] : sorted) {
    s += (s.empty() ? "" : ", ") + key.first + " " + std::to_string(count);
    if (!key.second.empty()) s += " (" + key.second + ")";
  }
  return s.empty() ? "(none)" : s;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string FormatCheckText(const CheckReport& r, bool verbose) {
  std::ostringstream os;
  os << "model  " << r.model_path << "\n";
  os << "  IR version " << r.ir_version << ", producer " << (r.producer.empty() ? "(none)" : r.producer) << "\n";
  os << "  opsets:";
  for (size_t i = 0; i < r.opsets.size(); ++i) {
    const OpsetInfo& o = r.opsets[i];
    os << (i ? "," : "") << " " << (o.domain.empty() ? "ai.onnx" : o.domain) << " " << o.model;
    if (o.supported == 0) os << " (unknown to Ferry)";
    else if (o.supported >= kOpsetOpen) os << " (a plugin's domain)";
    else if (o.model > o.supported) os << " (NEWER than Ferry's " << o.supported << ")";
    else os << " (Ferry knows up to " << o.supported << ")";
  }
  os << "\n  " << r.node_count << " nodes, " << r.initializer_count << " initializers";
  if (r.initializers_not_loaded > 0) {
    os << " (" << r.initializers_not_loaded << " weights, " << HumanBytes(r.initializer_bytes_not_loaded)
       << ", not loaded)";
  }
  os << "\n";
  os << "target  backends ";
  for (size_t i = 0; i < r.backends.size(); ++i) os << (i ? "," : "") << r.backends[i];
  os << "; isa " << r.isa;
  if (r.compute_capability > 0) {
    os << "; compute capability " << r.compute_capability / 10 << "." << r.compute_capability % 10;
  }
  if (!r.onednn_isa.empty()) {
    int64_t on_onednn = 0;
    for (const NodeCheck& n : r.nodes) on_onednn += n.library == "oneDNN";
    os << "; oneDNN kernels " << r.onednn_isa << " (" << on_onednn << (on_onednn == 1 ? " node)" : " nodes)");
  }
  os << "\n\n";

  const std::string first = r.backends.empty() ? std::string() : r.backends.front();
  int64_t on_first = 0;
  for (const NodeCheck& n : r.nodes) on_first += n.verdict == Verdict::kNative && n.backend == first;
  os << (r.runnable() ? "RUNNABLE" : "NOT RUNNABLE") << ": " << r.native << " native";
  if (on_first == r.native) os << " on " << first;
  else os << " (" << on_first << " on " << first << ", " << r.native - on_first << " custom ops on their plugins)";
  os << ", " << r.fallback << " fall back, " << r.unsupported << " unsupported";
  if (r.rewritable > 0) os << " (" << r.rewritable << " with a rewrite available: --legalize)";
  if (r.pinned > 0) os << ", " << r.pinned << " pinned";
  os << "\n";
  os << "fallback ratio: " << Percent(r.fallback_ratio_nodes()) << " of nodes, " << Percent(r.fallback_ratio_flops())
     << " of estimated FLOPs (total " << HumanCount(r.total_flops) << ")\n";
  if (r.flops_unknown > 0) {
    os << "  not counted: " << r.flops_unknown << (r.flops_unknown == 1 ? " node" : " nodes")
       << " doing arithmetic on shapes that are not static";
    if (!r.symbolic_inputs.empty()) {
      os << "\n  (symbolic inputs: ";
      for (size_t i = 0; i < r.symbolic_inputs.size(); ++i) os << (i ? ", " : "") << r.symbolic_inputs[i];
      os << "; give --shape NAME=DIMS to count them)";
    }
    os << "\n";
  }
  os << "\n";

  std::vector<const NodeCheck*> by[4];
  for (const NodeCheck& n : r.nodes) by[static_cast<int>(n.verdict)].push_back(&n);
  os << "ops by verdict:\n";
  os << "  native       " << OpCounts(by[0], false) << "\n";
  os << "  fallback     " << OpCounts(by[1], true) << "\n";
  os << "  unsupported  " << OpCounts(by[2], false) << "\n";
  if (!by[3].empty()) os << "  pinned       " << OpCounts(by[3], true) << "\n";
  os << "\n";

  std::vector<const NodeCheck*> rows;
  for (const NodeCheck& n : r.nodes) {
    if (verbose || n.verdict != Verdict::kNative) rows.push_back(&n);
  }
  if (!rows.empty()) {
    os << (verbose ? "all nodes" : "not native") << " (" << rows.size() << " of " << r.nodes.size() << " nodes):\n";
    size_t wn = 4, wo = 2, wv = 7;
    for (const NodeCheck* n : rows) {
      wn = std::max(wn, n->name.size() + (n->graph == "main" ? 0 : n->graph.size() - 4));
      wo = std::max(wo, QualifiedOp(*n).size());
      wv = std::max(wv, VerdictText(*n).size());
    }
    wn = std::min<size_t>(wn, 48);
    os << "  " << Pad("NODE", wn) << "  " << Pad("OP", wo) << "  OPSET  " << Pad("VERDICT", wv) << "  "
       << Pad("LAYER", 8) << "  " << (verbose ? Pad("FLOPS", 8) + "  KERNEL" : std::string("FLOPS")) << "\n";
    for (const NodeCheck* n : rows) {
      // Subgraph nodes are shown with their path: "if1:then_branch/relu".
      std::string name = n->graph == "main" ? n->name : n->graph.substr(5) + "/" + n->name;
      std::string flops = n->flops > 0 ? HumanCount(n->flops) : "-";
      os << "  " << Pad(name, wn) << "  " << Pad(QualifiedOp(*n), wo) << "  " << Pad(std::to_string(n->opset), 5)
         << "  " << Pad(VerdictText(*n), wv) << "  "
         << Pad(n->layer == FailureLayer::kNone ? "-" : FailureLayerName(n->layer), 8) << "  "
         << (verbose ? Pad(flops, 8) + "  " + (n->kernel.empty() ? "-" : n->kernel) : flops) << "\n";
      if (n->verdict != Verdict::kNative) {
        os << "      why: " << n->reason << "\n";
        for (size_t i = 1; i < n->attempts.size(); ++i) {
          if (n->attempts[i].layer == FailureLayer::kNone || n->attempts[i].reason == n->reason) continue;
          os << "      " << n->attempts[i].backend << ": [" << FailureLayerName(n->attempts[i].layer) << "] "
             << n->attempts[i].reason << "\n";
        }
        if (!n->remedy.empty()) os << "      fix: " << n->remedy << "\n";
      }
    }
    os << "\n";
  }

  size_t problems = r.problems.size() + by[2].size();
  os << "problems: " << (problems == 0 ? "none" : std::to_string(problems)) << "\n";
  for (const std::string& p : r.problems) os << "  - " << p << "\n";
  for (const NodeCheck* n : by[2]) {
    os << "  - node '" << n->name << "' (" << QualifiedOp(*n) << ", opset " << n->opset << ") ["
       << FailureLayerName(n->layer) << "]: " << n->reason << "\n      fix: " << n->remedy << "\n";
  }
  if (!r.warnings.empty()) {
    os << "warnings: " << r.warnings.size() << "\n";
    for (const std::string& w : r.warnings) os << "  - " << w << "\n";
  }
  return os.str();
}

std::string FormatCheckJson(const CheckReport& r, const CheckGate* gate) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["model"] = {{"path", r.model_path},
                {"ir_version", r.ir_version},
                {"producer", r.producer},
                {"opsets", Json::array()},
                {"nodes", r.node_count},
                {"initializers", r.initializer_count},
                {"initializers_not_loaded", r.initializers_not_loaded},
                {"initializer_bytes_not_loaded", r.initializer_bytes_not_loaded}};
  for (const OpsetInfo& o : r.opsets) {
    j["model"]["opsets"].push_back(
        {{"domain", o.domain.empty() ? "ai.onnx" : o.domain}, {"model", o.model}, {"supported", o.supported}});
  }
  j["target"] = {{"backends", r.backends}, {"isa", r.isa}, {"compute_capability", r.compute_capability}};
  if (!r.onednn_isa.empty()) j["target"]["onednn_isa"] = r.onednn_isa;

  Json ops = {{"native", Json::object()},
              {"fallback", Json::object()},
              {"unsupported", Json::object()},
              {"pinned", Json::object()}};
  for (const NodeCheck& n : r.nodes) {
    Json& slot = ops[VerdictName(n.verdict)][QualifiedOp(n)];
    slot = slot.is_null() ? 1 : slot.get<int64_t>() + 1;
  }
  j["summary"] = {{"runnable", r.runnable()},
                  {"native", r.native},
                  {"fallback", r.fallback},
                  {"unsupported", r.unsupported},
                  {"pinned", r.pinned},
                  {"rewrite_available", r.rewritable},
                  {"fallback_ratio_nodes", r.fallback_ratio_nodes()},
                  {"fallback_ratio_flops", r.fallback_ratio_flops()},
                  {"total_flops", r.total_flops},
                  {"fallback_flops", r.fallback_flops},
                  {"flops_unknown_nodes", r.flops_unknown},
                  {"symbolic_inputs", r.symbolic_inputs},
                  {"ops", ops}};
  if (gate) {
    auto failures = GateFailures(r, *gate);
    const char* fail_on = gate->fail_on == FailOn::kNever         ? nullptr
                          : gate->fail_on == FailOn::kUnsupported ? "unsupported"
                                                                  : "fallback";
    j["gate"] = {{"fail_on", fail_on ? Json(fail_on) : Json(nullptr)},
                 {"max_fallback_pct", gate->max_fallback_pct >= 0 ? Json(gate->max_fallback_pct) : Json(nullptr)},
                 {"passed", failures.empty()},
                 {"failures", failures},
                 {"exit_code", failures.empty() ? 0 : 3}};
  }
  j["problems"] = r.problems;
  j["warnings"] = r.warnings;
  Json nodes = Json::array();
  for (const NodeCheck& n : r.nodes) {
    Json attempts = Json::array();
    for (const BackendAttempt& a : n.attempts) {
      attempts.push_back({{"backend", a.backend},
                          {"supported", a.layer == FailureLayer::kNone},
                          {"layer", a.layer == FailureLayer::kNone ? Json(nullptr) : Json(FailureLayerName(a.layer))},
                          {"reason", a.reason}});
    }
    nodes.push_back({{"name", n.name},
                     {"op", n.op},
                     {"domain", n.domain.empty() ? "ai.onnx" : n.domain},
                     {"opset", n.opset},
                     {"graph", n.graph},
                     {"verdict", VerdictName(n.verdict)},
                     {"backend", n.backend.empty() ? Json(nullptr) : Json(n.backend)},
                     {"kernel", n.kernel.empty() ? Json(nullptr) : Json(n.kernel)},
                     {"onednn_isa", n.library == "oneDNN" ? Json(r.onednn_isa) : Json(nullptr)},
                     {"layer", n.layer == FailureLayer::kNone ? Json(nullptr) : Json(FailureLayerName(n.layer))},
                     {"reason", n.reason},
                     {"remedy", n.remedy},
                     {"rewrite", n.rewrite.empty() ? Json(nullptr) : Json(n.rewrite)},
                     {"attempts", attempts},
                     {"inputs", n.inputs},
                     {"input_types", n.input_types},
                     {"outputs", n.outputs},
                     {"output_types", n.output_types},
                     {"flops", n.flops}});
  }
  j["nodes"] = std::move(nodes);
  return j.dump(2, ' ', false, Json::error_handler_t::replace);  // names are untrusted: no throw on bad UTF-8
}

}  // namespace ferry::tools
