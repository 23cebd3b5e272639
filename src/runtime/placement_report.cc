// The placement report: Placement (pointers into the IR) -> PlacementReport (names), and its text and JSON.
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/human_format.h"
#include "runtime/placement.h"
#include "schemas/schema.h"

namespace ferry {

double PlacementReport::fallback_ratio_nodes() const {
  return nodes.empty() ? 0.0 : static_cast<double>(fallback) / static_cast<double>(nodes.size());
}

double PlacementReport::fallback_ratio_flops() const { return total_flops > 0 ? fallback_flops / total_flops : 0.0; }

int64_t PlacementReport::copies_per_run() const {
  int64_t n = 0;
  for (const CopyInfo& c : copies) n += c.once ? 0 : 1;
  return n;
}

int64_t PlacementReport::copy_bytes_per_run() const {
  int64_t n = 0;
  for (const CopyInfo& c : copies) {
    if (c.once) continue;
    if (c.bytes < 0) return -1;
    n += c.bytes;
  }
  return n;
}

namespace runtime {
namespace {

void CollectPaths(const ir::Graph& g, const std::string& path, std::unordered_map<const ir::Graph*, std::string>& out) {
  out[&g] = path;
  for (const auto& n : g.nodes()) {
    for (const auto& a : n->attributes()) {
      if (a.type == ir::AttrType::kGraph && a.g) CollectPaths(*a.g, path + "/" + n->name() + ":" + a.name, out);
      if (a.type == ir::AttrType::kGraphs) {
        for (size_t i = 0; i < a.graphs.size(); ++i) {
          if (a.graphs[i]) {
            CollectPaths(*a.graphs[i], path + "/" + n->name() + ":" + a.name + "[" + std::to_string(i) + "]", out);
          }
        }
      }
    }
  }
}

struct ReportBuilder {
  const Placement& placement;
  const std::unordered_map<const ir::Graph*, std::string>& paths;
  PlacementReport& report;

  void Nodes(const ir::Graph& g) {
    for (const auto& n : g.nodes()) {
      auto it = placement.nodes.find(n.get());
      if (it != placement.nodes.end()) {
        const NodePlacement& p = it->second;
        NodePlacementInfo info;
        info.name = n->name();
        info.op = n->op_type();
        info.domain = std::string(schemas::CanonicalDomain(n->domain()));
        info.graph = paths.at(&g);
        info.backend = p.backend->name();
        info.kernel = p.kernel->name;
        info.kind = PlacementKindName(p.kind);
        info.reason = p.reason;
        info.flops = p.flops;
        report.total_flops += p.flops;
        switch (p.kind) {
          case PlacementKind::kNative: ++report.native; break;
          case PlacementKind::kFallback:
            ++report.fallback;
            report.fallback_flops += p.flops;
            break;
          case PlacementKind::kPinned: ++report.pinned; break;
        }
        report.nodes.push_back(std::move(info));
      }
      for (const ir::Graph* sub : n->subgraphs()) Nodes(*sub);
    }
  }
};

}  // namespace

std::unordered_map<const ir::Graph*, std::string> GraphPaths(const ir::Model& model) {
  std::unordered_map<const ir::Graph*, std::string> out;
  CollectPaths(*model.graph, "main", out);
  return out;
}

PlacementReport MakePlacementReport(const ir::Model& model, const Placement& placement,
                                    const std::vector<const Backend*>& backends) {
  PlacementReport report;
  for (const Backend* b : backends) report.backends.push_back(b->name());
  const auto paths = GraphPaths(model);
  ReportBuilder{placement, paths, report}.Nodes(*model.graph);
  for (const Segment& s : placement.segments) {
    SegmentInfo info{paths.at(s.graph), s.backend->name(), s.backend->device(), {}};
    for (const ir::Node* n : s.nodes) info.nodes.push_back(n->name());
    report.segments.push_back(std::move(info));
  }
  for (const CopyPlan& c : placement.copies) {
    CopyInfo info;
    info.graph = paths.at(c.graph);
    info.value = c.value->name();
    info.from_device = c.from_device;
    info.to_device = c.to_device;
    info.before_node = c.before < c.graph->nodes().size() ? c.graph->nodes()[c.before]->name() : "";
    info.reason = c.reason;
    info.once = c.once;
    info.bytes = c.bytes;
    report.copies.push_back(std::move(info));
  }
  return report;
}

}  // namespace runtime

namespace {

std::string Qualified(const NodePlacementInfo& n) { return n.domain.empty() ? n.op : n.domain + "::" + n.op; }

std::string NodeLabel(const NodePlacementInfo& n) {
  std::string s = "'" + n.name + "' (" + Qualified(n) + ")";
  if (n.graph != "main") s += " in " + n.graph;
  return s;
}

}  // namespace

std::string FormatPlacementText(const PlacementReport& r, bool verbose) {
  std::ostringstream os;
  os << "placement on ";
  for (size_t i = 0; i < r.backends.size(); ++i) os << (i ? "," : "") << r.backends[i];
  os << ": " << r.nodes.size() << " nodes, " << r.native << " native, " << r.fallback << " fallback, " << r.pinned
     << " pinned\n";
  os << "  fallback ratio " << Percent(r.fallback_ratio_nodes()) << " of nodes, "
     << (r.total_flops > 0 ? Percent(r.fallback_ratio_flops()) + " of " + HumanCount(r.total_flops) + " FLOPs"
                           : std::string("FLOPs unknown (no static shapes)"))
     << "\n";
  const int64_t bytes = r.copy_bytes_per_run();
  os << "  copies per run " << r.copies_per_run() << ", "
     << (bytes < 0 ? std::string("bytes known at run time") : HumanBytes(bytes));
  int64_t once = static_cast<int64_t>(r.copies.size()) - r.copies_per_run();
  if (once > 0) os << " (+" << once << " initializer copies at session creation)";
  os << "\n";

  os << "segments (" << r.segments.size() << "):\n";
  for (size_t i = 0; i < r.segments.size(); ++i) {
    const SegmentInfo& s = r.segments[i];
    os << "  #" << i << " " << s.backend;
    if (s.device != "cpu") os << " (" << s.device << ")";
    os << " " << s.graph << ": " << s.nodes.size() << " node" << (s.nodes.size() == 1 ? "" : "s");
    if (!s.nodes.empty()) {
      os << " '" << s.nodes.front() << "'";
      if (s.nodes.size() > 1) os << " .. '" << s.nodes.back() << "'";
    }
    os << "\n";
  }
  bool header = false;
  for (const NodePlacementInfo& n : r.nodes) {
    if (!verbose && n.kind == "native") continue;
    if (!header) {
      os << (verbose ? "nodes:\n" : "nodes not native:\n");
      header = true;
    }
    os << "  " << NodeLabel(n) << " -> " << n.backend << " [" << n.kind << "] " << n.reason << "\n";
  }
  if (!r.copies.empty()) {
    os << "copies:\n";
    for (const CopyInfo& c : r.copies) {
      os << "  '" << c.value << "' " << c.from_device << " -> " << c.to_device << " ("
         << (c.bytes < 0 ? std::string("size known at run time") : HumanBytes(c.bytes)) << ") for " << c.reason;
      if (c.once) os << ", once at session creation";
      os << "\n";
    }
  }
  return os.str();
}

std::string FormatPlacementJson(const PlacementReport& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["backends"] = r.backends;
  j["summary"] = {{"nodes", r.nodes.size()},
                  {"native", r.native},
                  {"fallback", r.fallback},
                  {"pinned", r.pinned},
                  {"fallback_ratio_nodes", r.fallback_ratio_nodes()},
                  {"fallback_ratio_flops", r.fallback_ratio_flops()},
                  {"total_flops", r.total_flops},
                  {"segments", r.segments.size()},
                  {"copies_per_run", r.copies_per_run()},
                  {"copy_bytes_per_run", r.copy_bytes_per_run()}};
  j["nodes"] = Json::array();
  for (const NodePlacementInfo& n : r.nodes) {
    j["nodes"].push_back({{"name", n.name},
                          {"op", n.op},
                          {"domain", n.domain},
                          {"graph", n.graph},
                          {"backend", n.backend},
                          {"kernel", n.kernel},
                          {"kind", n.kind},
                          {"reason", n.reason},
                          {"flops", n.flops}});
  }
  j["segments"] = Json::array();
  for (const SegmentInfo& s : r.segments) {
    j["segments"].push_back({{"graph", s.graph}, {"backend", s.backend}, {"device", s.device}, {"nodes", s.nodes}});
  }
  j["copies"] = Json::array();
  for (const CopyInfo& c : r.copies) {
    j["copies"].push_back({{"graph", c.graph},
                           {"value", c.value},
                           {"from", c.from_device},
                           {"to", c.to_device},
                           {"before_node", c.before_node},
                           {"reason", c.reason},
                           {"once", c.once},
                           {"bytes", c.bytes}});
  }
  return j.dump(2);
}

}  // namespace ferry
