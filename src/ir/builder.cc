// The IR builder: fresh names, nodes, constants of any numeric type, the opset-dependent forms, and the
// subgraph-aware edits (replacing uses, rebuilding a node).
#include "ir/builder.h"

#include <algorithm>
#include <memory>

#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::ir {

// ---- NameScope ----------------------------------------------------------------------------------------------

NameScope::NameScope(const Model& model) {
  if (model.graph) Collect(*model.graph);
  for (const auto& f : model.functions) {
    if (f.body) Collect(*f.body);
  }
}

void NameScope::Collect(const Graph& g) {
  for (const auto& v : g.values()) values_.insert(v->name());
  auto& names = nodes_[&g];
  for (const auto& n : g.nodes()) {
    names.insert(n->name());
    for (const Graph* sub : n->subgraphs()) Collect(*sub);
  }
}

std::string NameScope::ValueName(const std::string& base) {
  std::string name = base;
  for (int i = 2; values_.count(name); ++i) name = base + "_" + std::to_string(i);
  values_.insert(name);
  return name;
}

std::string NameScope::NodeName(const Graph& graph, const std::string& base) {
  auto& names = nodes_[&graph];
  std::string name = base;
  for (int i = 2; names.count(name); ++i) name = base + "_" + std::to_string(i);
  names.insert(name);
  return name;
}

// ---- values -------------------------------------------------------------------------------------------------

std::optional<Tensor> MakeTensor(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  Tensor out(t, Shape(dims.begin(), dims.end()));
  auto fill = [&](auto* data, auto convert) {
    for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < out.size(); ++i) data[i] = convert(values[i]);
  };
  switch (t) {
    case DataType::kFloat: fill(out.data<float>(), [](double v) { return static_cast<float>(v); }); break;
    case DataType::kDouble: fill(out.data<double>(), [](double v) { return v; }); break;
    case DataType::kFloat16: fill(out.data<Float16>(), [](double v) { return Float16(static_cast<float>(v)); }); break;
    case DataType::kBFloat16:
      fill(out.data<BFloat16>(), [](double v) { return BFloat16(static_cast<float>(v)); });
      break;
    case DataType::kInt8: fill(out.data<int8_t>(), [](double v) { return static_cast<int8_t>(v); }); break;
    case DataType::kInt16: fill(out.data<int16_t>(), [](double v) { return static_cast<int16_t>(v); }); break;
    case DataType::kInt32: fill(out.data<int32_t>(), [](double v) { return static_cast<int32_t>(v); }); break;
    case DataType::kInt64: fill(out.data<int64_t>(), [](double v) { return static_cast<int64_t>(v); }); break;
    case DataType::kUint8: fill(out.data<uint8_t>(), [](double v) { return static_cast<uint8_t>(v); }); break;
    case DataType::kUint16: fill(out.data<uint16_t>(), [](double v) { return static_cast<uint16_t>(v); }); break;
    case DataType::kUint32: fill(out.data<uint32_t>(), [](double v) { return static_cast<uint32_t>(v); }); break;
    case DataType::kUint64: fill(out.data<uint64_t>(), [](double v) { return static_cast<uint64_t>(v); }); break;
    case DataType::kBool: fill(out.data<bool>(), [](double v) { return v != 0; }); break;
    default: return std::nullopt;
  }
  return out;
}

TypeInfo StaticTensorType(DataType t, const std::vector<int64_t>& dims) {
  std::vector<Dim> d;
  for (int64_t x : dims) d.push_back(Dim::Static(x));
  return TypeInfo::Tensor(t, std::move(d));
}

DataType ElementType(const Value* v) {
  if (!v) return DataType::kUndefined;
  if (const Tensor* t = v->initializer()) return t->dtype();
  return v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined;
}

// ---- Builder ------------------------------------------------------------------------------------------------

Builder::Builder(Graph& graph, int64_t opset, NameScope* names) : graph_(graph), names_(names), opset_(opset) {}

void Builder::ReplaceCreated(Node* old, Node* now) { std::replace(created_.begin(), created_.end(), old, now); }

std::string Builder::ValueName(const std::string& base) {
  return names_ ? names_->ValueName(base) : graph_.UniqueValueName(base);
}

std::string Builder::NodeName(const std::string& base) {
  return names_ ? names_->NodeName(graph_, base) : graph_.UniqueNodeName(base);
}

Value* Builder::AddValue(const std::string& base, TypeInfo type) {
  return graph_.AddValue(ValueName(base), std::move(type));
}

Node* Builder::Added(Node* n) {
  if (anchor_ && after_) {
    graph_.MoveAfter(n, anchor_);
    anchor_ = n;
  } else if (anchor_) {
    graph_.MoveBefore(n, anchor_);
  }
  created_.push_back(n);
  if (on_add_) on_add_(*n);
  return n;
}

Node* Builder::AddNode(const std::string& base, const std::string& op, std::vector<Value*> inputs,
                       std::vector<Value*> outputs, std::vector<Attribute> attributes) {
  Node* n = graph_.AddNode(NodeName(base), op, "", std::move(inputs), std::move(outputs), std::move(attributes));
  if (opset_) n->set_opset(opset_);
  return Added(n);
}

Node* Builder::AddNodeIn(Model& model, const std::string& domain, int64_t opset, const std::string& base,
                         const std::string& op, std::vector<Value*> inputs, std::vector<Value*> outputs,
                         std::vector<Attribute> attributes) {
  model.opsets.emplace(domain, opset);
  Node* n = graph_.AddNode(NodeName(base), op, domain, std::move(inputs), std::move(outputs), std::move(attributes));
  n->set_opset(opset);
  return Added(n);
}

Value* Builder::Op(const std::string& op, std::vector<Value*> inputs, std::vector<Attribute> attributes,
                   DataType out) {
  if (out == DataType::kUndefined && !inputs.empty()) out = ElementType(inputs[0]);
  Value* y = AddValue(prefix_ + op, TypeInfo::Tensor(out));
  AddNode(prefix_ + op, op, std::move(inputs), {y}, std::move(attributes));
  return y;
}

Value* Builder::AddInitializer(const std::string& base, Tensor t) {
  return graph_.AddInitializer(ValueName(base), std::make_shared<const Tensor>(std::move(t)));
}

Value* Builder::AddScalar(const std::string& base, DataType t, double v) {
  std::optional<Tensor> tensor = MakeTensor(t, {}, {v});
  return tensor ? AddInitializer(base, std::move(*tensor)) : nullptr;
}

Value* Builder::AddInt64s(const std::string& base, const std::vector<int64_t>& values, bool scalar) {
  Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
  return AddInitializer(base, Tensor::FromVector(DataType::kInt64, shape, values));
}

Value* Builder::AddFloats(const std::string& base, const std::vector<float>& values) {
  return AddInitializer(base, Tensor::FromVector(DataType::kFloat, Shape{static_cast<int64_t>(values.size())}, values));
}

Value* Builder::Constant(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  std::optional<Tensor> tensor = MakeTensor(t, dims, values);
  if (!tensor) throw InternalError("IR builder: no constant of type " + std::string(DataTypeName(t)));
  return AddInitializer(prefix_ + "c", std::move(*tensor));
}

Value* Builder::Scalar(double v, DataType t) {
  Value*& c = scalars_[{t, v}];
  if (!c) c = Constant(t, {}, {v});
  return c;
}

Value* Builder::Int64s(const std::vector<int64_t>& values) {
  Value*& c = int64s_[values];
  if (!c) c = AddInt64s(prefix_ + "c", values);
  return c;
}

Value* Builder::Reduce(const std::string& op, Value* x, const std::vector<int64_t>& axes) {
  if (opset_ >= (op == "ReduceSum" ? 13 : 18)) return Op(op, {x, Int64s(axes)}, {IntAttr("keepdims", 1)});
  return Op(op, {x}, {IntsAttr("axes", axes), IntAttr("keepdims", 1)});
}

Value* Builder::Clip(Value* x, double lo, double hi) {
  if (opset_ >= 11) return Op("Clip", {x, Scalar(lo, ElementType(x)), Scalar(hi, ElementType(x))});
  return Op("Clip", {x}, {FloatAttr("min", static_cast<float>(lo)), FloatAttr("max", static_cast<float>(hi))});
}

Value* Builder::Unsqueeze(Value* x, const std::vector<int64_t>& axes) {
  if (opset_ >= 13) return Op("Unsqueeze", {x, Int64s(axes)});
  return Op("Unsqueeze", {x}, {IntsAttr("axes", axes)});
}

Value* Builder::Reshape(Value* x, const std::vector<int64_t>& shape) {
  if (opset_ >= 5) return Op("Reshape", {x, Int64s(shape)});
  return Op("Reshape", {x}, {IntsAttr("shape", shape)});
}

Value* Builder::Transpose(Value* x, const std::vector<int64_t>& perm) {
  return Op("Transpose", {x}, {IntsAttr("perm", perm)});
}

Value* Builder::Slice(Value* x, int64_t start, int64_t end, int64_t axis) {
  if (opset_ >= 10) return Op("Slice", {x, Int64s({start}), Int64s({end}), Int64s({axis})});
  return Op("Slice", {x}, {IntsAttr("starts", {start}), IntsAttr("ends", {end}), IntsAttr("axes", {axis})});
}

Value* Builder::Concat(std::vector<Value*> xs, int64_t axis) {
  return Op("Concat", std::move(xs), {IntAttr("axis", axis)});
}

Value* Builder::Cast(Value* x, DataType to) { return Op("Cast", {x}, {IntAttr("to", static_cast<int64_t>(to))}, to); }

Value* Builder::Softmax(Value* x, int64_t rank) {
  return Op("Softmax", {x}, {IntAttr("axis", opset_ >= 13 ? -1 : rank - 1)});
}

// ---- editing ------------------------------------------------------------------------------------------------

bool IsGraphInput(const Graph& graph, const Value* v) {
  return std::find(graph.inputs().begin(), graph.inputs().end(), v) != graph.inputs().end();
}

bool IsGraphOutput(const Graph& graph, const Value* v) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
}

void ForEachSubgraph(const Graph& graph, const std::function<void(Graph&)>& f) {
  for (const auto& n : graph.nodes()) {
    for (Attribute& a : n->mutable_attributes()) {
      if (a.g) {
        f(*a.g);
        ForEachSubgraph(*a.g, f);
      }
      for (const auto& g : a.graphs) {
        if (!g) continue;
        f(*g);
        ForEachSubgraph(*g, f);
      }
    }
  }
}

std::vector<const Graph*> SubgraphReaders(const Graph& graph, const Value* v) {
  std::vector<const Graph*> out;
  for (const Node* c : v->consumers()) {
    if (c->owner() != &graph) out.push_back(c->owner());
  }
  ForEachSubgraph(graph, [&](Graph& sub) {
    if (std::find(sub.outputs().begin(), sub.outputs().end(), v) != sub.outputs().end()) out.push_back(&sub);
  });
  return out;
}

bool IsRead(const Graph& graph, const Value* v) {
  return !v->consumers().empty() || IsGraphOutput(graph, v) || !SubgraphReaders(graph, v).empty();
}

void ReplaceAllUses(const Graph& graph, Value* from, Value* to) {
  const std::vector<Node*> readers = from->consumers();
  for (Node* c : readers) {
    for (size_t i = 0; i < c->num_inputs(); ++i) {
      if (c->input(i) == from) c->ReplaceInput(i, to);
    }
  }
  ForEachSubgraph(graph, [&](Graph& sub) {
    for (Value*& o : sub.mutable_outputs()) {
      if (o == from) o = to;
    }
  });
}

Node* Rebuild(Node* node, const std::string& op, std::vector<Value*> inputs, std::vector<Value*> outputs,
              std::vector<Attribute> attributes) {
  Graph* g = node->owner();
  const std::string new_op = op;  // `op` may be the old node's own op_type()
  const std::string name = node->name(), domain = node->domain(), overload = node->overload(), doc = node->doc();
  const int64_t opset = node->opset();
  g->RemoveNode(node);
  Node* n = g->AddNode(name, new_op, domain, std::move(inputs), std::move(outputs), std::move(attributes));
  n->set_opset(opset);
  n->set_overload(overload);
  n->set_doc(doc);
  return n;
}

Node* RebuildWithOutput(Node* node, Value* old_out, Value* new_out) {
  std::vector<Value*> outs = node->outputs();
  std::replace(outs.begin(), outs.end(), old_out, new_out);
  return Rebuild(node, node->op_type(), node->inputs(), std::move(outs), node->attributes());
}

}  // namespace ferry::ir
