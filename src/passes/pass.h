// A graph pass: one rewrite of the IR, at an optimization level. Passes run in the order pass_list.cc gives,
// through the PassManager (pass_manager.h), before placement: the graph they leave is the graph placed and run.
//
// Levels: 0 none; 1 cleanups that never change numerics, and half-precision nodes the targets run only in float32
// computed in float32 (compute_in_float32: closer to exact than half compute); 2 fusions (results may differ by float
// re-association only); 3 layout transforms for the backends in the target list. A pass that needs a backend's kernel
// to exist (a fusion into a Ferry op, a blocked layout) asks that backend's registry, so it only rewrites what will
// run.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"
#include "kernels/registry.h"

namespace ferry::passes {

struct PassRun;  // pass_manager.h

struct PassContext {
  int level = 3;
  std::set<std::string, std::less<>> disabled;  // pass names
  std::vector<const Backend*> backends;         // target backends, priority order
  Target target;                                // hardware the backends' kernels are judged against
  // Node names and op types the user pinned to a backend (--pin): passes leave such nodes as they are.
  std::set<std::string, std::less<>> frozen;

  bool Frozen(const ir::Node& node) const { return frozen.count(node.name()) || frozen.count(node.op_type()); }

  // The first target backend whose kernel supports `node` (where placement will put it), or nullptr (also for a
  // frozen node). A rewrite only happens when the new node goes where the nodes it replaces went: passes never
  // move work off a backend, so `ferry check`'s verdicts on the model as written hold for the optimized graph.
  const Backend* BackendFor(const ir::Node& node) const;

  // Instrument (IR dumps, tracing): OptimizeModel calls it once before the first pass with run == nullptr, then
  // after each pass that changed the model (the graph verified) with that pass's run. Optional.
  std::function<void(const PassRun* run, const ir::Model& model)> instrument;
  // Run the `legalize` pass (--legalize): rewrite nodes no target backend supports into ops they do.
  bool legalize = false;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual int level() const = 0;
  // One or two sentences for docs/optimize.md (generated): what the pass rewrites, and the identity it relies on.
  virtual std::string_view summary() const = 0;
  // Rewrites `model`; returns true when it changed anything.
  virtual bool Apply(ir::Model& model, const PassContext& ctx) const = 0;
};

}  // namespace ferry::passes
