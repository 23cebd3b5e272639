// What the Conv fusions share: which convolutions may be fused, and building the fused ai.ferry::FusedConv in
// place of a Conv and the nodes after it.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"

namespace ferry::passes {

// A float Conv (any opset whose auto_pad means what FusedConv's does) or a FusedConv, with `activation` unset;
// `allow_z`: FusedConv may already have a Z input.
bool IsFusableConv(const ir::Node& n, bool allow_z);

// Replaces `conv` and `absorbed` (the nodes after it the fusion folds in, in order) by one FusedConv with the
// conv's attributes plus `extra` (an attribute of the same name replaces the conv's), reading `inputs` and
// writing `output` (the last absorbed node's output). Does nothing and returns false unless the fused node would
// run on the backend that runs `conv`.
bool ReplaceWithFusedConv(ir::Model& model, ir::Graph& graph, const PassContext& ctx, ir::Node* conv,
                          const std::vector<ir::Node*>& absorbed, std::vector<ir::Value*> inputs,
                          ir::Value* output, std::vector<ir::Attribute> extra);

}  // namespace ferry::passes
