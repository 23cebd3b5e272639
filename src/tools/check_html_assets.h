// The inline stylesheet and script of the `ferry check --html` page (check_html.cc).
#pragma once

namespace ferry::tools {

extern const char kCheckHtmlCss[];
// Reads the JSON in <script id="ferry-data">: {"nodes": [...], "edges": [[from, to], ...]}; node elements are
// #ferry_node_<i>, edges (when drawn) #ferry_edge_<from>_<to>.
extern const char kCheckHtmlJs[];

}  // namespace ferry::tools
