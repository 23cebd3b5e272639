// `ferry check --html`: the problem table by severity, grouped, and the "problems only" view control (the script
// that applies it is in check_html_assets.cc). See check_html_problems.h; the rule is documented in docs/check.md.
#include "tools/check_html_problems.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/flops.h"
#include "tools/check_html.h"

namespace ferry::tools::check_html {

std::string QualifiedOp(const NodeCheck& n) { return n.domain.empty() ? n.op : n.domain + "::" + n.op; }

std::string LayerName(FailureLayer layer) { return layer == FailureLayer::kNone ? "" : FailureLayerName(layer); }

std::string HumanFlops(double v) {
  if (!(v > 0) || !std::isfinite(v)) return "-";
  char buf[32];
  if (v >= 1e12) std::snprintf(buf, sizeof buf, "%.2f TFLOP", v / 1e12);
  else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2f GFLOP", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2f MFLOP", v / 1e6);
  else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.2f KFLOP", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f FLOP", v);
  return buf;
}

std::string FormatPercent(double percent) {
  if (percent > 0 && percent < 0.05) return "<0.1%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", percent);
  return buf;
}

std::string FormatMs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms >= 100 ? "%.1f ms" : ms >= 1 ? "%.2f ms" : "%.3f ms", ms);
  return buf;
}

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kSlow: return "slow";
    case Severity::kMinor: return "minor";
    case Severity::kInfo: return "info";
  }
  return "error";
}

namespace {

bool IsOnnxDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// Ops that compute their output from shapes or attributes alone (no input data is read): run on the host at
// any size, they cost next to nothing.
bool IsHostSide(std::string_view op) {
  return op == "Shape" || op == "Size" || op == "Constant" || op == "ConstantOfShape";
}

// The elements of a tensor type as TypeInfo::ToString() writes it ("float32[1,64,56,56]", "int64[]" for a
// scalar); nullopt when a dim is symbolic or the type is not a tensor.
std::optional<double> Elements(std::string_view type) {
  const size_t open = type.find('[');
  if (open == std::string_view::npos || type.back() != ']' || type.find('(') != std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view dims = type.substr(open + 1, type.size() - open - 2);
  double elements = 1;
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    if (comma == std::string_view::npos) comma = dims.size();
    const std::string_view d = dims.substr(pos, comma - pos);
    if (d.empty() || !std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    elements *= std::stod(std::string(d));
    pos = comma + 1;
  }
  return elements;
}

// Sort class within a severity: groups the profile timed, then groups with an estimate, then those without.
int RankClass(const ProblemGroup& g) { return g.timed ? 0 : g.ops > 0 ? 1 : 2; }
double RankValue(const ProblemGroup& g) {
  return g.timed ? g.time_percent : g.ops > 0 ? g.ops : static_cast<double>(g.nodes.size());
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The cost line of a group (see ProblemGroup::cost).
std::string CostText(const ProblemGroup& g, const CheckReport& r) {
  const double total = r.total_flops;
  const auto flops_share = [&](double v) {
    return total > 0 ? FormatPercent(100 * v / total) + " of FLOPs" : HumanFlops(v);
  };
  if (g.severity == Severity::kInfo) return "runs where --pin put it";
  std::string s;
  if (g.severity == Severity::kError) {
    s = "will not run";
    if (g.flops > 0) s += " (" + flops_share(g.flops) + ")";
    return s;
  }
  if (g.timed) {
    s = FormatPercent(g.time_percent) + " of run time, " + FormatMs(g.ms);
    if (g.flops > 0) s += " (" + flops_share(g.flops) + ")";
    return s;
  }
  const size_t n = g.nodes.size();
  if (g.flops > 0) s = flops_share(g.flops);
  const double moved = g.ops - g.flops;
  if (moved > 0) {
    char buf[48];
    const double scale = moved >= 1e9 ? 1e9 : moved >= 1e6 ? 1e6 : moved >= 1e3 ? 1e3 : 1;
    const char* unit = scale == 1e9 ? "G" : scale == 1e6 ? "M" : scale == 1e3 ? "K" : "";
    std::snprintf(buf, sizeof buf, "%.3g%s", moved / scale, unit);
    s += (s.empty() ? "" : "; ") + std::string("no arithmetic, writes ") + buf + " elements";
  }
  if (s.empty() && g.host_side > 0) s = "host-side shape or constant op";
  if (g.unknown > 0) {
    const std::string which = g.unknown == static_cast<int64_t>(n)
                                  ? std::string("cost unknown")
                                  : std::to_string(g.unknown) + " of " + std::to_string(n) + " of unknown cost";
    s += (s.empty() ? "" : "; ") + which + " (shapes not static, or an op outside ai.onnx)";
  }
  if (s.empty()) s = "no cost";
  return s;
}

// The rule of docs/check.md ("The HTML report on big models").
Severity FallbackSeverity(const ProblemGroup& g, const CheckReport& r, double max_member_ops) {
  if (g.timed) return g.time_percent >= 100 * kNegligibleShare ? Severity::kSlow : Severity::kMinor;
  if (g.unknown > 0) return Severity::kSlow;
  if (r.total_flops > 0) return g.ops >= kNegligibleShare * r.total_flops ? Severity::kSlow : Severity::kMinor;
  return g.flops > 0 || max_member_ops > kSmallElements ? Severity::kSlow : Severity::kMinor;
}

std::string DisplayName(const NodeCheck& n, size_t i) {
  const std::string name = n.name.empty() ? "#" + std::to_string(i) : n.name;
  return n.graph == "main" || n.graph.empty() ? name : n.graph + "/" + name;
}

const char* SeverityTitle(Severity s) {
  switch (s) {
    case Severity::kError: return "error: will not run (no backend takes the node)";
    case Severity::kSlow: return "slow: a fallback doing a noticeable share of the work, or of unknown cost";
    case Severity::kMinor: return "minor: a fallback of negligible cost";
    case Severity::kInfo: return "info: placed by --pin";
  }
  return "";
}

}  // namespace

NodeCost CostOf(const NodeCheck& n) {
  using Kind = NodeCost::Kind;
  if (n.flops > 0 && std::isfinite(n.flops)) return {Kind::kFlops, n.flops};
  if (!IsOnnxDomain(n.domain) || runtime::HasFlops(n.domain, n.op)) return {Kind::kUnknown, 0};
  if (IsHostSide(n.op)) return {Kind::kHostSide, 0};
  double elements = 0;
  for (const std::string& type : n.output_types) {
    if (type.empty()) continue;  // an omitted optional output
    const std::optional<double> e = Elements(type);
    if (!e) return {Kind::kUnknown, 0};
    elements += *e;
  }
  return {Kind::kMoved, elements};
}

std::vector<ProblemGroup> GroupProblems(const CheckReport& r, const ProfileOverlay* overlay) {
  using Key = std::tuple<std::string, Verdict, std::string, FailureLayer, std::string>;
  std::map<Key, size_t> index;
  std::vector<ProblemGroup> groups;
  std::vector<double> max_ops;  // per group: the costliest member's ops
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const NodeCheck& n = r.nodes[i];
    if (n.verdict == Verdict::kNative) continue;
    const auto [it, fresh] = index.emplace(Key{QualifiedOp(n), n.verdict, n.backend, n.layer, n.reason}, groups.size());
    if (fresh) {
      groups.emplace_back();
      max_ops.push_back(0);
    }
    ProblemGroup& g = groups[it->second];
    g.nodes.push_back(i);
    const NodeCost c = CostOf(n);
    if (c.kind == NodeCost::Kind::kFlops) g.flops += c.ops;
    if (c.kind == NodeCost::Kind::kUnknown) ++g.unknown;
    if (c.kind == NodeCost::Kind::kHostSide) ++g.host_side;
    g.ops += c.ops;
    max_ops[it->second] = std::max(max_ops[it->second], c.ops);
    if (overlay && i < overlay->nodes.size() && overlay->nodes[i].kind == NodeTiming::Kind::kTimed) {
      g.timed = true;
      g.ms += overlay->nodes[i].ms;
      g.time_percent += overlay->nodes[i].percent;
    }
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    ProblemGroup& g = groups[k];
    const Verdict v = r.nodes[g.nodes.front()].verdict;
    g.severity = v == Verdict::kUnsupported ? Severity::kError
                 : v == Verdict::kPinned    ? Severity::kInfo
                                            : FallbackSeverity(g, r, max_ops[k]);
    g.cost = CostText(g, r);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const ProblemGroup& a, const ProblemGroup& b) {
    if (a.severity != b.severity) return a.severity < b.severity;
    if (a.severity == Severity::kError || a.severity == Severity::kInfo) return a.nodes.size() > b.nodes.size();
    if (RankClass(a) != RankClass(b)) return RankClass(a) < RankClass(b);
    return RankValue(a) > RankValue(b);
  });
  return groups;
}

void ProblemTable(std::ostringstream& os, const CheckReport& r, const ProfileOverlay* overlay) {
  const std::vector<ProblemGroup> groups = GroupProblems(r, overlay);
  size_t nodes = 0;
  std::map<Severity, size_t> by_severity;  // nodes per level
  for (const ProblemGroup& g : groups) {
    nodes += g.nodes.size();
    by_severity[g.severity] += g.nodes.size();
  }
  os << "<h2>Problems (" << nodes + r.problems.size() << ")</h2>\n";
  if (groups.empty() && r.problems.empty()) {
    os << "<p class=\"empty\">None: every node runs natively on " << HtmlEscape(r.backends.empty() ? "" : r.backends[0])
       << ".</p>\n";
  }
  if (!r.problems.empty()) {
    os << "<table><tr><th>model-level problem</th></tr>\n";
    for (const std::string& p : r.problems) {
      os << "<tr class=\"row-unsupported\"><td>" << HtmlEscape(p) << "</td></tr>\n";
    }
    os << "</table><br>\n";
  }
  if (!groups.empty()) {
    os << "<p class=\"sev-summary\" id=\"problems-summary\">" << Plural(nodes, "node", "nodes") << " in "
       << Plural(groups.size(), "row", "rows") << ", worst first:";
    for (const auto& [s, count] : by_severity) {
      os << " <span class=\"sev sev-" << SeverityName(s) << "\" title=\"" << HtmlEscape(SeverityTitle(s)) << "\">"
         << SeverityName(s) << "</span> " << count;
    }
    os << " (error: will not run; slow: a fallback doing at least " << FormatPercent(100 * kNegligibleShare)
       << " of the " << (overlay ? "run time or " : "") << "FLOPs, or of unknown cost; minor: negligible)</p>\n";
    os << "<table id=\"problems\"><tr><th>severity</th><th>node</th><th class=\"num\">count</th><th>op</th>"
          "<th>verdict</th><th>layer</th><th>reason</th><th>remedy</th><th>cost</th><th class=\"num\">FLOPs</th>"
          "</tr>\n";
    for (const ProblemGroup& g : groups) {
      const size_t first = g.nodes.front();
      const NodeCheck& n = r.nodes[first];
      const char* sev = SeverityName(g.severity);
      os << "<tr class=\"row-" << VerdictName(n.verdict) << " sev-row-" << sev << "\" data-ref=\"" << first
         << "\" data-severity=\"" << sev << "\" data-count=\"" << g.nodes.size() << "\"><td><span class=\"sev sev-"
         << sev << "\" title=\"" << HtmlEscape(SeverityTitle(g.severity)) << "\">" << sev << "</span></td>"
         << "<td class=\"name\">";
      if (g.nodes.size() == 1) {
        os << "<a>" << HtmlEscape(DisplayName(n, first)) << "</a>";
      } else {
        os << "<details><summary>" << g.nodes.size() << " nodes, first <b>" << HtmlEscape(DisplayName(n, first))
           << "</b></summary><ol class=\"members\">";
        for (size_t i : g.nodes) {
          os << "<li><a data-ref=\"" << i << "\">" << HtmlEscape(DisplayName(r.nodes[i], i)) << "</a></li>";
        }
        os << "</ol></details>";
      }
      os << "</td><td class=\"num\">" << g.nodes.size() << "</td><td class=\"mono\">" << HtmlEscape(QualifiedOp(n))
         << "/" << n.opset << "</td><td>" << VerdictName(n.verdict)
         << (n.backend.empty() ? "" : " &rarr; " + HtmlEscape(n.backend)) << "</td><td>" << LayerName(n.layer)
         << "</td><td>" << HtmlEscape(n.reason) << "</td><td>" << HtmlEscape(n.remedy) << "</td><td>"
         << HtmlEscape(g.cost) << "</td><td class=\"num\">" << HumanFlops(g.flops) << "</td></tr>\n";
    }
    os << "</table>\n";
  }
  if (!r.warnings.empty()) {
    os << "<h2>Warnings (" << r.warnings.size() << ")</h2>\n<table>\n";
    for (const std::string& w : r.warnings) os << "<tr><td>" << HtmlEscape(w) << "</td></tr>\n";
    os << "</table>\n";
  }
}

std::string ViewControls(const CheckReport& r, bool default_on) {
  size_t problems = 0;
  for (const NodeCheck& n : r.nodes) {
    if (n.verdict == Verdict::kFallback || n.verdict == Verdict::kUnsupported) ++problems;
  }
  const bool on = default_on && problems > 0;
  std::string s = "<span class=\"view\" id=\"view\"><label title=\"hide the nodes that run natively (or where --pin "
                  "put them)\"><input type=\"checkbox\" id=\"problems-only\"";
  if (on) s += " checked";
  if (problems == 0) s += " disabled";
  s += ">problems only</label><label title=\"also keep the nodes next to a problem\"><input type=\"checkbox\" "
       "id=\"neighbours\"";
  if (on) s += " checked";
  if (!on) s += " disabled";
  s += ">+ neighbours</label><span id=\"shown\"></span>";
  // Step through the problem nodes, worst first (the order of the problem table).
  const std::string off = problems == 0 ? " disabled" : "";
  s += "<button id=\"prev-problem\" title=\"previous problem node\"" + off + ">&lsaquo;</button><span "
       "id=\"problem-pos\"></span><button id=\"next-problem\" title=\"next problem node, worst first\"" + off +
       ">problem &rsaquo;</button></span>";
  return s;
}

}  // namespace ferry::tools::check_html
