// Decompositions: rewrites of one node into standard ONNX primitives, so that a model runs on backends that lack
// the op's kernel (legalization, legalize.h), or so that an op can be written for a runtime whose ai.onnx opset
// predates it. Each decomposition is plain data: the op it rewrites (domain, name, node opset range), a one-line
// description, a predicate that accepts the node or says why not, and a build function that writes the
// replacement with a Builder. One file per decomposition (decompose_<op>.cc); the list is decompositions.cc.
//
// The replacement is exact ONNX semantics composed (results differ from the fused kernel by float rounding only,
// checked per rule by tests/legalize), and every node it makes is valid at the ai.onnx opset it is built for:
// the Builder's helpers pick the form of that opset (ReduceMean's axes attribute before 18 and input from 18,
// Clip's bounds, Unsqueeze's axes, Softmax's axis). Constants are initializers, never Constant nodes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/dtype.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/value_query.h"

namespace ferry::legalize {

// Writes the replacement of one node: an IR builder (ir/builder.h) making ai.onnx nodes at opset `opset()`, with
// values named after the node ("ln1/ReduceMean", "ln1/c"), and, through SetOutput, what replaces each of the node's
// outputs.
class Builder : public ir::Builder {
 public:
  // Names are fresh in `graph` (and the graphs enclosing it), or come from `names` when given.
  Builder(ir::Graph& graph, const ir::Node& node, int64_t opset, ir::NameScope* names = nullptr);

  const ir::Node& node() const { return node_; }
  // The node's input `i` (nullptr when omitted) and the element type of input 0.
  ir::Value* input(size_t i) const { return node_.input(i); }
  DataType dtype() const;

  // `v` replaces the node's output `i`.
  void SetOutput(size_t i, ir::Value* v);
  const std::vector<ir::Value*>& outputs() const { return outputs_; }

 private:
  const ir::Node& node_;
  std::vector<ir::Value*> outputs_;
};

struct Decomposition {
  std::string domain;    // "" = ai.onnx; "ai.ferry" for Ferry's own ops
  std::string op;
  int64_t since = 1, until = INT64_MAX;  // node opsets (of its domain) the rule applies to, inclusive
  std::string description;  // "LayerNormalization -> ReduceMean, Sub, Mul, ..."
  // "" when the rule handles `node`, built as ai.onnx ops of opset `opset`; otherwise why not (one line).
  std::string (*refuse)(const ir::Node& node, int64_t opset) = nullptr;
  // Writes the replacement (called only after `refuse` returned "").
  void (*build)(Builder& b) = nullptr;
  // Output 0 has input 0's type and shape (an elementwise op, a normalization): Decompose gives the output that
  // type when inference left its shape unknown (ops Ferry's shape inference does not cover), so that the rules of
  // the nodes reading it see static shapes.
  bool keeps_shape = false;
};

// Every decomposition, in the order they are tried (decompositions.cc).
const std::vector<Decomposition>& AllDecompositions();

// The decompositions of `node`'s op at its opset (ai.onnx's domain named "" or "ai.onnx").
std::vector<const Decomposition*> DecompositionsFor(const ir::Node& node);

// The ai.onnx opset a replacement in `model` is built for (its import of ai.onnx), or 0 when it imports none.
int64_t OnnxOpset(const ir::Model& model);

struct Choice {
  const Decomposition* decomposition = nullptr;  // the first rule whose predicate accepts the node
  std::string reason;                            // when none does: every rule's refusal ("no decomposition" if none)
};
Choice ChooseDecomposition(const ir::Node& node, int64_t opset);

// Replaces `node` (of `graph`, in `model`) by `d`'s nodes at ai.onnx opset `opset`: the node's outputs keep their
// Value objects (and names), produced by the replacement; unread optional outputs the rule does not compute are
// removed; the graph is re-sorted topologically. Throws InvalidModelError when the rule refuses the node. Returns
// the new nodes.
// Names come from `names` when given (a rewrite of several graphs of the model, as the opset converter's).
std::vector<ir::Node*> Decompose(ir::Model& model, ir::Graph& graph, ir::Node* node, const Decomposition& d,
                                 int64_t opset, ir::NameScope* names = nullptr);

// For a rule that keeps_shape: output 0 of `node` gets input 0's type when its own shape is unknown. (`ferry check`
// does this for the nodes it reports a rewrite for, as Decompose does, so later verdicts see what the pass sees.)
void FillKeptType(const ir::Node& node);

// --- helpers the rules share -------------------------------------------------------------------------------

// The node's output `i` is read (by a node, a subgraph, or as a graph output).
bool OutputUsed(const ir::Node& node, size_t i);
// The value queries the rules ask (ir/value_query.h), of an initializer's tensor, else the value's type: the rank,
// or -1; dim `i` (negative counts from the end), or -1 when unknown or symbolic; the element type (kUndefined
// when unknown).
using ir::DimOrMinusOne;
using ir::ElementType;
using ir::RankOrMinusOne;
bool IsFloatType(DataType t);  // float, double, float16, bfloat16
using ir::FloatAttr;  // the attribute constructors (ir/attribute.h)
using ir::IntAttr;
using ir::IntsAttr;
using ir::StringAttr;

}  // namespace ferry::legalize
