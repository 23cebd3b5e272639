// Legalization: nodes that no target backend has a kernel for are rewritten into ops some target backend runs,
// when a decomposition (decomposition.h) exists for them. Used by the `legalize` pass (passes/legalize.cc; `ferry
// optimize --legalize`, `ferry run --legalize`, SessionOptions::legalize) and by `ferry check`, which reports
// "rewrite available" for the same nodes the pass would rewrite.
//
// A node is rewritten only when (1) no backend supports it (a supported node is never touched), (2) a rule's
// predicate accepts it, and (3) every node the rule makes is supported by some backend, or is itself rewritten so
// (rules may build ops that decompose further; checked on a scratch copy of the node, up to kMaxDepth levels).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "ir/graph.h"
#include "kernels/registry.h"
#include "legalize/decomposition.h"

namespace ferry::legalize {

inline constexpr int kMaxDepth = 4;

struct LegalizeTarget {
  std::vector<const Backend*> backends;  // priority order; a node is supported when any of them supports it
  Target target;                         // hardware the kernels are judged against
};

// Whether some backend of `t` has a kernel for `node` (with the element types its inputs carry).
bool Supported(const ir::Node& node, const LegalizeTarget& t);

struct RewritePlan {
  const Decomposition* decomposition = nullptr;  // set when the node can be legalized
  std::string reason;                            // why not, otherwise
};
// How `node` (of `model`) would be legalized for `t`. Does not look at whether `node` itself is supported.
RewritePlan PlanRewrite(const ir::Model& model, const ir::Node& node, const LegalizeTarget& t);

struct LegalizeResult {
  int rewritten = 0;                  // nodes replaced (those the replacements made included)
  std::vector<std::string> applied;   // "node 'm' (Mish): Mish -> Clip, Exp, ...", one per rewrite
};
// Rewrites every node of `model` (subgraphs included) that no backend of `t` supports and that a plan exists for,
// again on the nodes the rewrites made, until nothing changes. `frozen` nodes (pinned by the user) are left alone.
LegalizeResult Legalize(ir::Model& model, const LegalizeTarget& t,
                        const std::function<bool(const ir::Node&)>& frozen = {});

}  // namespace ferry::legalize
