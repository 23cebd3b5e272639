#include "ir/dump.h"

#include <sstream>

namespace ferry::ir {
namespace {

std::string Ref(const Value* v) { return v ? "%" + v->name() : "_"; }

template <typename T>
std::string List(const std::vector<T>& xs) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) os << ",";
    if constexpr (std::is_same_v<T, std::string>) os << '"' << xs[i] << '"';
    else os << xs[i];
  }
  os << "]";
  return os.str();
}

std::string AttrValue(const Attribute& a, int indent) {
  if (!a.ref_attr_name.empty()) return "@" + a.ref_attr_name;
  std::ostringstream os;
  switch (a.type) {
    case AttrType::kFloat: os << a.f; break;
    case AttrType::kInt: os << a.i; break;
    case AttrType::kString: os << '"' << a.s << '"'; break;
    case AttrType::kTensor:
    case AttrType::kSparseTensor:
      os << "tensor " << DataTypeName(a.t.dtype()) << ShapeToString(a.t.shape());
      break;
    case AttrType::kGraph: os << "\n" << DumpGraph(*a.g, indent + 4); break;
    case AttrType::kFloats: os << List(a.floats); break;
    case AttrType::kInts: os << List(a.ints); break;
    case AttrType::kStrings: os << List(a.strings); break;
    case AttrType::kTensors: os << a.tensors.size() << " tensors"; break;
    case AttrType::kGraphs:
      for (const auto& g : a.graphs) os << "\n" << DumpGraph(*g, indent + 4);
      break;
    case AttrType::kTypeProto: os << a.tp.ToString(); break;
    default: os << "?"; break;
  }
  return os.str();
}

}  // namespace

std::string DumpGraph(const Graph& g, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  std::ostringstream os;
  auto sig = [](const std::vector<Value*>& vs) {
    std::string s;
    for (const Value* v : vs) s += (s.empty() ? "" : ", ") + v->name() + ": " + v->type().ToString();
    return s;
  };
  os << pad << "graph " << g.name() << " (" << sig(g.RequiredInputs()) << ") -> (" << sig(g.outputs()) << ") {\n";
  for (const Value* v : g.initializers()) {
    os << pad << "  %" << v->name() << " = initializer " << DataTypeName(v->initializer()->dtype())
       << ShapeToString(v->initializer()->shape()) << "\n";
  }
  for (const auto& n : g.nodes()) {
    os << pad << "  ";
    for (size_t i = 0; i < n->outputs().size(); ++i) os << (i ? ", " : "") << Ref(n->output(i));
    os << " = " << n->qualified_op() << "(";
    for (size_t i = 0; i < n->inputs().size(); ++i) os << (i ? ", " : "") << Ref(n->input(i));
    os << ")";
    if (!n->attributes().empty()) {
      os << " {";
      for (size_t i = 0; i < n->attributes().size(); ++i) {
        const auto& a = n->attributes()[i];
        os << (i ? ", " : "") << a.name << "=" << AttrValue(a, indent);
      }
      os << "}";
    }
    os << "   # " << n->name() << ", opset " << n->opset() << "\n";
  }
  os << pad << "}\n";
  return os.str();
}

std::string DumpModel(const Model& model) {
  std::ostringstream os;
  os << "model ir_version=" << model.ir_version << " opsets={";
  bool first = true;
  for (const auto& [d, v] : model.opsets) {
    os << (first ? "" : ", ") << (d.empty() ? "ai.onnx" : d) << ":" << v;
    first = false;
  }
  os << "}";
  if (!model.producer_name.empty()) os << " producer=\"" << model.producer_name << " " << model.producer_version << "\"";
  os << "\n";
  for (const auto& f : model.functions) {
    os << "function " << (f.domain.empty() ? "" : f.domain + "::") << f.name << "\n" << DumpGraph(*f.body, 2);
  }
  os << DumpGraph(*model.graph);
  return os.str();
}

}  // namespace ferry::ir
