// The Builder (opset-dependent forms of the primitives), choosing a decomposition, and replacing a node by one.
#include "legalize/decomposition.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "ferry/tensor.h"

namespace ferry::legalize {
namespace {

bool IsGraphOutput(const ir::Graph& g, const ir::Value* v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

bool IsGraphInput(const ir::Graph& g, const ir::Value* v) {
  return std::find(g.inputs().begin(), g.inputs().end(), v) != g.inputs().end();
}

// A tensor of element type `t` holding `values` (converted).
Tensor MakeTensor(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  Tensor out(t, Shape(dims.begin(), dims.end()));
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < out.size(); ++i) {
    const double v = values[i];
    switch (t) {
      case DataType::kFloat: out.data<float>()[i] = static_cast<float>(v); break;
      case DataType::kDouble: out.data<double>()[i] = v; break;
      case DataType::kFloat16: out.data<Float16>()[i] = Float16(static_cast<float>(v)); break;
      case DataType::kBFloat16: out.data<BFloat16>()[i] = BFloat16(static_cast<float>(v)); break;
      case DataType::kInt64: out.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DataType::kInt32: out.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DataType::kBool: out.data<bool>()[i] = v != 0; break;
      default: throw InternalError("legalize: no constant of type " + std::string(DataTypeName(t)));
    }
  }
  return out;
}

}  // namespace

// ---- helpers ------------------------------------------------------------------------------------------------

bool OutputUsed(const ir::Node& node, size_t i) {
  const ir::Value* v = node.output(i);
  return v && (!v->consumers().empty() || (node.owner() && IsGraphOutput(*node.owner(), v)));
}

int64_t RankOf(const ir::Value* v) {
  if (!v) return -1;
  if (const Tensor* t = v->initializer()) return t->rank();
  return v->type().is_tensor() && v->type().shape ? static_cast<int64_t>(v->type().shape->size()) : -1;
}

int64_t DimOf(const ir::Value* v, int64_t i) {
  const int64_t rank = RankOf(v);
  if (rank < 0) return -1;
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return -1;
  if (const Tensor* t = v->initializer()) return t->dim(i);
  const ir::Dim& d = (*v->type().shape)[static_cast<size_t>(i)];
  return d.is_static() ? d.value : -1;
}

DataType TypeOf(const ir::Value* v) {
  if (!v) return DataType::kUndefined;
  if (const Tensor* t = v->initializer()) return t->dtype();
  return v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined;
}

bool IsFloatType(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

void FillKeptType(const ir::Node& node) {
  ir::Value* y = node.output(0);
  const ir::Value* x = node.input(0);
  if (!y || !x || RankOf(x) < 0 || RankOf(y) >= 0) return;
  if (const Tensor* t = x->initializer()) {
    std::vector<ir::Dim> dims;
    for (int64_t d : t->shape()) dims.push_back(ir::Dim::Static(d));
    y->set_type(ir::TypeInfo::Tensor(t->dtype(), std::move(dims)));
  } else {
    y->set_type(x->type());
  }
}

// ---- Builder ------------------------------------------------------------------------------------------------

Builder::Builder(ir::Model& model, ir::Graph& graph, const ir::Node& node, int64_t opset)
    : model_(model), graph_(graph), node_(node), opset_(opset), outputs_(node.num_outputs(), nullptr) {}

DataType Builder::dtype() const { return TypeOf(node_.input(0)); }

std::string Builder::Name(const std::string& what) const {
  return (node_.name().empty() ? node_.op_type() : node_.name()) + "/" + what;
}

ir::Value* Builder::Op(const std::string& op, std::vector<ir::Value*> inputs, std::vector<ir::Attribute> attributes,
                       DataType out) {
  if (out == DataType::kUndefined && !inputs.empty()) out = TypeOf(inputs[0]);
  ir::Value* y = graph_.AddValue(graph_.UniqueValueName(Name(op)), ir::TypeInfo::Tensor(out));
  ir::Node* n = graph_.AddNode(graph_.UniqueNodeName(Name(op)), op, "", std::move(inputs), {y},
                               std::move(attributes));
  n->set_opset(opset_);
  created_.push_back(n);
  return y;
}

ir::Value* Builder::Constant(DataType t, const std::vector<int64_t>& dims, const std::vector<double>& values) {
  return graph_.AddInitializer(graph_.UniqueValueName(Name("c")),
                               std::make_shared<const ferry::Tensor>(MakeTensor(t, dims, values)));
}

ir::Value* Builder::Scalar(double v, DataType t) {
  ir::Value*& c = scalars_[{t, v}];
  if (!c) c = Constant(t, {}, {v});
  return c;
}

ir::Value* Builder::Int64s(const std::vector<int64_t>& v) {
  ir::Value*& c = int64s_[v];
  if (c) return c;
  auto t = std::make_shared<const ferry::Tensor>(
      ferry::Tensor::FromVector(DataType::kInt64, Shape{static_cast<int64_t>(v.size())}, v));
  return c = graph_.AddInitializer(graph_.UniqueValueName(Name("c")), std::move(t));
}

ir::Value* Builder::Reduce(const std::string& op, ir::Value* x, const std::vector<int64_t>& axes) {
  // The axes moved from attribute to input at opset 13 for ReduceSum, at 18 for the others.
  if (opset_ >= (op == "ReduceSum" ? 13 : 18)) return Op(op, {x, Int64s(axes)}, {IntAttr("keepdims", 1)});
  return Op(op, {x}, {IntsAttr("axes", axes), IntAttr("keepdims", 1)});
}

ir::Value* Builder::Clip(ir::Value* x, double lo, double hi) {
  if (opset_ >= 11) return Op("Clip", {x, Scalar(lo, TypeOf(x)), Scalar(hi, TypeOf(x))});
  return Op("Clip", {x}, {FloatAttr("min", static_cast<float>(lo)), FloatAttr("max", static_cast<float>(hi))});
}

ir::Value* Builder::Unsqueeze(ir::Value* x, const std::vector<int64_t>& axes) {
  if (opset_ >= 13) return Op("Unsqueeze", {x, Int64s(axes)});
  return Op("Unsqueeze", {x}, {IntsAttr("axes", axes)});
}

ir::Value* Builder::Reshape(ir::Value* x, const std::vector<int64_t>& shape) {
  if (opset_ >= 5) return Op("Reshape", {x, Int64s(shape)});
  return Op("Reshape", {x}, {IntsAttr("shape", shape)});
}

ir::Value* Builder::Transpose(ir::Value* x, const std::vector<int64_t>& perm) {
  return Op("Transpose", {x}, {IntsAttr("perm", perm)});
}

ir::Value* Builder::Slice(ir::Value* x, int64_t start, int64_t end, int64_t axis) {
  if (opset_ >= 10) return Op("Slice", {x, Int64s({start}), Int64s({end}), Int64s({axis})});
  return Op("Slice", {x}, {IntsAttr("starts", {start}), IntsAttr("ends", {end}), IntsAttr("axes", {axis})});
}

ir::Value* Builder::Concat(std::vector<ir::Value*> xs, int64_t axis) {
  return Op("Concat", std::move(xs), {IntAttr("axis", axis)});
}

ir::Value* Builder::Cast(ir::Value* x, DataType to) {
  return Op("Cast", {x}, {IntAttr("to", static_cast<int64_t>(to))}, to);
}

ir::Value* Builder::Softmax(ir::Value* x, int64_t rank) {
  return Op("Softmax", {x}, {IntAttr("axis", opset_ >= 13 ? -1 : rank - 1)});
}

void Builder::SetOutput(size_t i, ir::Value* v) {
  if (i >= outputs_.size()) {
    throw InternalError("legalize: " + node_.Describe() + " has no output " + std::to_string(i));
  }
  outputs_[i] = v;
}

// ---- choosing and applying ----------------------------------------------------------------------------------

std::vector<const Decomposition*> DecompositionsFor(const ir::Node& node) {
  const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
  std::vector<const Decomposition*> out;
  for (const Decomposition& d : AllDecompositions()) {
    if (d.domain == domain && d.op == node.op_type() && node.opset() >= d.since && node.opset() <= d.until) {
      out.push_back(&d);
    }
  }
  return out;
}

int64_t OnnxOpset(const ir::Model& model) {
  for (const char* key : {"", "ai.onnx"}) {
    if (auto it = model.opsets.find(key); it != model.opsets.end()) return it->second;
  }
  return 0;
}

Choice ChooseDecomposition(const ir::Node& node, int64_t opset) {
  Choice c;
  const std::vector<const Decomposition*> rules = DecompositionsFor(node);
  if (rules.empty()) {
    c.reason = "no decomposition of " + (node.domain().empty() ? std::string() : node.domain() + "::") +
               node.op_type() + " at opset " + std::to_string(node.opset());
    return c;
  }
  if (opset < 7) {
    c.reason = "ai.onnx opset " + std::to_string(opset) + " predates broadcasting arithmetic (7)";
    return c;
  }
  for (const Decomposition* d : rules) {
    std::string why;
    try {
      why = d->refuse(node, opset);
    } catch (const Error& e) {  // an attribute of the wrong type
      why = e.what();
    }
    if (why.empty()) {
      c.decomposition = d;
      c.reason.clear();
      return c;
    }
    c.reason += (c.reason.empty() ? "" : "; ") + why;
  }
  return c;
}

std::vector<ir::Node*> Decompose(ir::Model& model, ir::Graph& graph, ir::Node* node, const Decomposition& d,
                                 int64_t opset) {
  if (const std::string why = d.refuse(*node, opset); !why.empty()) {
    throw InvalidModelError(node->Describe() + ": cannot decompose: " + why);
  }
  Builder b(model, graph, *node, opset);
  d.build(b);
  std::vector<ir::Value*> originals(node->outputs().begin(), node->outputs().end());
  std::vector<ir::Value*> results = b.outputs();
  std::vector<ir::Node*> created = b.created();
  for (size_t i = 0; i < originals.size(); ++i) {
    if (originals[i] && !results[i] && OutputUsed(*node, i)) {
      throw InternalError("legalize: " + d.op + " rule left output " + std::to_string(i) + " of " + node->Describe() +
                          " uncomputed");
    }
  }
  if (d.keeps_shape) FillKeptType(*node);
  const std::string node_name = node->name();  // RemoveNode deletes the node
  graph.RemoveNode(node);

  // Each original output value is now produced by the replacement: the node that made the result is re-made
  // writing the original value (its readers rewired), or, when the result is no new node's own (an input, or a
  // value already moved), an Identity copies it.
  std::unordered_map<ir::Value*, ir::Value*> moved;  // result -> original it became
  for (size_t i = 0; i < originals.size(); ++i) {
    ir::Value* o = originals[i];
    ir::Value* r = results[i];
    if (!o) continue;
    if (!r) {
      if (!o->producer() && o->consumers().empty() && !IsGraphOutput(graph, o)) graph.RemoveValue(o);
      continue;
    }
    if (auto it = moved.find(r); it != moved.end()) r = it->second;
    ir::Node* p = r->producer();
    const bool own = p && std::find(created.begin(), created.end(), p) != created.end() && r->owner() == &graph &&
                     !IsGraphOutput(graph, r) && !IsGraphInput(graph, r) && !moved.count(r) &&
                     std::none_of(moved.begin(), moved.end(), [&](const auto& kv) { return kv.second == r; });
    if (!own) {
      ir::Node* n = graph.AddNode(graph.UniqueNodeName((node_name.empty() ? d.op : o->name()) + "/Identity"),
                                  "Identity", "", {r}, {o});
      n->set_opset(opset);
      created.push_back(n);
      continue;
    }
    for (ir::Node* c : std::vector<ir::Node*>(r->consumers().begin(), r->consumers().end())) {
      for (size_t k = 0; k < c->num_inputs(); ++k) {
        if (c->input(k) == r) c->ReplaceInput(k, o);
      }
    }
    std::vector<ir::Value*> outs(p->outputs().begin(), p->outputs().end());
    std::replace(outs.begin(), outs.end(), r, o);
    const std::string name = p->name(), op = p->op_type(), domain = p->domain();
    std::vector<ir::Value*> ins(p->inputs().begin(), p->inputs().end());
    std::vector<ir::Attribute> attrs = p->attributes();
    const int64_t p_opset = p->opset();
    graph.RemoveNode(p);
    ir::Node* q = graph.AddNode(name, op, domain, std::move(ins), std::move(outs), std::move(attrs));
    q->set_opset(p_opset);
    std::replace(created.begin(), created.end(), p, q);
    graph.RemoveValue(r);
    moved[r] = o;
  }
  graph.TopologicalSort();
  return created;
}

}  // namespace ferry::legalize
