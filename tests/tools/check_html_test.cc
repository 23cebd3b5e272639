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
