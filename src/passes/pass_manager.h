// The PassManager: runs the passes of pass_list.cc whose level is <= the requested level, skipping disabled ones,
// timing each and checking the graph after each (every node input defined, nodes in topological order): a pass
// that breaks the graph is an InternalError naming it, never a model that fails later. It records what each pass
// did as a change in op counts, and calls the context's instrument (IR dumps) around the passes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace ferry::passes {

struct PassRun {
  std::string name;
  int level = 0;
  bool changed = false;
  double ms = 0;
  int nodes_before = 0, nodes_after = 0;  // nodes of the top graph
  // What the pass did, as op count changes over every graph (subgraphs included), zero entries left out:
  // {"Conv": -16, "Relu": -16, "ai.ferry::FusedConv": +16}. Ops of the ONNX domain are named bare, others
  // "domain::Op" (OpKey). Empty for a pass that changed nothing (or only rewired).
  std::map<std::string, int> op_delta;
};

// How PassRun::op_delta names an op: "Conv" in the ONNX domain, "ai.ferry::FusedConv" elsewhere.
std::string OpKey(const ir::Node& node);
// The op counts of `graph` and its subgraphs, keyed by OpKey.
std::map<std::string, int> CountOps(const ir::Graph& graph);
// "-16 Conv, -16 Relu, +16 ai.ferry::FusedConv": removals first, then additions, each by name.
std::string FormatOpDelta(const std::map<std::string, int>& delta);

struct PassReport {
  int level = 0;
  std::vector<PassRun> runs;
};

// Every pass Ferry has, in the order they run (pass_list.cc: one line per pass).
const std::vector<std::unique_ptr<Pass>>& AllPasses();

// The level a session uses when none is given: the fastest level whose results match level 0 within float
// re-association (1e-5 relative).
inline constexpr int kDefaultLevel = 3;
inline constexpr int kMaxLevel = 3;

// Throws InvalidArgumentError, prefixed by `what` ("" or e.g. "--disable: "), for a name in `names` that is no
// pass's, listing the known ones.
void CheckPassNames(const std::set<std::string, std::less<>>& names, const std::string& what = "");

// Runs the passes on the model's top graph. Throws InvalidArgumentError for a level outside 0..kMaxLevel or an
// unknown pass name in ctx.disabled (listing the known ones).
PassReport OptimizeModel(ir::Model& model, const PassContext& ctx);

// Throws InternalError naming `after` when a node reads a value nothing defines or nodes are out of order.
void VerifyGraph(const ir::Graph& graph, const std::string& after);

}  // namespace ferry::passes
