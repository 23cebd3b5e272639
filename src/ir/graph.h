// The IR: a Graph owns its Nodes and Values. Values are edges (named, typed, maybe an initializer);
// Nodes are operator applications. A subgraph (If/Loop/Scan body) is a Graph whose parent is the graph of
// the node holding it; a node input in a subgraph may point at a Value of an enclosing graph (outer scope).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ferry/tensor.h"
#include "ir/attribute.h"
#include "ir/type.h"

namespace ferry::ir {

class Graph;
class Node;

class Value {
 public:
  const std::string& name() const { return name_; }
  const TypeInfo& type() const { return type_; }
  TypeInfo& mutable_type() { return type_; }
  void set_type(TypeInfo t) { type_ = std::move(t); }

  Node* producer() const { return producer_; }
  const std::vector<Node*>& consumers() const { return consumers_; }
  Graph* owner() const { return owner_; }

  bool is_initializer() const { return initializer_ != nullptr; }
  const Tensor* initializer() const { return initializer_.get(); }
  void set_initializer(std::shared_ptr<const Tensor> t) { initializer_ = std::move(t); }
  const std::shared_ptr<const Tensor>& initializer_ptr() const { return initializer_; }

  const std::string& doc() const { return doc_; }
  void set_doc(std::string d) { doc_ = std::move(d); }

 private:
  friend class Graph;
  friend class Node;
  std::string name_;
  TypeInfo type_;
  Node* producer_ = nullptr;
  std::vector<Node*> consumers_;
  Graph* owner_ = nullptr;
  std::shared_ptr<const Tensor> initializer_;
  std::string doc_;
};

class Node {
 public:
  const std::string& name() const { return name_; }
  const std::string& op_type() const { return op_type_; }
  const std::string& domain() const { return domain_; }  // "" is the default ONNX domain
  // "Op" for the default domain, "domain::Op" otherwise (as messages and reports name ops).
  std::string qualified_op() const { return domain_.empty() ? op_type_ : domain_ + "::" + op_type_; }
  // Opset version in effect for this node's domain (from the model's or function's opset imports).
  int64_t opset() const { return opset_; }
  void set_opset(int64_t v) { opset_ = v; }
  const std::string& overload() const { return overload_; }
  void set_overload(std::string o) { overload_ = std::move(o); }
  Graph* owner() const { return owner_; }
  const std::string& doc() const { return doc_; }
  void set_doc(std::string d) { doc_ = std::move(d); }
  void set_name(std::string n) { name_ = std::move(n); }

  // Omitted optional inputs/outputs are nullptr.
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  void ReplaceInput(size_t i, Value* v);

  const std::vector<Attribute>& attributes() const { return attributes_; }
  std::vector<Attribute>& mutable_attributes() { return attributes_; }
  const Attribute* attr(std::string_view name) const;
  bool has_attr(std::string_view name) const { return attr(name) != nullptr; }
  // Typed getters: return `def` when absent; throw InvalidModelError naming the node when the type is wrong.
  int64_t GetInt(std::string_view name, int64_t def) const;
  float GetFloat(std::string_view name, float def) const;
  std::string GetString(std::string_view name, const std::string& def) const;
  std::vector<int64_t> GetInts(std::string_view name, std::vector<int64_t> def = {}) const;
  std::vector<float> GetFloats(std::string_view name, std::vector<float> def = {}) const;
  std::vector<std::string> GetStrings(std::string_view name, std::vector<std::string> def = {}) const;
  const Tensor* GetTensor(std::string_view name) const;
  const Graph* GetGraph(std::string_view name) const;
  // Throws InvalidModelError naming the node when the attribute is absent.
  const Attribute& RequireAttr(std::string_view name) const;

  // "node 'conv1' (Conv)" for error messages.
  std::string Describe() const;
  // Subgraphs held by attributes (If branches, Loop/Scan bodies).
  std::vector<const Graph*> subgraphs() const;
  std::vector<Graph*> mutable_subgraphs();

 private:
  friend class Graph;
  std::string name_, op_type_, domain_, overload_, doc_;
  int64_t opset_ = 0;
  std::vector<Value*> inputs_, outputs_;
  std::vector<Attribute> attributes_;
  Graph* owner_ = nullptr;
};

class Graph {
 public:
  explicit Graph(Graph* parent = nullptr) : parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const std::string& doc() const { return doc_; }
  void set_doc(std::string d) { doc_ = std::move(d); }
  Graph* parent() const { return parent_; }
  void set_parent(Graph* p) { parent_ = p; }

  // Creates a value named `name` in this graph; throws InvalidModelError if the name is already defined here.
  Value* AddValue(const std::string& name, TypeInfo type = {});
  // Value defined in this graph (not enclosing ones), or nullptr.
  Value* FindValue(std::string_view name) const;
  // Value defined in this graph or any enclosing graph, or nullptr.
  Value* LookupValue(std::string_view name) const;
  // A value name not defined here or in an enclosing graph: `base`, else `base_2`, `base_3`...
  std::string UniqueValueName(const std::string& base) const;
  // A node name no node of this graph has: `base`, else `base_2`, `base_3`...
  std::string UniqueNodeName(const std::string& base) const;

  Node* AddNode(std::string name, std::string op_type, std::string domain, std::vector<Value*> inputs,
                std::vector<Value*> outputs, std::vector<Attribute> attributes = {});
  void RemoveNode(Node* node);
  // Moves `node` to just before (after) `anchor` in node order; both must be nodes of this graph (InternalError
  // otherwise). What a rewrite that keeps the order readable uses instead of a TopologicalSort.
  void MoveBefore(Node* node, const Node* anchor);
  void MoveAfter(Node* node, const Node* anchor);
  // Removes a value nothing produces or reads (and that is no graph input, output or initializer); throws
  // InternalError otherwise.
  void RemoveValue(Value* value);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::vector<Value*>& mutable_inputs() { return inputs_; }
  std::vector<Value*>& mutable_outputs() { return outputs_; }
  // Values with an initializer, in declaration order.
  const std::vector<Value*>& initializers() const { return initializers_; }
  Value* AddInitializer(const std::string& name, std::shared_ptr<const Tensor> tensor);
  // Removes an initializer nothing reads (and that is no graph input or output) together with its value: what a
  // rewrite that replaced a weight leaves behind. Throws InternalError otherwise.
  void RemoveInitializer(Value* value);
  // Inputs that are not initializers: what the caller must feed.
  std::vector<Value*> RequiredInputs() const;

  // Reorders nodes topologically (stable); throws InvalidModelError naming a node on a cycle (a node reading its
  // own output, directly or from one of its subgraphs, is one).
  void TopologicalSort();

 private:
  std::string name_, doc_;
  Graph* parent_ = nullptr;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<Value*> inputs_, outputs_, initializers_;
};

// A model-local function (FunctionProto): a named body graph with formal inputs/outputs/attributes.
struct Function {
  std::string domain, name, overload, doc;
  std::vector<std::string> inputs, outputs;
  std::vector<std::string> attributes;           // attribute names without defaults
  std::vector<Attribute> attribute_defaults;     // attributes with default values (IR >= 9)
  std::map<std::string, int64_t> opsets;
  std::shared_ptr<Graph> body;                   // inputs/outputs named as the formal parameters
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name, producer_version, domain, doc;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::unique_ptr<Graph> graph;
  std::vector<Function> functions;
  std::string path;  // file the model came from, "" when loaded from bytes (used in error messages)

  const Function* FindFunction(std::string_view domain, std::string_view name) const;
  // "model 'path/to/model.onnx'" or "model <bytes>" for error messages.
  std::string Describe() const;
};

}  // namespace ferry::ir
