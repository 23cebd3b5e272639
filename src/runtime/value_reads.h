// Which values a node reads, for lifetime analysis (the executor's last uses, the memory estimate): its inputs
// and, recursively, everything the nodes and outputs of its subgraphs (If branches, Loop/Scan bodies) read, so
// that an outer-scope value read inside a body stays alive until the node holding the body has run.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace ferry::runtime {

// True when `maybe_ancestor` encloses `g` (strictly: a graph is not its own ancestor).
inline bool IsAncestorGraph(const ir::Graph* maybe_ancestor, const ir::Graph* g) {
  for (const ir::Graph* p = g->parent(); p; p = p->parent()) {
    if (p == maybe_ancestor) return true;
  }
  return false;
}

// Appends to `out` the values read by `node` or, recursively, by nodes and outputs of its subgraphs (omitted
// inputs skipped; duplicates kept). Values defined inside those subgraphs are included: callers keep those of
// the graph they analyse (owner() == g, or an ancestor of g) and drop the rest.
inline void CollectNodeReads(const ir::Node& node, std::vector<const ir::Value*>& out) {
  for (const ir::Value* v : node.inputs()) {
    if (v) out.push_back(v);
  }
  for (const ir::Graph* sub : node.subgraphs()) {
    for (const auto& n : sub->nodes()) CollectNodeReads(*n, out);
    for (const ir::Value* v : sub->outputs()) out.push_back(v);
  }
}

}  // namespace ferry::runtime
