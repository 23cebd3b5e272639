// `ferry check --html`: the page skeleton, the summary tables, the embedded node data, and the graph drawing
// (Graphviz dot through libgvc, post-processed to carry per-node data attributes). The stylesheet and script
// live in check_html_assets.cc.
#include "tools/check_html.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "core/human_format.h"
#include "ferry/error.h"
#include "tools/check_html_assets.h"
#include "tools/check_html_problems.h"
#include "tools/profile_overlay.h"

namespace ferry::tools {
namespace {

using check_html::FormatMs;
using check_html::FormatPercent;
using check_html::HumanFlops;
using check_html::LayerName;
using check_html::QualifiedOp;

// ---- strings ------------------------------------------------------------------------------------------------

// Decodes UTF-8 one code point at a time; an invalid sequence (bad lead byte, truncated, overlong, surrogate,
// beyond U+10FFFF) yields U+FFFD and consumes one byte.
char32_t NextCodePoint(std::string_view s, size_t& i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) {
    ++i;
    return c;
  }
  int len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (c > 0xF4) len = 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xFFFD;
  }
  char32_t cp = c & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) {
      ++i;
      return 0xFFFD;
    }
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  const char32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return 0xFFFD;
  }
  i += len;
  return cp;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::vector<char32_t> CodePoints(std::string_view s) {
  std::vector<char32_t> cps;
  for (size_t i = 0; i < s.size();) cps.push_back(NextCodePoint(s, i));
  return cps;
}

// A JSON string literal that is also safe inside <script>: < > & are \u escapes, so "</script>" cannot appear.
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = NextCodePoint(s, i);
    switch (cp) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (cp < 0x20 || cp == '<' || cp == '>' || cp == '&' || cp == 0x7F || cp == 0x2028 || cp == 0x2029) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
          out += buf;
        } else {
          AppendUtf8(out, cp);
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string JsonStrings(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + JsonString(v[i]);
  return out + "]";
}

// The first and last parts of a long name, by code points: "/encoder/la…/query/MatMul".
std::string ElideMiddle(std::string_view s, size_t max_chars) {
  std::vector<char32_t> cps = CodePoints(s);
  std::string out;
  if (cps.size() <= max_chars) {
    for (char32_t c : cps) AppendUtf8(out, c);
    return out;
  }
  const size_t head = (max_chars - 1) / 3, tail = max_chars - 1 - head;
  for (size_t i = 0; i < head; ++i) AppendUtf8(out, cps[i]);
  AppendUtf8(out, 0x2026);
  for (size_t i = cps.size() - tail; i < cps.size(); ++i) AppendUtf8(out, cps[i]);
  return out;
}

const char* kFill[] = {"#c6efce", "#ffe08a", "#ffb3b3"};    // native, fallback, unsupported (CSS: --native...)
const char* kStroke[] = {"#2e7d32", "#a67c00", "#c62828"};

// Pinned nodes are drawn as native: they run where the user asked.
int VerdictIndex(Verdict v) {
  return v == Verdict::kNative || v == Verdict::kPinned ? 0 : v == Verdict::kFallback ? 1 : 2;
}

// ---- edges --------------------------------------------------------------------------------------------------

// One producer -> consumer edge and the type of the (first) value it carries, as the producer's output declares
// it after inference ("float32[1,64,56,56]"; "" when unknown).
struct Edge {
  int from = 0, to = 0;
  std::string type;
};

// producer -> consumer pairs through values, deduplicated. A value is looked up in the consumer's graph first,
// then in each enclosing graph ("main/If_3:then_branch" -> "main"), as ONNX scoping resolves outer names.
std::vector<Edge> GraphEdges(const CheckReport& r) {
  std::map<std::pair<std::string_view, std::string_view>, std::pair<int, size_t>> producer;  // (node, output)
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    for (size_t k = 0; k < r.nodes[i].outputs.size(); ++k) {
      const std::string& o = r.nodes[i].outputs[k];
      if (!o.empty()) {
        producer.emplace(std::make_pair(std::string_view(r.nodes[i].graph), std::string_view(o)),
                         std::make_pair(static_cast<int>(i), k));
      }
    }
  }
  std::set<std::pair<int, int>> seen;
  std::vector<Edge> edges;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    for (const std::string& in : r.nodes[i].inputs) {
      if (in.empty()) continue;
      std::string_view g = r.nodes[i].graph;
      while (true) {
        auto it = producer.find({g, in});
        if (it != producer.end()) {
          const auto [from, k] = it->second;
          if (from != static_cast<int>(i) && seen.insert({from, static_cast<int>(i)}).second) {
            const std::vector<std::string>& types = r.nodes[static_cast<size_t>(from)].output_types;
            edges.push_back({from, static_cast<int>(i), k < types.size() ? types[k] : ""});
          }
          break;
        }
        const size_t slash = g.rfind('/');
        if (slash == std::string_view::npos) break;
        g = g.substr(0, slash);
      }
    }
  }
  return edges;
}

// ---- profile overlay (--profile TRACE) --------------------------------------------------------------------

// The heat tint of a share: sqrt(share / largest share) along light cream -> orange.
std::string HeatColor(double percent, double max_percent) {
  static constexpr std::array<std::array<double, 3>, 4> kStops = {
      {{255, 245, 235}, {253, 208, 162}, {253, 141, 60}, {230, 85, 13}}};
  const double t = max_percent > 0 ? std::sqrt(std::clamp(percent / max_percent, 0.0, 1.0)) : 0;
  const double x = t * (kStops.size() - 1);
  const size_t k = std::min(static_cast<size_t>(x), kStops.size() - 2);
  const double f = x - static_cast<double>(k);
  const auto channel = [&](size_t c) {
    return static_cast<int>(std::lround(kStops[k][c] + f * (kStops[k + 1][c] - kStops[k][c])));
  };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", channel(0), channel(1), channel(2));
  return buf;
}

bool IsMain(const std::string& graph) { return graph.empty() || graph == "main"; }

constexpr const char* kNoTimeFill = "#e4e6ea";

std::string NodeFill(const NodeTiming& t, double max_percent) {
  return t.kind == NodeTiming::Kind::kTimed ? HeatColor(t.percent, max_percent) : kNoTimeFill;
}

// The node's third label line: "12.3% · 0.456 ms", "fused into conv1", "no time".
std::string TimeLabel(const NodeTiming& t) {
  switch (t.kind) {
    case NodeTiming::Kind::kTimed: return FormatPercent(t.percent) + " \u00b7 " + FormatMs(t.ms);
    case NodeTiming::Kind::kFused: return "fused into " + t.fused_into;
    case NodeTiming::Kind::kNone: break;
  }
  return "no time recorded";
}

// The details panel's line.
std::string TimeText(const NodeTiming& t, int runs) {
  if (t.kind == NodeTiming::Kind::kFused) return "no step of its own: fused into " + t.fused_into;
  if (t.kind == NodeTiming::Kind::kNone) {
    return "no time recorded (removed or folded by the optimizer, or not run)";
  }
  std::string s = FormatPercent(t.percent) + " of the run time, " + FormatMs(t.ms) + " (median of " +
                  std::to_string(runs) + (runs == 1 ? " run)" : " runs)");
  if (t.count > 1) s += ", " + std::to_string(t.count) + " times per run";
  if (!t.backend.empty()) s += " on " + t.backend;
  if (!t.ran_as.empty()) s += "; ran as " + t.ran_as;
  return s;
}

// ---- Graphviz -----------------------------------------------------------------------------------------------

struct Drawing {
  std::string svg;     // the <svg> element, empty when the layout failed or was skipped
  std::string note;    // why there is no drawing
  double seconds = 0;  // layout + render
  bool fast = false;   // the bounded-effort settings for large graphs
};

constexpr size_t kFastLayoutNodes = 1000;

std::mutex& GraphvizMutex() {
  static std::mutex m;
  return m;
}
std::string* g_graphviz_errors = nullptr;  // guarded by GraphvizMutex()
int CollectGraphvizError(char* message) {
  if (g_graphviz_errors && message && g_graphviz_errors->size() < 2000) g_graphviz_errors->append(message);
  return 0;
}

void Set(void* obj, const char* name, const std::string& value) {
  agsafeset(obj, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

// One Graphviz context for the whole process, never freed (guarded by GraphvizMutex()). Graphviz 2.42's pango
// text-layout plugin caches a pointer to the last font name in a static variable; that name is owned by the
// context's font dictionary, so freeing a context and creating another made the next layout strcmp() freed
// memory (AddressSanitizer: heap-use-after-free in pango_textlayout on the second drawing in a process).
GVC_t* GraphvizContext() {
  static GVC_t* const gvc = gvContext();
  return gvc;
}

// Owns the Graphviz objects of one drawing (the context is shared, see GraphvizContext()).
struct GraphvizSession {
  GVC_t* gvc = nullptr;
  Agraph_t* graph = nullptr;
  bool laid_out = false;
  ~GraphvizSession() {
    if (laid_out) gvFreeLayout(gvc, graph);
    if (graph) agclose(graph);
  }
};

// Inserts the data attributes after each node group's id (Graphviz writes `<g id="ferry_node_12" class=...>`;
// '<' never occurs unescaped in its text, so the search cannot match inside a label).
std::string AnnotateSvg(std::string_view svg, const CheckReport& r, const ProfileOverlay* overlay) {
  std::string out;
  out.reserve(svg.size() + r.nodes.size() * 120);
  static constexpr std::string_view kTag = "<g id=\"ferry_node_";
  size_t pos = 0;
  while (true) {
    const size_t hit = svg.find(kTag, pos);
    if (hit == std::string_view::npos) break;
    size_t end = hit + kTag.size();
    size_t index = 0;
    bool digits = false;
    while (end < svg.size() && svg[end] >= '0' && svg[end] <= '9') {
      index = index * 10 + static_cast<size_t>(svg[end++] - '0');
      digits = true;
    }
    if (!digits || end >= svg.size() || svg[end] != '"' || index >= r.nodes.size()) {
      out.append(svg.substr(pos, end - pos));
      pos = end;
      continue;
    }
    ++end;  // past the closing quote
    out.append(svg.substr(pos, end - pos));
    const NodeCheck& n = r.nodes[index];
    out += " data-index=\"" + std::to_string(index) + "\" data-node=\"" + HtmlEscape(n.name) + "\" data-op=\"" +
           HtmlEscape(QualifiedOp(n)) + "\" data-verdict=\"" + VerdictName(n.verdict) + "\" data-layer=\"" +
           LayerName(n.layer) + "\" data-backend=\"" + HtmlEscape(n.backend) + "\"";
    if (overlay) out += " data-time=\"" + HtmlEscape(TimeLabel(overlay->nodes[index])) + "\"";
    pos = end;
  }
  out.append(svg.substr(pos));
  return out;
}

Drawing DrawGraph(const CheckReport& r, const std::vector<Edge>& edges, const ProfileOverlay* overlay) {
  Drawing d;
  std::lock_guard<std::mutex> lock(GraphvizMutex());
  std::string errors;
  g_graphviz_errors = &errors;
  const agusererrf previous_errf = agseterrf(CollectGraphvizError);
  const agerrlevel_t previous_level = agseterr(AGERR);
  const auto start = std::chrono::steady_clock::now();
  {
    GraphvizSession s;
    s.gvc = GraphvizContext();
    s.graph = s.gvc ? agopen(const_cast<char*>("ferry"), Agdirected, nullptr) : nullptr;
    if (s.graph) {
      Agraph_t* g = s.graph;
      Set(g, "rankdir", "TB");
      Set(g, "nodesep", "0.25");
      Set(g, "ranksep", "0.35");
      Set(g, "bgcolor", "transparent");
      Set(g, "outputorder", "edgesfirst");
      Set(g, "fontname", "Helvetica");
      Set(g, "fontsize", "11");
      // Past ~1000 nodes dot's defaults get slow (3.5k-node SSDLite: ~15 s, mostly x-placement network simplex,
      // edge routing and crossing minimization); bounded iterations and straight edges bring that to ~3 s at
      // the cost of some crossings and less tidy long edges.
      if (r.nodes.size() > kFastLayoutNodes) {
        d.fast = true;
        Set(g, "nslimit", "0.02");
        Set(g, "nslimit1", "0.02");
        Set(g, "searchsize", "10");
        Set(g, "mclimit", "0.1");
        Set(g, "remincross", "false");
        Set(g, "splines", "line");
      }
      agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
      agattr(g, AGNODE, const_cast<char*>("style"), const_cast<char*>("rounded,filled"));
      agattr(g, AGNODE, const_cast<char*>("fontname"), const_cast<char*>("Helvetica"));
      agattr(g, AGNODE, const_cast<char*>("fontsize"), const_cast<char*>("10"));
      agattr(g, AGNODE, const_cast<char*>("height"), const_cast<char*>("0.3"));
      agattr(g, AGNODE, const_cast<char*>("margin"), const_cast<char*>("0.08,0.03"));
      agattr(g, AGNODE, const_cast<char*>("penwidth"), const_cast<char*>("1.3"));
      agattr(g, AGEDGE, const_cast<char*>("arrowsize"), const_cast<char*>("0.5"));
      agattr(g, AGEDGE, const_cast<char*>("color"), const_cast<char*>("#8a93a0"));
      agattr(g, AGEDGE, const_cast<char*>("penwidth"), const_cast<char*>("0.9"));
      agattr(g, AGEDGE, const_cast<char*>("fontname"), const_cast<char*>("Helvetica"));
      agattr(g, AGEDGE, const_cast<char*>("fontsize"), const_cast<char*>("7"));
      agattr(g, AGEDGE, const_cast<char*>("fontcolor"), const_cast<char*>("#5f6b7a"));

      std::map<std::string, Agraph_t*> clusters;  // one dashed box per subgraph
      std::vector<Agnode_t*> gv_nodes(r.nodes.size());
      for (size_t i = 0; i < r.nodes.size(); ++i) {
        const NodeCheck& n = r.nodes[i];
        const std::string id = "ferry_node_" + std::to_string(i);
        Agnode_t* node = agnode(g, const_cast<char*>(id.c_str()), 1);
        gv_nodes[i] = node;
        const int v = VerdictIndex(n.verdict);
        Set(node, "id", id);
        Set(node, "class", VerdictName(n.verdict));
        Set(node, "fillcolor", overlay ? NodeFill(overlay->nodes[i], overlay->max_percent) : kFill[v]);
        Set(node, "color", kStroke[v]);
        std::string label = GraphvizLabelEscape(ElideMiddle(QualifiedOp(n), 32));
        const std::string name = n.name.empty() ? "#" + std::to_string(i) : n.name;
        label += "\\n" + GraphvizLabelEscape(ElideMiddle(name, 30));
        if (overlay) {
          const NodeTiming& t = overlay->nodes[i];
          label += "\\n" + GraphvizLabelEscape(ElideMiddle(TimeLabel(t), 34));
          if (t.kind != NodeTiming::Kind::kTimed) Set(node, "fontcolor", "#5f6b7a");
        }
        Set(node, "label", label);
        if (n.graph != "main" && !n.graph.empty()) {
          Agraph_t*& sub = clusters[n.graph];
          if (!sub) {
            const std::string cname = "cluster_" + std::to_string(clusters.size());
            sub = agsubg(g, const_cast<char*>(cname.c_str()), 1);
            const std::string_view path = std::string_view(n.graph).substr(n.graph.rfind("main/", 0) == 0 ? 5 : 0);
            Set(sub, "label", GraphvizLabelEscape(ElideMiddle(path, 60)));
            Set(sub, "style", "dashed,rounded");
            Set(sub, "color", "#8a93a0");
            Set(sub, "fontsize", "10");
          }
          agsubnode(sub, node, 1);
        }
      }
      for (const Edge& edge : edges) {
        Agedge_t* e = agedge(g, gv_nodes[edge.from], gv_nodes[edge.to], nullptr, 1);
        if (!e) continue;
        Set(e, "id", "ferry_edge_" + std::to_string(edge.from) + "_" + std::to_string(edge.to));
        // The tensor's dtype and shape on the edge; a huge graph's bounded-effort layout goes without (labels
        // are nodes of their own to dot, and would double its work).
        if (!d.fast && !edge.type.empty()) Set(e, "label", GraphvizLabelEscape(ElideMiddle(edge.type, 40)));
      }
      if (gvLayout(s.gvc, g, "dot") == 0) {
        s.laid_out = true;
        char* data = nullptr;
        unsigned int length = 0;
        if (gvRenderData(s.gvc, g, "svg", &data, &length) == 0 && data) {
          std::string_view svg(data, length);
          const size_t begin = svg.find("<svg");
          if (begin != std::string_view::npos) d.svg = AnnotateSvg(svg.substr(begin), r, overlay);
        }
        if (data) gvFreeRenderData(data);
      }
    }
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  agseterr(previous_level);
  agseterrf(previous_errf);
  g_graphviz_errors = nullptr;
  if (d.svg.empty()) {
    d.note = "Graphviz could not lay out this graph" + (errors.empty() ? std::string(".") : ": " + errors) +
             " It is shown as a grid of nodes in topological order.";
  }
  return d;
}

// ---- page ---------------------------------------------------------------------------------------------------

std::string NodeJson(const NodeCheck& n, const std::string& time) {
  std::string j = "{\"name\":" + JsonString(n.name) + ",\"op\":" + JsonString(n.op) +
                  ",\"domain\":" + JsonString(n.domain.empty() ? "ai.onnx" : n.domain) +
                  ",\"opset\":" + std::to_string(n.opset) + ",\"graph\":" + JsonString(n.graph) +
                  ",\"verdict\":" + JsonString(VerdictName(n.verdict)) + ",\"backend\":" + JsonString(n.backend) +
                  ",\"kernel\":" + JsonString(n.kernel) + ",\"layer\":" + JsonString(LayerName(n.layer)) +
                  ",\"reason\":" + JsonString(n.reason) + ",\"remedy\":" + JsonString(n.remedy) +
                  ",\"rewrite\":" + JsonString(n.rewrite) + ",\"attempts\":[";
  for (size_t k = 0; k < n.attempts.size(); ++k) {
    const BackendAttempt& a = n.attempts[k];
    j += (k ? ",{" : "{") + std::string("\"backend\":") + JsonString(a.backend) +
         ",\"layer\":" + JsonString(LayerName(a.layer)) + ",\"reason\":" + JsonString(a.reason) + "}";
  }
  j += "],\"inputs\":" + JsonStrings(n.inputs) + ",\"input_types\":" + JsonStrings(n.input_types) +
       ",\"outputs\":" + JsonStrings(n.outputs) + ",\"output_types\":" + JsonStrings(n.output_types) +
       ",\"flops\":" + JsonNumber(n.flops);
  if (!time.empty()) j += ",\"time\":" + JsonString(time);
  return j + "}";
}

void Card(std::ostringstream& os, const char* cls, const std::string& key, const std::string& value,
          const std::string& sub) {
  os << "<div class=\"card " << cls << "\"><div class=\"k\">" << key << "</div><div class=\"v\">" << value
     << "</div><div class=\"s\">" << sub << "</div></div>\n";
}

void Summary(std::ostringstream& os, const CheckReport& r) {
  const std::string first = r.backends.empty() ? "" : r.backends.front();
  os << "<section class=\"cards\">\n";
  Card(os, "native", "native", std::to_string(r.native), "on " + HtmlEscape(first));
  std::string others;
  for (size_t i = 1; i < r.backends.size(); ++i) others += (others.empty() ? "to " : ", ") + HtmlEscape(r.backends[i]);
  Card(os, "fallback", "fallback", std::to_string(r.fallback), others.empty() ? "no fallback backend" : others);
  std::string fate = r.runnable() ? "runnable" : "cannot run";
  if (r.rewritable > 0) fate += "; " + std::to_string(r.rewritable) + " with a rewrite available (--legalize)";
  Card(os, "unsupported", "unsupported", std::to_string(r.unsupported), fate);
  os << "<div class=\"card\"><div class=\"k\">not on " << HtmlEscape(first) << "</div>"
     << "<div class=\"s\">by nodes: " << Percent(r.fallback_ratio_nodes()) << "</div><div class=\"bar\"><span style=\"width:"
     << Percent(std::clamp(r.fallback_ratio_nodes(), 0.0, 1.0)) << "\"></span></div>"
     << "<div class=\"s\">by FLOPs: " << Percent(r.fallback_ratio_flops()) << "</div><div class=\"bar\"><span style=\"width:"
     << Percent(std::clamp(r.fallback_ratio_flops(), 0.0, 1.0)) << "\"></span></div></div>\n";
  os << "<div class=\"card info\"><div class=\"k\">model</div><div class=\"v\">IR version " << r.ir_version
     << " &middot; producer " << (r.producer.empty() ? "(none)" : HtmlEscape(r.producer)) << "<br>" << r.node_count
     << " nodes &middot; " << r.initializer_count << " initializers &middot; " << HumanFlops(r.total_flops)
     << " estimated<br>opsets: ";
  for (size_t i = 0; i < r.opsets.size(); ++i) {
    const OpsetInfo& o = r.opsets[i];
    os << (i ? ", " : "") << HtmlEscape(o.domain.empty() ? "ai.onnx" : o.domain) << " " << o.model;
    if (o.supported == 0) os << " <b>(unknown to Ferry)</b>";
    else if (o.model > o.supported) os << " <b>(newer than Ferry's " << o.supported << ")</b>";
  }
  os << "</div></div>\n";
  os << "<div class=\"card info\"><div class=\"k\">target</div><div class=\"v\">backends ";
  for (size_t i = 0; i < r.backends.size(); ++i) os << (i ? " &rarr; " : "") << HtmlEscape(r.backends[i]);
  os << "<br>ISA " << HtmlEscape(r.isa.empty() ? "(host)" : r.isa);
  if (r.compute_capability > 0) os << "<br>compute capability " << r.compute_capability / 10 << "." << r.compute_capability % 10;
  os << "</div></div>\n</section>\n";
}

void OpsTable(std::ostringstream& os, const CheckReport& r) {
  struct Row {
    std::array<int64_t, 3> count{};
    std::set<std::string> backends;  // where fallbacks run
    double flops = 0;
  };
  std::map<std::string, Row> ops;
  for (const NodeCheck& n : r.nodes) {
    Row& row = ops[QualifiedOp(n)];
    ++row.count[VerdictIndex(n.verdict)];
    if (n.verdict == Verdict::kFallback) row.backends.insert(n.backend);
    if (std::isfinite(n.flops)) row.flops += n.flops;
  }
  std::vector<std::pair<std::string, Row>> sorted(ops.begin(), ops.end());
  const auto severity = [](const Row& w) { return w.count[2] > 0 ? 2 : w.count[1] > 0 ? 1 : 0; };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    if (severity(a.second) != severity(b.second)) return severity(a.second) > severity(b.second);
    return a.second.count[0] + a.second.count[1] + a.second.count[2] >
           b.second.count[0] + b.second.count[1] + b.second.count[2];
  });
  os << "<h2>Ops by verdict (" << sorted.size() << " op types)</h2>\n<table id=\"ops\"><tr><th>op</th>"
        "<th class=\"num\">native</th><th class=\"num\">fallback</th><th class=\"num\">unsupported</th>"
        "<th>fallback runs on</th><th class=\"num\">FLOPs</th></tr>\n";
  for (const auto& [op, row] : sorted) {
    const int s = severity(row);
    os << "<tr" << (s == 2 ? " class=\"row-unsupported\"" : s == 1 ? " class=\"row-fallback\"" : "")
       << "><td class=\"mono\">" << HtmlEscape(op) << "</td>";
    for (int64_t c : row.count) os << "<td class=\"num\">" << (c ? std::to_string(c) : "") << "</td>";
    std::string where;
    for (const std::string& b : row.backends) where += (where.empty() ? "" : ", ") + b;
    os << "<td>" << HtmlEscape(where) << "</td><td class=\"num\">" << HumanFlops(row.flops) << "</td></tr>\n";
  }
  os << "</table>\n";
}

void NodeGrid(std::ostringstream& os, const CheckReport& r, const ProfileOverlay* overlay) {
  os << "<div class=\"grid\">\n";
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const NodeCheck& n = r.nodes[i];
    os << "<div class=\"node gnode " << VerdictName(n.verdict) << "\" id=\"ferry_node_" << i << "\" data-index=\"" << i
       << "\" data-node=\"" << HtmlEscape(n.name) << "\" data-op=\"" << HtmlEscape(QualifiedOp(n))
       << "\" data-verdict=\"" << VerdictName(n.verdict) << "\" data-layer=\"" << LayerName(n.layer)
       << "\" data-backend=\"" << HtmlEscape(n.backend) << "\"";
    if (overlay) {
      const NodeTiming& t = overlay->nodes[i];
      os << " data-time=\"" << HtmlEscape(TimeLabel(t)) << "\" style=\"background:"
         << NodeFill(t, overlay->max_percent) << "\">" << HtmlEscape(n.op)
         << (t.kind == NodeTiming::Kind::kTimed ? " " + HtmlEscape(FormatPercent(t.percent)) : "") << "</div>\n";
    } else {
      os << ">" << HtmlEscape(n.op) << "</div>\n";
    }
  }
  os << "</div>\n";
}

// The legend of the profile overlay: the heat scale, the grey of nodes without time, what the outline means.
std::string TimeLegend(const ProfileOverlay& o) {
  std::string scale;
  for (int k = 0; k <= 4; ++k) {
    scale += (k ? "," : "") + HeatColor(o.max_percent * (k / 4.0) * (k / 4.0), o.max_percent);
  }
  return "<span class=\"legend\" id=\"time-legend\"><span><span class=\"sw\" style=\"width:64px;background:"
         "linear-gradient(to right," + scale + ")\"></span>share of run time, 0&ndash;" +
         HtmlEscape(FormatPercent(o.max_percent)) + "</span><span><span class=\"sw\" style=\"background:" +
         kNoTimeFill + "\"></span>no time recorded / fused</span><span>outline: verdict</span></span>";
}

// The slowest nodes of the profile, in the report's terms.
void TimeTable(std::ostringstream& os, const CheckReport& r, const ProfileOverlay& o, const Profile& p,
               const std::string& source) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (o.nodes[i].kind == NodeTiming::Kind::kTimed) rows.push_back(i);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return o.nodes[a].ms > o.nodes[b].ms; });
  constexpr size_t kShown = 25;
  os << "<h2 id=\"time\">Time by node (" << std::min(rows.size(), kShown) << " slowest of " << rows.size()
     << ")</h2>\n<p class=\"empty\">From <code>" << HtmlEscape(source) << "</code>: median of " << p.runs
     << (p.runs == 1 ? " run" : " runs") << ", " << HtmlEscape(FormatMs(p.total_ms)) << " in " << p.steps
     << " steps. " << o.timed << " nodes have time, " << o.fused << " were fused into another node's step, " << o.none
     << " have no time recorded";
  if (o.other_percent > 0) {
    os << "; " << HtmlEscape(FormatPercent(o.other_percent))
       << " of the time is in steps that are no node of this graph (layout reorders, copies)";
  }
  os << ".</p>\n<table id=\"time-table\"><tr><th>node</th><th>op</th><th>ran as</th><th>backend</th>"
        "<th class=\"num\">ms</th><th class=\"num\">share</th><th class=\"num\">count</th></tr>\n";
  for (size_t k = 0; k < std::min(rows.size(), kShown); ++k) {
    const size_t i = rows[k];
    const NodeCheck& n = r.nodes[i];
    const NodeTiming& t = o.nodes[i];
    os << "<tr data-ref=\"" << i << "\"><td class=\"name\"><a>"
       << HtmlEscape(IsMain(n.graph) ? n.name : n.graph + "/" + n.name) << "</a></td><td class=\"mono\">"
       << HtmlEscape(QualifiedOp(n)) << "</td><td class=\"mono\">" << HtmlEscape(t.ran_as) << "</td><td>"
       << HtmlEscape(t.backend) << "</td><td class=\"num\">" << HtmlEscape(FormatMs(t.ms)) << "</td><td class=\"num\""
       << " style=\"background:" << HeatColor(t.percent, o.max_percent) << "\">" << HtmlEscape(FormatPercent(t.percent))
       << "</td><td class=\"num\">" << t.count << "</td></tr>\n";
  }
  os << "</table>\n";
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = NextCodePoint(s, i);
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case 0: out += "\xEF\xBF\xBD"; break;  // NUL is a parse error in HTML
      default: AppendUtf8(out, cp);
    }
  }
  return out;
}

std::string GraphvizLabelEscape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const char32_t cp = NextCodePoint(s, i);
    if (cp == '\\') out += "\\\\";  // else \N, \G, \n... would be expanded
    else if (cp < 0x20 || cp == 0x7F) out += ' ';
    else AppendUtf8(out, cp);
  }
  return out;
}

std::string CheckHtml(const CheckReport& r, const CheckHtmlOptions& options) {
  const auto edges = GraphEdges(r);
  ProfileOverlay overlay_storage;
  const ProfileOverlay* overlay = nullptr;
  if (options.profile) {
    overlay_storage = MatchProfile(r, *options.profile);
    overlay = &overlay_storage;
  }
  Drawing drawing;
  if (r.nodes.size() > options.max_layout_nodes) {
    drawing.note = "This graph has " + std::to_string(r.nodes.size()) + " nodes, more than the " +
                   std::to_string(options.max_layout_nodes) +
                   " Ferry lays out (dot would take minutes); it is shown as a grid of nodes in topological order.";
  } else if (!r.nodes.empty()) {
    drawing = DrawGraph(r, edges, overlay);
  }

  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"ferry check\">\n<title>ferry check: "
     << HtmlEscape(r.model_path) << "</title>\n<style>" << kCheckHtmlCss << "</style>\n</head>\n<body>\n";
  os << "<header><h1>ferry check</h1><span class=\"path\">" << HtmlEscape(r.model_path) << "</span><span class=\"status "
     << (r.runnable() ? "ok\">RUNNABLE" : "bad\">NOT RUNNABLE") << "</span></header>\n<main>\n";
  Summary(os, r);

  os << "<section class=\"work\">\n<div class=\"graph-panel\">\n<div class=\"toolbar\">";
  if (overlay) {
    os << TimeLegend(*overlay);
  } else {
    os << "<span class=\"legend\"><span><span class=\"sw native\"></span>native</span><span><span class=\"sw "
          "fallback\"></span>fallback</span><span><span class=\"sw unsupported\"></span>unsupported</span></span>";
  }
  // Past the bounded-effort layout's size the whole graph is too big to read: the page opens on its problems.
  const bool large = r.nodes.size() > kFastLayoutNodes;
  const bool problems_first = large && std::any_of(r.nodes.begin(), r.nodes.end(), [](const NodeCheck& n) {
    return n.verdict == Verdict::kFallback || n.verdict == Verdict::kUnsupported;
  });
  os << check_html::ViewControls(r, large);
  os << "<input id=\"search\" type=\"search\" placeholder=\"find node or op (Enter: next)\"><span id=\"found\"></span>"
        "<button class=\"zoom\" id=\"zoom-out\" title=\"zoom out\">&minus;</button><span class=\"zoom\" "
        "id=\"zoom-level\"></span><button class=\"zoom\" id=\"zoom-in\" title=\"zoom in (Ctrl+wheel)\">+</button>"
        "<button class=\"zoom\" id=\"zoom-fit\">fit</button><button class=\"zoom\" id=\"zoom-1\">1:1</button></div>\n";
  if (!drawing.note.empty()) os << "<div class=\"note\">" << HtmlEscape(drawing.note) << "</div>\n";
  if (problems_first) {
    os << "<div class=\"note\" id=\"problems-note\">" << r.nodes.size() << " nodes: only the problem nodes and their "
          "neighbours are shown. Uncheck <b>problems only</b> to see every node.</div>\n";
  }
  os << "<div id=\"graph\">\n";
  if (!drawing.svg.empty()) os << drawing.svg;
  else NodeGrid(os, r, overlay);
  os << "</div>\n</div>\n<aside id=\"details\"></aside>\n</section>\n<section class=\"tables\">\n";
  if (overlay) TimeTable(os, r, *overlay, *options.profile, options.profile_source);
  check_html::ProblemTable(os, r, overlay);
  OpsTable(os, r);
  os << "</section>\n</main>\n<footer>Generated by <code>ferry check</code>. " << r.nodes.size() << " nodes, "
     << edges.size() << " edges";
  if (!drawing.svg.empty()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "; laid out by Graphviz dot in %.2f s", drawing.seconds);
    os << buf << (drawing.fast ? " (large graph: bounded-effort layout, straight edges)" : "");
  }
  if (overlay) {
    os << ". Node fill: share of the run time in " << HtmlEscape(options.profile_source)
       << " (grey: no time recorded); outline: green native, yellow fallback, red unsupported.</footer>\n";
  } else {
    os << ". Node colors: green native, yellow fallback, red unsupported.</footer>\n";
  }

  os << "<script type=\"application/json\" id=\"ferry-data\">{\"nodes\":[";
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const std::string time = overlay ? TimeText(overlay->nodes[i], options.profile->runs) : "";
    os << (i ? ",\n" : "\n") << NodeJson(r.nodes[i], time);
  }
  os << "],\n\"edges\":[";
  for (size_t i = 0; i < edges.size(); ++i) os << (i ? "," : "") << "[" << edges[i].from << "," << edges[i].to << "]";
  os << "]}</script>\n<script>" << kCheckHtmlJs << "</script>\n</body>\n</html>\n";
  return os.str();
}

void WriteCheckHtml(const CheckReport& report, const std::string& path, const CheckHtmlOptions& options) {
  const std::string html = CheckHtml(report, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("--html: cannot open '" + path + "' for writing");
  out.write(html.data(), static_cast<std::streamsize>(html.size()));
  out.close();
  if (!out) throw InvalidArgumentError("--html: could not write '" + path + "'");
}

}  // namespace ferry::tools
