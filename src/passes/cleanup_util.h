// What the level-1 cleanup passes share (eliminate_identity, fold_constants, eliminate_common_subexpressions):
// equality of attributes and tensors, the ops that must never be folded or merged, and forwarding the readers of
// one value to another — outer-scope readers inside subgraphs included — while graph outputs keep their names.
#pragma once

#include "ir/builder.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace ferry::passes {

// Same dtype, shape and elements (bytes; strings element by element).
bool TensorsEqual(const Tensor& a, const Tensor& b);
// Same name, type, referenced attribute and value (floats bitwise; tensors by TensorsEqual). Graph-valued
// attributes are never equal (two bodies are not compared).
bool AttributesEqual(const ir::Attribute& a, const ir::Attribute& b);
// The same attributes, in any order.
bool SameAttributes(const ir::Node& a, const ir::Node& b);

// Ops whose every evaluation may differ: random generators, and Dropout (random in training mode).
bool IsNondeterministic(const ir::Node& node);

// Whether every reader of `from` can read `to` instead (see Forward). `from` must be a value of `graph` whose
// producer the caller removes before calling Forward. False when `from` is a graph output and `to` is graph-visible
// (a graph input, output or initializer) or has no producer in `graph` that can be rebuilt (a frozen one), or
// when a subgraph reading `from` would see another value under `to`'s name (or `from`'s, when it moves).
bool CanForward(const ir::Graph& graph, const PassContext& ctx, const ir::Value* from, const ir::Value* to);

// Makes every reader of `from` (nodes, subgraph nodes and subgraph outputs) read `to`, then removes `from`,
// which nothing produces any more. When `from` is a graph output, its name is kept: `to`'s producer is rebuilt
// to write `from` in place of `to`, `to`'s readers read `from`, and `to` is removed; then the graph needs a
// TopologicalSort (the rebuilt node is appended) and node pointers to the producer are stale: returns true.
bool Forward(ir::Graph& graph, ir::Value* from, ir::Value* to);

// Whether anything reads `v` (of `graph`): a node (in `graph` or a subgraph), a subgraph output or the graph's
// outputs.
using ir::IsRead;

// Removes those of `values` (nullptr and repeats allowed) that are initializers of `graph` nothing reads any more
// and no graph input or output: the shapes and weights of a node a cleanup removed.
void RemoveUnreadInitializers(ir::Graph& graph, std::vector<ir::Value*> values);

}  // namespace ferry::passes
