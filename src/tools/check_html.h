// `ferry check --html FILE`: the census as one self-contained HTML page (inline CSS, JS and SVG; it fetches
// nothing). It draws the graph laid out by Graphviz (`dot`, through libgvc's C API) with every node colored by
// verdict — green native, yellow fallback, red unsupported — and shows a node's details (op, opset, backend and
// kernel, failure layer, reason, remedy, every backend asked, input/output types, FLOPs) on hover or click;
// below it, the summary: model and target, counts by verdict, fallback ratios by nodes and by FLOPs, ops by
// verdict, and every problem: by severity (error: will not run; slow: a costly fallback; minor: a fallback of
// negligible cost), identical ones grouped into one row with a count (check_html_problems.h, docs/check.md).
// A "problems only" control hides the nodes that run natively; past 1000 nodes the page opens that way.
//
// With a profile (CheckHtmlOptions::profile) the nodes are colored by their share of the run time instead.
//
// Every node of the report is one element carrying `id="ferry_node_<index>"` (index into report.nodes, so it is
// stable for a given model), class `node <verdict>` and the attributes data-index, data-node (the name),
// data-op, data-verdict, data-layer and data-backend. Model strings are untrusted: they are escaped for Graphviz
// labels, HTML text and attributes, and the embedded JSON; invalid UTF-8 becomes U+FFFD.
//
// Above 1000 nodes dot runs with bounded effort (iteration limits, straight edges): ViT-B/16's 774 nodes take
// ~0.3 s with full quality, SSDLite's 3.5k nodes ~3 s instead of ~15 s. Graphs larger than `max_layout_nodes`
// (10k nodes still take ~15 s), or a layout that fails, are drawn as a compact grid of nodes in topological
// order instead, with the same elements, colors and details.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tools/check.h"
#include "tools/profile.h"

namespace ferry::tools {

struct CheckHtmlOptions {
  size_t max_layout_nodes = 5000;
  // `ferry check --html --profile TRACE`: overlay this profile (SummarizeProfile(LoadProfileTrace(TRACE))). Each
  // node is filled by its share of the run time (a heat tint; the outline keeps the verdict color) and labelled
  // "12.3%"; nodes are matched by name (a fused node keeps the name of the node it was anchored on). A node with
  // no time is grey: "fused into X" when a timed step wrote its output (or that of a node it feeds, also without
  // time), else "no time recorded". A legend, a table of the slowest nodes and each node's details say the same.
  const Profile* profile = nullptr;
  std::string profile_source;  // where the profile came from (the trace's path), for the page
};

// The page. Layout takes a process-wide lock (Graphviz has global state).
std::string CheckHtml(const CheckReport& report, const CheckHtmlOptions& options = {});
// Writes CheckHtml(report) to `path`; throws InvalidArgumentError naming the path when it cannot be written.
void WriteCheckHtml(const CheckReport& report, const std::string& path, const CheckHtmlOptions& options = {});

// Escaping used by the page, exposed for tests.
std::string HtmlEscape(std::string_view s);        // text and attribute values: & < > " '
std::string GraphvizLabelEscape(std::string_view s);  // a plain (non-HTML) Graphviz label: \ and control chars

}  // namespace ferry::tools
