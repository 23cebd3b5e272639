#include "tools/check_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "tools/check_html_problems.h"

namespace ferry::tools {
namespace {

constexpr const char* kScriptName = "<script>alert(1)</script>";

NodeCheck Node(std::string name, std::string op, Verdict verdict, std::vector<std::string> inputs,
               std::vector<std::string> outputs) {
  NodeCheck n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.opset = 17;
  n.graph = "main";
  n.verdict = verdict;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  for (size_t i = 0; i < n.inputs.size(); ++i) n.input_types.push_back("tensor(float)[1,3,224,224]");
  for (size_t i = 0; i < n.outputs.size(); ++i) n.output_types.push_back("tensor(float)");
  if (verdict == Verdict::kNative) {
    n.backend = "ref";
    n.kernel = "ref::" + n.op;
    n.attempts.push_back({"ref", FailureLayer::kNone, ""});
  } else if (verdict == Verdict::kFallback) {
    n.backend = "ref";
    n.layer = FailureLayer::kKernel;
    n.reason = "fast: no kernel for " + n.op + " with T=float16";
    n.remedy = "runs on ref";
    n.attempts.push_back({"fast", FailureLayer::kKernel, n.reason});
    n.attempts.push_back({"ref", FailureLayer::kNone, ""});
  } else {
    n.layer = FailureLayer::kGraph;
    n.reason = "unknown domain 'com.evil' <b>bold</b> & \"quoted\"";
    n.remedy = "write a plugin for com.evil::" + n.op + " version 1";
    n.attempts.push_back({"fast", FailureLayer::kGraph, n.reason});
  }
  return n;
}

// conv (native) -> relu (fallback) -> evil (unsupported, custom domain, hostile name) -> loop body node (native,
// in a subgraph) and one with a backslash, a quote and invalid UTF-8 in its name.
CheckReport MakeReport() {
  CheckReport r;
  r.model_path = "models/<b>test</b>.onnx";
  r.ir_version = 8;
  r.producer = "hand & made";
  r.opsets = {{"", 17, 17}, {"com.evil", 1, 0}};
  r.backends = {"fast", "ref"};
  r.isa = "avx2,fma";
  r.initializer_count = 2;
  r.nodes.push_back(Node("conv0", "Conv", Verdict::kNative, {"x", "w"}, {"c"}));
  r.nodes[0].flops = 2.3e9;
  r.nodes.push_back(Node("relu0", "Relu", Verdict::kFallback, {"c"}, {"r"}));
  r.nodes.push_back(Node(kScriptName, "Evil", Verdict::kUnsupported, {"r"}, {"e"}));
  r.nodes[2].domain = "com.evil";
  r.nodes.push_back(Node("body_add", "Add", Verdict::kNative, {"e", "r"}, {"y"}));
  r.nodes[3].graph = "main/Loop_0:body";
  r.nodes.push_back(Node("we\\Nird \"name\" \xff\xfe end", "Identity", Verdict::kNative, {"y"}, {"z"}));
  r.node_count = static_cast<int64_t>(r.nodes.size());
  r.native = 3;
  r.fallback = 1;
  r.unsupported = 1;
  r.total_flops = 2.3e9;
  r.problems = {"model-level <problem>"};
  return r;
}

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// The text of node i's element: from its id to the end of its group (SVG) or div (grid).
std::string NodeElement(const std::string& html, size_t i) {
  const size_t id = html.find("id=\"ferry_node_" + std::to_string(i) + "\"");
  if (id == std::string::npos) return "";
  const size_t begin = html.rfind('<', id);
  const size_t end = html.find("</g>", begin);
  const size_t end_div = html.find("</div>", begin);
  return html.substr(begin, std::min(end, end_div) - begin);
}

TEST(CheckHtml, EveryNodeIsOneElementWithItsData) {
  const CheckReport r = MakeReport();
  const std::string html = CheckHtml(r);
  ASSERT_NE(html.find("<svg"), std::string::npos) << "no Graphviz drawing";
  EXPECT_EQ(Count(html, "data-node=\""), r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    EXPECT_EQ(Count(html, "id=\"ferry_node_" + std::to_string(i) + "\""), 1u) << i;
    const std::string element = NodeElement(html, i);
    EXPECT_NE(element.find("data-index=\"" + std::to_string(i) + "\""), std::string::npos) << element;
    EXPECT_NE(element.find(std::string("data-verdict=\"") + VerdictName(r.nodes[i].verdict) + "\""),
              std::string::npos)
        << element;
  }
  EXPECT_NE(NodeElement(html, 0).find("data-node=\"conv0\""), std::string::npos);
  EXPECT_NE(NodeElement(html, 2).find("data-op=\"com.evil::Evil\""), std::string::npos);
  EXPECT_NE(NodeElement(html, 2).find("data-layer=\"graph\""), std::string::npos);
  // Edges between producer and consumer, including into the subgraph from the outer scope.
  EXPECT_NE(html.find("id=\"ferry_edge_0_1\""), std::string::npos);
  EXPECT_NE(html.find("id=\"ferry_edge_2_3\""), std::string::npos);
  EXPECT_NE(html.find("id=\"ferry_edge_1_3\""), std::string::npos);
  EXPECT_NE(html.find("Loop_0:body"), std::string::npos) << "subgraph cluster label";
}

TEST(CheckHtml, EdgesShowTheTensorTheyCarry) {
  CheckReport r = MakeReport();
  r.nodes[0].output_types = {"float32[1,64,56,56]"};
  const std::string html = CheckHtml(r);
  const size_t edge = html.find("id=\"ferry_edge_0_1\"");
  ASSERT_NE(edge, std::string::npos);
  const std::string element = html.substr(edge, html.find("</g>", edge) - edge);
  EXPECT_NE(element.find(">float32[1,64,56,56]</text>"), std::string::npos) << element;
}

TEST(CheckHtml, ColorsByVerdict) {
  const std::string html = CheckHtml(MakeReport());
  EXPECT_NE(NodeElement(html, 0).find("fill=\"#c6efce\""), std::string::npos) << "native is green";
  EXPECT_NE(NodeElement(html, 1).find("fill=\"#ffe08a\""), std::string::npos) << "fallback is yellow";
  EXPECT_NE(NodeElement(html, 2).find("fill=\"#ffb3b3\""), std::string::npos) << "unsupported is red";
  EXPECT_NE(NodeElement(html, 2).find("class=\"node unsupported\""), std::string::npos);
  EXPECT_NE(html.find("NOT RUNNABLE"), std::string::npos);
}

TEST(CheckHtml, EscapesModelStrings) {
  const std::string html = CheckHtml(MakeReport());
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<b>bold"), std::string::npos);
  EXPECT_EQ(html.find("<b>test"), std::string::npos);
  // Exactly our two scripts: the JSON data and the code.
  EXPECT_EQ(Count(html, "<script"), 2u);
  EXPECT_EQ(Count(html, "</script>"), 2u);
  EXPECT_NE(html.find("data-node=\"&lt;script&gt;alert(1)&lt;/script&gt;\""), std::string::npos);
  EXPECT_NE(html.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos) << "JSON";
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;</a>"), std::string::npos) << "problem table";
  EXPECT_NE(html.find("unknown domain &#39;com.evil&#39; &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;"),
            std::string::npos);
  EXPECT_NE(html.find("models/&lt;b&gt;test&lt;/b&gt;.onnx"), std::string::npos);
  EXPECT_NE(html.find("model-level &lt;problem&gt;"), std::string::npos);
  // Graphviz did not expand \N (it would print the node's Graphviz name) and the bad bytes became U+FFFD.
  const std::string weird = NodeElement(html, 4);
  EXPECT_NE(weird.find("data-node=\"we\\Nird &quot;name&quot; \xEF\xBF\xBD\xEF\xBF\xBD end\""), std::string::npos)
      << weird;
  EXPECT_NE(weird.find(">we\\Nird"), std::string::npos) << weird;
  EXPECT_EQ(weird.find("ferry_node_4</text>"), std::string::npos) << weird;
}

TEST(CheckHtml, LargeGraphsBecomeAGridWithTheSameElements) {
  const CheckReport r = MakeReport();
  const std::string html = CheckHtml(r, {.max_layout_nodes = 2});
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("shown as a grid"), std::string::npos);
  EXPECT_EQ(Count(html, "data-node=\""), r.nodes.size());
  EXPECT_NE(NodeElement(html, 2).find("class=\"node gnode unsupported\""), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
}

TEST(CheckHtml, EmptyReport) {
  CheckReport r;
  r.backends = {"ref"};
  const std::string html = CheckHtml(r);
  EXPECT_NE(html.find("RUNNABLE"), std::string::npos);
  EXPECT_EQ(Count(html, "data-node=\""), 0u);
}

TEST(CheckHtml, Escapers) {
  EXPECT_EQ(HtmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(HtmlEscape("\xc3\xa9t\xc3"), "\xc3\xa9t\xEF\xBF\xBD");          // é kept, truncated sequence replaced
  EXPECT_EQ(HtmlEscape("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate is not UTF-8
  EXPECT_EQ(GraphvizLabelEscape("a\\nb\nc"), "a\\\\nb c");
}

TEST(CheckHtml, WriteCheckHtml) {
  const auto path = std::filesystem::temp_directory_path() / ("ferry_check_html_" + std::to_string(getpid()) + ".html");
  WriteCheckHtml(MakeReport(), path.string());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str().rfind("<!DOCTYPE html>", 0), 0u);
  std::filesystem::remove(path);
  EXPECT_THROW(WriteCheckHtml(MakeReport(), "/nonexistent-dir/x.html"), InvalidArgumentError);
}

// The rows of the problem table: (data-severity, data-count, data-ref of the row's first node), in page order.
struct ProblemRow {
  std::string severity;
  int count = 0;
  int first = -1;
};
std::vector<ProblemRow> ProblemRows(const std::string& html) {
  std::vector<ProblemRow> rows;
  const size_t table = html.find("<table id=\"problems\">");
  if (table == std::string::npos) return rows;
  const size_t end = html.find("</table>", table);
  const auto attr = [&](size_t tr, const std::string& name) {
    const size_t close = html.find('>', tr);
    const size_t at = html.find(" " + name + "=\"", tr);
    if (at == std::string::npos || at > close) return std::string();
    const size_t begin = at + name.size() + 3;
    return html.substr(begin, html.find('"', begin) - begin);
  };
  for (size_t tr = html.find("<tr class=", table); tr < end; tr = html.find("<tr class=", tr + 1)) {
    const std::string count = attr(tr, "data-count"), first = attr(tr, "data-ref");
    rows.push_back(
        {attr(tr, "data-severity"), count.empty() ? 0 : std::stoi(count), first.empty() ? -1 : std::stoi(first)});
  }
  return rows;
}

// A report whose problems come in an order the table must not keep: a cheap Shape fallback first, then a
// negligible Relu, an expensive MatMul, a MatMul without static shapes (cost unknown), a small Gather on a
// shape, a large Transpose, and the unsupported node last.
CheckReport MixedReport() {
  CheckReport r;
  r.model_path = "mixed.onnx";
  r.backends = {"fast", "ref"};
  r.nodes.push_back(Node("conv", "Conv", Verdict::kNative, {"x", "w"}, {"c"}));
  r.nodes[0].flops = 1e9;
  r.nodes.push_back(Node("shape", "Shape", Verdict::kFallback, {"c"}, {"s"}));  // 1
  r.nodes[1].output_types = {"int64[4]"};
  r.nodes.push_back(Node("relu", "Relu", Verdict::kFallback, {"c"}, {"r"}));  // 2: 1e3 of 2e9 FLOPs
  r.nodes[2].flops = 1e3;
  r.nodes.push_back(Node("matmul", "MatMul", Verdict::kFallback, {"r"}, {"m"}));  // 3: half the FLOPs
  r.nodes[3].flops = 1e9;
  r.nodes.push_back(Node("dyn_matmul", "MatMul", Verdict::kFallback, {"m"}, {"d"}));  // 4: flops 0 = unknown
  r.nodes[4].reason = "fast: no kernel for MatMul with a dynamic K";
  r.nodes.push_back(Node("gather", "Gather", Verdict::kFallback, {"s"}, {"g"}));  // 5: one int64
  r.nodes[5].output_types = {"int64[]"};
  r.nodes.push_back(Node("transpose", "Transpose", Verdict::kFallback, {"d"}, {"t"}));  // 6: 4M elements
  r.nodes[6].output_types = {"float32[1,4,1000,1000]"};
  r.nodes.push_back(Node("mystery", "Mystery", Verdict::kUnsupported, {"t"}, {"y"}));  // 7
  r.nodes[7].domain = "com.evil";
  r.node_count = static_cast<int64_t>(r.nodes.size());
  r.native = 1;
  r.fallback = 6;
  r.unsupported = 1;
  r.total_flops = 2e9 + 1e3;
  return r;
}

TEST(CheckHtml, ProblemsAreListedBySeverity) {
  const std::string html = CheckHtml(MixedReport(), {.max_layout_nodes = 0});
  const std::vector<ProblemRow> rows = ProblemRows(html);
  ASSERT_EQ(rows.size(), 7u) << html.substr(html.find("<h2>Problems"), 3000);
  // error (the model will not run), then slow by cost (the MatMul's half of the FLOPs, the Transpose's 4M
  // elements, the MatMul of unknown cost), then minor (the Relu's 0.00005%, the Gather and the Shape).
  const std::vector<std::pair<std::string, int>> want = {{"error", 7}, {"slow", 3}, {"slow", 6}, {"slow", 4},
                                                         {"minor", 2}, {"minor", 5}, {"minor", 1}};
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(rows[k].severity, want[k].first) << "row " << k;
    EXPECT_EQ(rows[k].first, want[k].second) << "row " << k;
  }
  // The level is a column of its own, and the cost says why.
  EXPECT_NE(html.find("<th>severity</th>"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"sev sev-error\""), std::string::npos);
  EXPECT_NE(html.find("<td>50.0% of FLOPs</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>host-side shape or constant op</td>"), std::string::npos);
  EXPECT_NE(html.find("cost unknown (shapes not static"), std::string::npos);
}

TEST(CheckHtml, SeverityRule) {
  using check_html::GroupProblems;
  using check_html::Severity;
  CheckReport r = MixedReport();
  std::vector<check_html::ProblemGroup> groups = GroupProblems(r, nullptr);
  ASSERT_EQ(groups.size(), 7u);
  EXPECT_EQ(groups[0].severity, Severity::kError);
  EXPECT_EQ(groups[1].severity, Severity::kSlow);
  EXPECT_DOUBLE_EQ(groups[1].flops, 1e9);
  EXPECT_EQ(groups.back().severity, Severity::kMinor);
  // Without any FLOPs estimate for the model, small shape tensors stay minor and the big Transpose is slow.
  r.total_flops = 0;
  for (NodeCheck& n : r.nodes) n.flops = 0;
  groups = GroupProblems(r, nullptr);
  for (const auto& g : groups) {
    const std::string& name = r.nodes[g.nodes.front()].name;
    const bool slow = name == "transpose" || name == "matmul" || name == "dyn_matmul" || name == "relu";
    EXPECT_EQ(g.severity, name == "mystery" ? Severity::kError : slow ? Severity::kSlow : Severity::kMinor) << name;
  }
  // With a profile the measured time decides: the Shape taking 30% of the run is slow, the MatMul at 0.01% minor;
  // a node the profile did not time keeps its estimate.
  r = MixedReport();
  ProfileOverlay overlay;
  overlay.nodes.resize(r.nodes.size());
  overlay.nodes[1] = {NodeTiming::Kind::kTimed, 3.0, 30.0, 1, "ref", "", ""};
  overlay.nodes[3] = {NodeTiming::Kind::kTimed, 0.001, 0.01, 1, "ref", "", ""};
  groups = GroupProblems(r, &overlay);
  ASSERT_EQ(groups.size(), 7u);
  EXPECT_EQ(r.nodes[groups[1].nodes.front()].name, "shape");
  EXPECT_EQ(groups[1].severity, Severity::kSlow);
  EXPECT_EQ(groups[1].cost, "30.0% of run time, 3.00 ms");
  for (const auto& g : groups) {
    const std::string& name = r.nodes[g.nodes.front()].name;
    if (name == "matmul") {
      EXPECT_EQ(g.severity, Severity::kMinor);
    } else if (name == "transpose") {
      EXPECT_EQ(g.severity, Severity::kSlow);
    }
  }
}

TEST(CheckHtml, RepeatedProblemsAreGroupedWithACount) {
  CheckReport r = MakeReport();  // one fallback Relu, one unsupported node
  for (int i = 0; i < 299; ++i) {
    r.nodes.push_back(Node("relu_" + std::to_string(i), "Relu", Verdict::kFallback, {"x"}, {"r" + std::to_string(i)}));
  }
  r.nodes.back().name = "<i>last</i>";
  r.node_count = static_cast<int64_t>(r.nodes.size());
  r.fallback = 300;
  const std::string html = CheckHtml(r, {.max_layout_nodes = 0});
  const std::vector<ProblemRow> rows = ProblemRows(html);
  ASSERT_EQ(rows.size(), 2u) << "300 identical fallbacks are one row";
  EXPECT_EQ(rows[0].severity, "error");
  EXPECT_EQ(rows[0].count, 1);
  EXPECT_EQ(rows[1].count, 300);
  EXPECT_EQ(rows[1].first, 1) << "the group's first node";
  EXPECT_NE(html.find("<summary>300 nodes, first <b>relu0</b></summary>"), std::string::npos);
  const size_t list = html.find("<ol class=\"members\">");
  ASSERT_NE(list, std::string::npos);
  const std::string members = html.substr(list, html.find("</ol>", list) - list);
  EXPECT_EQ(Count(members, "<li><a data-ref=\""), 300u);
  EXPECT_NE(members.find("<li><a data-ref=\"1\">relu0</a></li>"), std::string::npos);
  EXPECT_NE(members.find("&lt;i&gt;last&lt;/i&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<i>last"), std::string::npos);
  EXPECT_NE(html.find("<h2>Problems (302)</h2>"), std::string::npos) << "301 nodes and the model-level problem";
}

// A chain of `n` native nodes with an unsupported one in the middle.
CheckReport LongChain(size_t n) {
  CheckReport r;
  r.backends = {"fast", "ref"};
  for (size_t i = 0; i < n; ++i) {
    const Verdict v = i == n / 2 ? Verdict::kUnsupported : Verdict::kNative;
    const std::string in = "v" + std::to_string(i), out = "v" + std::to_string(i + 1);
    r.nodes.push_back(Node("n" + std::to_string(i), "Relu", v, {in}, {out}));
  }
  r.node_count = static_cast<int64_t>(n);
  r.native = static_cast<int64_t>(n) - 1;
  r.unsupported = 1;
  return r;
}

TEST(CheckHtml, ProblemsOnlyViewIsOfferedAndTheDefaultOnLargeGraphs) {
  // A small graph: the control is there, off.
  std::string html = CheckHtml(MakeReport());
  EXPECT_NE(html.find("<input type=\"checkbox\" id=\"problems-only\">"), std::string::npos);
  EXPECT_NE(html.find("id=\"neighbours\" disabled>"), std::string::npos);
  EXPECT_EQ(html.find("id=\"problems-note\""), std::string::npos);
  EXPECT_NE(html.find("getElementById('problems-only')"), std::string::npos) << "the script applies it";
  // Past the bounded-effort layout's size (1000 nodes), the page opens on the problems and their neighbours.
  html = CheckHtml(LongChain(1200), {.max_layout_nodes = 100});
  EXPECT_NE(html.find("<input type=\"checkbox\" id=\"problems-only\" checked>"), std::string::npos);
  EXPECT_NE(html.find("id=\"neighbours\" checked>"), std::string::npos);
  EXPECT_NE(html.find("id=\"problems-note\""), std::string::npos);
  EXPECT_EQ(Count(html, "data-node=\""), 1200u) << "every node is still on the page";
  // ...unless there is no problem to show.
  CheckReport clean = LongChain(1200);
  clean.nodes[600].verdict = Verdict::kNative;
  html = CheckHtml(clean, {.max_layout_nodes = 100});
  EXPECT_NE(html.find("id=\"problems-only\" disabled>"), std::string::npos);
  EXPECT_EQ(html.find("id=\"problems-note\""), std::string::npos);
}

// Several drawings in one process (a library user, or every CheckHtml test run by one ferry_tests process; ctest
// runs each case alone). Graphviz 2.42's pango plugin kept a pointer into the font dictionary of a freed context,
// so the second drawing read freed memory (caught by the FERRY_SANITIZE=ON build as heap-use-after-free).
TEST(CheckHtml, DrawsRepeatedlyInOneProcess) {
  const CheckReport r = MakeReport();
  for (int i = 0; i < 3; ++i) {
    const std::string html = CheckHtml(r);
    ASSERT_NE(html.find("<svg"), std::string::npos) << "drawing " << i;
    EXPECT_EQ(Count(html, "data-node=\""), r.nodes.size()) << "drawing " << i;
  }
}

}  // namespace
}  // namespace ferry::tools
