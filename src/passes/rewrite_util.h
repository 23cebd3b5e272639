// What the passes ask of the graph they rewrite: static shapes, constants, use counts, whether a node would run
// on a backend. Building goes through the IR builder (ir/builder.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/value_query.h"
#include "passes/pass.h"

namespace ferry::passes {

// A value name not defined in `graph` (or its enclosing graphs): `base`, else `base_2`, `base_3`...
inline std::string UniqueValueName(const ir::Graph& graph, const std::string& base) {
  return graph.UniqueValueName(base);
}
// A node name no node of `graph` has.
inline std::string UniqueNodeName(const ir::Graph& graph, const std::string& base) {
  return graph.UniqueNodeName(base);
}

// The value queries (ir/value_query.h): an initializer's dims (all static), else its tensor type's, symbolic and
// unknown dims kept; those dims when every one is static.
using ir::KnownDims;
using ir::KnownStaticShape;
// A float tensor by its type (a tensor type of element type float; an initializer's tensor is not consulted).
inline bool IsFloatTensor(const ir::Value* v) { return ir::TensorElementType(v) == DataType::kFloat; }
// The value's type declares element type float, whatever its kind (a sparse tensor's too).
inline bool DeclaresFloat(const ir::Value* v) { return ir::DeclaredElementType(v) == DataType::kFloat; }
// True when the two tensors provably have one shape: same rank, each dim equal as a static value or as a symbol.
bool SameShape(const ir::Value* a, const ir::Value* b);

// Whether `n` is a node of the ONNX domain's op `op` (false for nullptr).
inline bool IsOp(const ir::Node* n, const char* op) { return n && n->domain().empty() && n->op_type() == op; }

using ir::IsGraphInput;
using ir::IsGraphOutput;
// The single node reading `v`, when exactly one node reads it and it is not a graph output.
ir::Node* SoleConsumer(const ir::Graph& graph, const ir::Value* v);

// An int attribute's value, `def` when absent, nullopt when it has another type.
std::optional<int64_t> IntAttrOr(const ir::Node& n, const char* name, int64_t def);

// True when BatchNormalization `bn` computes Y from its running statistics and nothing reads its other outputs
// (the ref kernel's rule: opset >= 14 training_mode = 0; before, no running-statistics output asked for, or
// is_test = 1 up to opset 6).
bool BatchNormInferenceMode(const ir::Graph& g, const ir::Node& bn);

// An inference BatchNormalization as Y = X * scale + shift per channel: scale = gamma / sqrt(var + epsilon) and
// shift = beta - mean * scale, in double and rounded once (the BN kernels add epsilon as a float: so does this);
// nullopt unless its four parameters are constant float tensors of `channels` elements, epsilon is a float and
// the node is not an opset < 9 one with per-element statistics (spatial = 0). Exact up to float re-association.
struct ChannelAffine {
  std::vector<float> scale, shift;
};
std::optional<ChannelAffine> BatchNormAffine(const ir::Graph& g, const ir::Node& bn, int64_t channels);

// The constant behind a value: an initializer that is not also an input of `graph` (a feed could override it), or
// the `value` tensor of the Constant node producing it (ir/value_query.h).
using ir::ConstantTensor;

// Attribute constructors (ir/attribute.h).
using ir::FloatAttr;
using ir::FloatsAttr;
using ir::IntAttr;
using ir::IntsAttr;
using ir::StringAttr;

// Adds a node of Ferry's own domain (ai.ferry, opset 1), named after `name`, and makes sure the model imports that
// domain (ir::Builder::AddNodeIn).
ir::Node* AddFerryNode(ir::Model& model, ir::Graph& graph, const std::string& name, const std::string& op,
                       std::vector<ir::Value*> inputs, std::vector<ir::Value*> outputs,
                       std::vector<ir::Attribute> attributes);

// Whether a node `domain::op` (at `opset`) reading `inputs` with `attributes` would be placed on `home`: asks the
// backends about a temporary node (with a temporary output), removed again before returning.
bool WouldRunOn(ir::Graph& graph, const PassContext& ctx, const Backend* home, const std::string& domain,
                const std::string& op, int64_t opset, const std::vector<ir::Value*>& inputs,
                const std::vector<ir::Attribute>& attributes);

}  // namespace ferry::passes
