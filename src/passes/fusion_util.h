// What the fusion passes share: which convolutions may be fused, the activation after a node, and building the
// fused ai.ferry node (FusedConv, FusedMatMul) in place of the nodes it replaces.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"
#include "passes/pattern.h"

namespace ferry::passes {

// A float Conv (any opset whose auto_pad means what FusedConv's does) or a FusedConv, with `activation` unset;
// `allow_z`: FusedConv may already have a Z input.
bool IsFusableConv(const ir::Node& n, bool allow_z);

// An activation reading a value: its nodes (in order), its output, and what a fused ai.ferry node's `activation`
// and `activation_params` are for it (the table in semantics/fused_activation.h).
struct ActivationMatch {
  std::vector<ir::Node*> nodes;
  ir::Value* output = nullptr;
  std::string activation;
  std::vector<float> params;

  // The `activation` and `activation_params` attributes.
  std::vector<ir::Attribute> Attributes() const;
};

// An activation a fused node can apply, reading what `y` matches (a named pattern: SiLU and Mish read it twice),
// as the root of a pattern: Relu, LeakyRelu, Clip (constant bounds), Sigmoid, Tanh, HardSigmoid, HardSwish, Gelu
// (ai.ferry::Gelu, or ONNX's, approximate "none" or "tanh"), Mish (the op, or Mul(Y, Tanh(Softplus(Y)))), or SiLU
// written as Mul(Y, Sigmoid(Y)). The names act_min, act_max, act_sigmoid, act_softplus and act_tanh are its own.
Pattern ActivationPattern(const Pattern& y);
// The activation a match of ActivationPattern found, or nullopt when it has no fused form (Clip bounds that are
// not scalars). Its nodes are the activation's (without y's producer), the root last.
std::optional<ActivationMatch> ActivationOf(const ir::Graph& g, const Match& m);

// The activation that is the only reader of `y` (which is no graph output): ActivationPattern (then those nodes
// are y's only readers).
bool MatchActivation(const ir::Graph& g, ir::Value* y, ActivationMatch* m);

// Replaces `anchor` and `absorbed` (the nodes after it the fusion folds in, in order) by one ai.ferry node `op`
// named after the anchor, with the anchor's attributes plus `extra` (an attribute of the same name replaces the
// anchor's), reading `inputs` and writing `output` (the last absorbed node's output). Does nothing and returns
// nullptr unless the fused node would run on the backend that runs `anchor` and none of the nodes is frozen.
// With keep_anchor_attributes false the fused node gets `extra` only (the anchor's attributes mean nothing to it).
ir::Node* ReplaceWithFused(ir::Model& model, ir::Graph& graph, const PassContext& ctx, const std::string& op,
                           ir::Node* anchor, const std::vector<ir::Node*>& absorbed, std::vector<ir::Value*> inputs,
                           ir::Value* output, std::vector<ir::Attribute> extra, bool keep_anchor_attributes = true);

}  // namespace ferry::passes
