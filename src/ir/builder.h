// Building and editing the IR: the one toolkit the passes, legalization and the opset converter write graphs with.
//
// A Builder adds nodes, values and constants to one graph under fresh names. Names are fresh in that graph and
// the graphs enclosing it (Graph::UniqueValueName / UniqueNodeName), or, with a NameScope, across a whole model:
// ONNX forbids a subgraph to redefine a name of an enclosing graph, so a rewrite that edits several graphs of a
// model (the opset converter) hands out every name from one scope. Nodes of the ai.onnx domain are written at the
// builder's opset, and the opset-dependent forms (ReduceMean's axes attribute before 18 and input from 18, Clip's
// bounds, Unsqueeze's axes, ...) pick the form of that opset. Constants are initializers, never Constant nodes.
//
// The free functions below edit what is already there, subgraphs included: the readers of a value in nested
// graphs (outer-scope references and subgraph outputs), replacing every use of a value, rebuilding a node.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry::ir {

// Names handed out across one model: every value name of its graphs, subgraphs and function bodies, and every node
// name per graph, plus each name given out since (also for nodes and values removed again).
class NameScope {
 public:
  NameScope() = default;
  explicit NameScope(const Model& model);
  // Reserves and returns a value name no graph of the model uses: `base`, else `base_2`, `base_3`...
  std::string ValueName(const std::string& base);
  // Reserves and returns a node name no node of `graph` has had: `base`, else `base_2`, `base_3`...
  std::string NodeName(const Graph& graph, const std::string& base);

 private:
  void Collect(const Graph& g);
  std::set<std::string> values_;
  std::map<const Graph*, std::set<std::string>> nodes_;
};

// A tensor of element type `t` and shape `dims` holding `values` converted (float types, signed and unsigned
// integers, bool); nullopt for other element types. Elements past the end of `values` are zero.
std::optional<Tensor> MakeTensor(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values);
// A tensor type of element type `t` and static shape `dims`.
TypeInfo StaticTensorType(DataType t, const std::vector<int64_t>& dims);
// The element type of a value: its initializer's, else its tensor type's (kUndefined when unknown or not a tensor).
DataType ElementType(const Value* v);

class Builder {
 public:
  // Builds into `graph`; ai.onnx nodes get opset `opset` (0: left unset). Names come from `names` (which must
  // outlive the builder), or, when nullptr, are fresh in `graph` and the graphs enclosing it.
  explicit Builder(Graph& graph, int64_t opset = 0, NameScope* names = nullptr);
  Builder(Builder&&) = default;
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;
  virtual ~Builder() = default;

  Graph& graph() const { return graph_; }
  int64_t opset() const { return opset_; }
  void set_opset(int64_t opset) { opset_ = opset; }
  // What Op and the unnamed constants name their nodes and values after: prefix + "Mul", prefix + "c".
  const std::string& prefix() const { return prefix_; }
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  // Called with every node the builder adds (after it is added).
  void set_on_add(std::function<void(Node&)> f) { on_add_ = std::move(f); }
  // Where added nodes go in the graph's node order: at the end (the default), or just before or just after
  // `anchor` (which must stay in the graph meanwhile), each next one after the one added before it.
  void InsertBefore(const Node* anchor) { anchor_ = anchor, after_ = false; }
  void InsertAfter(const Node* anchor) { anchor_ = anchor, after_ = true; }
  void InsertAtEnd() { anchor_ = nullptr; }
  // The nodes added so far, in order.
  const std::vector<Node*>& created() const { return created_; }
  // Replaces `old` in created() (a node rebuilt since).
  void ReplaceCreated(Node* old, Node* now);

  // Fresh names (reserved in the NameScope when there is one).
  std::string ValueName(const std::string& base);
  std::string NodeName(const std::string& base);

  // A new value of type `type` named after `base`.
  Value* AddValue(const std::string& base, TypeInfo type = {});
  // A node named after `base` of the ai.onnx domain, at opset(). Outputs must be values no node produces.
  Node* AddNode(const std::string& base, const std::string& op, std::vector<Value*> inputs,
                std::vector<Value*> outputs, std::vector<Attribute> attributes = {});
  // A node of domain `domain` at that domain's opset `opset`, which the model is made to import (if it does not).
  Node* AddNodeIn(Model& model, const std::string& domain, int64_t opset, const std::string& base,
                  const std::string& op, std::vector<Value*> inputs, std::vector<Value*> outputs,
                  std::vector<Attribute> attributes = {});
  // An ai.onnx node `op` named prefix + op reading `inputs` (nullptr: an omitted optional input); returns its one
  // output, named like the node, a tensor of element type `out` (kUndefined: the element type of inputs[0]).
  Value* Op(const std::string& op, std::vector<Value*> inputs, std::vector<Attribute> attributes = {},
            DataType out = DataType::kUndefined);

  // Initializers named after `base`: a tensor; a scalar (rank 0) of element type `t` holding `v` (nullptr when
  // MakeTensor has no such type); int64 values, 1-D or (`scalar`, one value) rank 0; float values, 1-D.
  Value* AddInitializer(const std::string& base, Tensor t);
  Value* AddScalar(const std::string& base, DataType t, double v);
  Value* AddInt64s(const std::string& base, const std::vector<int64_t>& values, bool scalar = false);
  Value* AddFloats(const std::string& base, const std::vector<float>& values);
  // Initializers named prefix + "c": a scalar of type `t` and a 1-D int64 tensor (each made once per builder), a
  // tensor of type `t` (InternalError for a type MakeTensor does not make).
  Value* Scalar(double v, DataType t);
  Value* Int64s(const std::vector<int64_t>& values);
  Value* Constant(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values);

  // The opset-dependent forms of the primitives.
  // ReduceMean, ReduceMax, ... over `axes`, keepdims = 1 (the axes an input from 13 for ReduceSum, 18 otherwise).
  Value* Reduce(const std::string& op, Value* x, const std::vector<int64_t>& axes);
  Value* ReduceMean(Value* x, const std::vector<int64_t>& axes) { return Reduce("ReduceMean", x, axes); }
  Value* Clip(Value* x, double lo, double hi);
  Value* Unsqueeze(Value* x, const std::vector<int64_t>& axes);
  Value* Reshape(Value* x, const std::vector<int64_t>& shape);  // 0 copies, -1 infers (allowzero 0)
  Value* Transpose(Value* x, const std::vector<int64_t>& perm);
  Value* Slice(Value* x, int64_t start, int64_t end, int64_t axis);
  Value* Concat(std::vector<Value*> xs, int64_t axis);
  Value* Cast(Value* x, DataType to);
  // Softmax over the last axis of a tensor of rank `rank` (every opset: before 13 the input is coerced to 2-D at
  // `axis`, which for the last axis is the same thing).
  Value* Softmax(Value* x, int64_t rank);
  Value* Add(Value* a, Value* b) { return Op("Add", {a, b}); }
  Value* Sub(Value* a, Value* b) { return Op("Sub", {a, b}); }
  Value* Mul(Value* a, Value* b) { return Op("Mul", {a, b}); }
  Value* Div(Value* a, Value* b) { return Op("Div", {a, b}); }

 private:
  Node* Added(Node* n);

  Graph& graph_;
  NameScope* names_ = nullptr;
  int64_t opset_ = 0;
  std::string prefix_;
  std::function<void(Node&)> on_add_;
  const Node* anchor_ = nullptr;
  bool after_ = false;
  std::vector<Node*> created_;
  std::map<std::pair<DataType, double>, Value*> scalars_;
  std::map<std::vector<int64_t>, Value*> int64s_;
};

// ---- editing, subgraph-aware ------------------------------------------------------------------------------

bool IsGraphInput(const Graph& graph, const Value* v);
bool IsGraphOutput(const Graph& graph, const Value* v);
// Calls `f` on every graph nested in the attributes of the nodes of `graph`, at any depth.
void ForEachSubgraph(const Graph& graph, const std::function<void(Graph&)>& f);
// The subgraphs that read `v` (of `graph`) from the outer scope: through a node input or as a subgraph output.
std::vector<const Graph*> SubgraphReaders(const Graph& graph, const Value* v);
// Whether anything reads `v` (of `graph`): a node (in `graph` or a subgraph), a subgraph output or the graph's
// outputs.
bool IsRead(const Graph& graph, const Value* v);
// Every reader of `from` reads `to`: node inputs (in `graph` and its subgraphs) and subgraph outputs. The graph's
// own outputs are left alone.
void ReplaceAllUses(const Graph& graph, Value* from, Value* to);
// Replaces `node` by a node of op `op` with these inputs, outputs and attributes, keeping its name, domain,
// opset, overload and doc. The new node is appended to the graph (a TopologicalSort puts it in place). Returns it.
Node* Rebuild(Node* node, const std::string& op, std::vector<Value*> inputs, std::vector<Value*> outputs,
              std::vector<Attribute> attributes);
// Rebuilds `node` as it is, with its output `old_out` replaced by `new_out` (a value nothing produces).
Node* RebuildWithOutput(Node* node, Value* old_out, Value* new_out);

}  // namespace ferry::ir
