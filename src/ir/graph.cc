#include "ir/graph.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_set>

#include "ferry/error.h"

namespace ferry::ir {

bool TypeInfo::has_static_shape() const {
  if (kind != Kind::kTensor || !shape) return false;
  return std::all_of(shape->begin(), shape->end(), [](const Dim& d) { return d.is_static(); });
}

std::optional<int64_t> TypeInfo::rank() const {
  if (kind != Kind::kTensor || !shape) return std::nullopt;
  return static_cast<int64_t>(shape->size());
}

std::optional<std::vector<int64_t>> TypeInfo::static_dims() const {
  if (!has_static_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const Dim& d : *shape) dims.push_back(d.value);
  return dims;
}

std::string TypeInfo::ToString() const {
  switch (kind) {
    case Kind::kUnknown: return "?";
    case Kind::kTensor:
    case Kind::kSparseTensor: {
      std::string s = std::string(kind == Kind::kSparseTensor ? "sparse " : "") + std::string(DataTypeName(elem_type));
      if (!shape) return s + "[...]";
      s += "[";
      for (size_t i = 0; i < shape->size(); ++i) {
        if (i) s += ",";
        const Dim& d = (*shape)[i];
        s += d.is_static() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
      }
      return s + "]";
    }
    case Kind::kSequence: return "seq(" + (elem ? elem->ToString() : "?") + ")";
    case Kind::kOptional: return "optional(" + (elem ? elem->ToString() : "?") + ")";
    case Kind::kMap: return "map(" + std::string(DataTypeName(elem_type)) + "," + (elem ? elem->ToString() : "?") + ")";
  }
  return "?";
}

const char* AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kUndefined: return "undefined";
    case AttrType::kFloat: return "float";
    case AttrType::kInt: return "int";
    case AttrType::kString: return "string";
    case AttrType::kTensor: return "tensor";
    case AttrType::kGraph: return "graph";
    case AttrType::kFloats: return "floats";
    case AttrType::kInts: return "ints";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensors: return "tensors";
    case AttrType::kGraphs: return "graphs";
    case AttrType::kSparseTensor: return "sparse_tensor";
    case AttrType::kSparseTensors: return "sparse_tensors";
    case AttrType::kTypeProto: return "type_proto";
    case AttrType::kTypeProtos: return "type_protos";
  }
  return "unknown";
}

// ---- Node -------------------------------------------------------------------------------------------------

void Node::ReplaceInput(size_t i, Value* v) {
  Value* old = inputs_.at(i);
  if (old) {
    auto it = std::find(old->consumers_.begin(), old->consumers_.end(), this);
    if (it != old->consumers_.end()) old->consumers_.erase(it);
  }
  inputs_[i] = v;
  if (v) v->consumers_.push_back(this);
}

const Attribute* Node::attr(std::string_view name) const {
  for (const auto& a : attributes_) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string Node::Describe() const {
  return "node '" + name_ + "' (" + qualified_op() + ")";
}

namespace {

const Attribute* Typed(const Node& n, std::string_view name, AttrType want) {
  const Attribute* a = n.attr(name);
  if (a && a->type != want) {
    throw InvalidModelError(n.Describe() + ": attribute '" + std::string(name) + "' must be of type " +
                            AttrTypeName(want) + ", got " + AttrTypeName(a->type));
  }
  return a;
}

}  // namespace

int64_t Node::GetInt(std::string_view name, int64_t def) const {
  const Attribute* a = Typed(*this, name, AttrType::kInt);
  return a ? a->i : def;
}
float Node::GetFloat(std::string_view name, float def) const {
  const Attribute* a = Typed(*this, name, AttrType::kFloat);
  return a ? a->f : def;
}
std::string Node::GetString(std::string_view name, const std::string& def) const {
  const Attribute* a = Typed(*this, name, AttrType::kString);
  return a ? a->s : def;
}
std::vector<int64_t> Node::GetInts(std::string_view name, std::vector<int64_t> def) const {
  const Attribute* a = Typed(*this, name, AttrType::kInts);
  return a ? a->ints : def;
}
std::vector<float> Node::GetFloats(std::string_view name, std::vector<float> def) const {
  const Attribute* a = Typed(*this, name, AttrType::kFloats);
  return a ? a->floats : def;
}
std::vector<std::string> Node::GetStrings(std::string_view name, std::vector<std::string> def) const {
  const Attribute* a = Typed(*this, name, AttrType::kStrings);
  return a ? a->strings : def;
}
const Tensor* Node::GetTensor(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) return nullptr;
  if (a->type != AttrType::kTensor && a->type != AttrType::kSparseTensor) Typed(*this, name, AttrType::kTensor);
  return &a->t;
}
const Graph* Node::GetGraph(std::string_view name) const {
  const Attribute* a = Typed(*this, name, AttrType::kGraph);
  return a ? a->g.get() : nullptr;
}
const Attribute& Node::RequireAttr(std::string_view name) const {
  const Attribute* a = attr(name);
  if (!a) throw InvalidModelError(Describe() + ": required attribute '" + std::string(name) + "' is missing");
  return *a;
}

std::vector<const Graph*> Node::subgraphs() const {
  std::vector<const Graph*> out;
  for (const auto& a : attributes_) {
    if (a.g) out.push_back(a.g.get());
    for (const auto& g : a.graphs) out.push_back(g.get());
  }
  return out;
}

std::vector<Graph*> Node::mutable_subgraphs() {
  std::vector<Graph*> out;
  for (auto& a : attributes_) {
    if (a.g) out.push_back(a.g.get());
    for (const auto& g : a.graphs) out.push_back(g.get());
  }
  return out;
}

// ---- Graph ------------------------------------------------------------------------------------------------

Value* Graph::AddValue(const std::string& name, TypeInfo type) {
  if (!name.empty() && by_name_.count(name)) {
    throw InvalidModelError("graph '" + name_ + "': value '" + name + "' is defined more than once");
  }
  auto v = std::make_unique<Value>();
  v->name_ = name;
  v->type_ = std::move(type);
  v->owner_ = this;
  Value* raw = v.get();
  values_.push_back(std::move(v));
  if (!name.empty()) by_name_[name] = raw;
  return raw;
}

Value* Graph::FindValue(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

Value* Graph::LookupValue(std::string_view name) const {
  for (const Graph* g = this; g; g = g->parent_) {
    if (Value* v = g->FindValue(name)) return v;
  }
  return nullptr;
}

Node* Graph::AddNode(std::string name, std::string op_type, std::string domain, std::vector<Value*> inputs,
                     std::vector<Value*> outputs, std::vector<Attribute> attributes) {
  auto n = std::make_unique<Node>();
  n->name_ = std::move(name);
  n->op_type_ = std::move(op_type);
  n->domain_ = std::move(domain);
  n->inputs_ = std::move(inputs);
  n->outputs_ = std::move(outputs);
  n->attributes_ = std::move(attributes);
  n->owner_ = this;
  for (Value* v : n->inputs_) {
    if (v) v->consumers_.push_back(n.get());
  }
  for (Value* v : n->outputs_) {
    if (!v) continue;
    if (v->producer_ || v->is_initializer()) {
      throw InvalidModelError(n->Describe() + ": output '" + v->name() + "' is already produced by " +
                              (v->producer_ ? v->producer_->Describe() : "an initializer"));
    }
    v->producer_ = n.get();
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

void Graph::RemoveNode(Node* node) {
  for (Value* v : node->inputs_) {
    if (!v) continue;
    auto it = std::find(v->consumers_.begin(), v->consumers_.end(), node);
    if (it != v->consumers_.end()) v->consumers_.erase(it);
  }
  for (Value* v : node->outputs_) {
    if (v && v->producer_ == node) v->producer_ = nullptr;
  }
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p.get() == node; }),
               nodes_.end());
}

namespace {

// Moves `node` of `nodes` to the position of `anchor` (`after`: just past it).
void MoveNode(std::vector<std::unique_ptr<Node>>& nodes, const std::string& graph, Node* node, const Node* anchor,
              bool after) {
  auto at = [&](const Node* n) {
    return std::find_if(nodes.begin(), nodes.end(), [&](const auto& p) { return p.get() == n; });
  };
  auto from = at(node);
  if (from == nodes.end() || at(anchor) == nodes.end()) {
    throw InternalError("graph '" + graph + "': moving a node next to another needs both to be nodes of the graph");
  }
  if (node == anchor) return;
  std::unique_ptr<Node> moved = std::move(*from);
  nodes.erase(from);
  auto to = at(anchor);
  nodes.insert(after ? to + 1 : to, std::move(moved));
}

}  // namespace

void Graph::MoveBefore(Node* node, const Node* anchor) { MoveNode(nodes_, name_, node, anchor, false); }

void Graph::MoveAfter(Node* node, const Node* anchor) { MoveNode(nodes_, name_, node, anchor, true); }

void Graph::RemoveValue(Value* value) {
  const bool io = std::find(inputs_.begin(), inputs_.end(), value) != inputs_.end() ||
                  std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
  if (value->producer_ || !value->consumers_.empty() || value->is_initializer() || io) {
    throw InternalError("graph '" + name_ + "': value '" + value->name() + "' is still in use and cannot be removed");
  }
  if (!value->name_.empty()) by_name_.erase(value->name_);
  values_.erase(std::remove_if(values_.begin(), values_.end(), [&](const auto& p) { return p.get() == value; }),
                values_.end());
}

Value* Graph::AddInitializer(const std::string& name, std::shared_ptr<const Tensor> tensor) {
  Value* v = FindValue(name);
  if (!v) v = AddValue(name);
  if (v->is_initializer()) {
    throw InvalidModelError("graph '" + name_ + "': initializer '" + name + "' is defined more than once");
  }
  if (v->type_.kind == TypeInfo::Kind::kUnknown) {
    std::vector<Dim> dims;
    for (int64_t d : tensor->shape()) dims.push_back(Dim::Static(d));
    v->type_ = TypeInfo::Tensor(tensor->dtype(), dims);
  }
  v->initializer_ = std::move(tensor);
  initializers_.push_back(v);
  return v;
}

void Graph::RemoveInitializer(Value* value) {
  const bool io = std::find(inputs_.begin(), inputs_.end(), value) != inputs_.end() ||
                  std::find(outputs_.begin(), outputs_.end(), value) != outputs_.end();
  auto it = std::find(initializers_.begin(), initializers_.end(), value);
  if (it == initializers_.end() || value->producer_ || !value->consumers_.empty() || io) {
    throw InternalError("graph '" + name_ + "': initializer '" + value->name() +
                        "' is still in use and cannot be removed");
  }
  initializers_.erase(it);
  value->initializer_.reset();
  RemoveValue(value);
}

std::string Graph::UniqueValueName(const std::string& base) const {
  if (!LookupValue(base)) return base;
  for (int i = 2;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!LookupValue(name)) return name;
  }
}

std::string Graph::UniqueNodeName(const std::string& base) const {
  auto taken = [&](const std::string& n) {
    return std::any_of(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p->name() == n; });
  };
  if (!taken(base)) return base;
  for (int i = 2;; ++i) {
    std::string name = base + "_" + std::to_string(i);
    if (!taken(name)) return name;
  }
}

std::vector<Value*> Graph::RequiredInputs() const {
  std::vector<Value*> out;
  for (Value* v : inputs_) {
    if (!v->is_initializer()) out.push_back(v);
  }
  return out;
}

namespace {

// Values from this graph that `node` reads, including ones read by its subgraphs (implicit inputs).
void CollectReads(const Node& node, const Graph& graph, std::vector<const Value*>& out) {
  for (const Value* v : node.inputs()) {
    if (v) out.push_back(v);
  }
  for (const Graph* sub : node.subgraphs()) {
    for (const auto& n : sub->nodes()) CollectReads(*n, graph, out);
  }
}

}  // namespace

void Graph::TopologicalSort() {
  // Kahn's algorithm, stable with respect to the current node order.
  std::unordered_map<const Value*, size_t> producer_index;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (const Value* v : nodes_[i]->outputs()) {
      if (v) producer_index[v] = i;
    }
  }
  std::vector<std::vector<size_t>> deps(nodes_.size());
  std::vector<std::vector<size_t>> users(nodes_.size());
  std::vector<size_t> pending(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::vector<const Value*> reads;
    CollectReads(*nodes_[i], *this, reads);
    std::unordered_set<size_t> seen;
    for (const Value* v : reads) {
      auto it = producer_index.find(v);
      if (it == producer_index.end()) continue;
      if (it->second == i) {  // the shortest cycle, which Kahn's counting below would not see
        throw InvalidModelError("graph '" + name_ + "' has a cycle: " + nodes_[i]->Describe() +
                                " reads its own output '" + v->name() + "'");
      }
      if (!seen.insert(it->second).second) continue;
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  std::vector<size_t> order;
  order.reserve(nodes_.size());
  // Min-heap of ready node indices: among ready nodes, the earliest in the current order goes first.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) ready.push(u);
    }
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (pending[i] != 0) {
        throw InvalidModelError("graph '" + name_ + "' has a cycle or an input produced later: " +
                                nodes_[i]->Describe() + " cannot be ordered");
      }
    }
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
}

// ---- Model ------------------------------------------------------------------------------------------------

const Function* Model::FindFunction(std::string_view domain, std::string_view name) const {
  for (const auto& f : functions) {
    if (f.domain == domain && f.name == name) return &f;
  }
  return nullptr;
}

std::string Model::Describe() const { return path.empty() ? "model <bytes>" : "model '" + path + "'"; }

}  // namespace ferry::ir
