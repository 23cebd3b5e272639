// ConversionContext, the adapter registry, the generic rule and the small helpers adapters share.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "convert/adapter.h"
#include "ferry/error.h"
#include "legalize/decomposition.h"
#include "schemas/validate.h"

namespace ferry::convert {

void Refuse(std::string reason) { throw Unconvertible{std::move(reason)}; }

namespace {

std::string SchemaName(const schemas::OpSchema* s) {
  return s ? s->name + "-" + std::to_string(s->since_version) : std::string("(none)");
}

}  // namespace

std::string Step::ToName() const { return SchemaName(to()); }
std::string Step::FromName() const { return SchemaName(from()); }

// ---- ConversionContext ------------------------------------------------------------------------------------

ConversionContext::ConversionContext(ir::Model& model) : model_(model), names_(model) {}

ir::Builder ConversionContext::Build(ir::Graph& graph, int64_t opset) {
  ir::Builder b(graph, opset, &names_);
  b.set_on_add([this](ir::Node& n) {
    FillTypes(n);
    added_.push_back(&n);
  });
  return b;
}

void ConversionContext::FillTypes(ir::Node& n) {
  // Element types only (shapes come from type inference after the conversion): enough for the type checks of
  // the nodes that read these values.
  const schemas::OpSchema* s = schemas::SchemaRegistry::Get().Find(n.domain(), n.op_type(), n.opset());
  if (!s) return;
  std::vector<const ir::TypeInfo*> in;
  for (const ir::Value* v : n.inputs()) in.push_back(v ? &v->type() : nullptr);
  std::vector<ir::TypeInfo> out;
  for (const ir::Value* v : n.outputs()) out.push_back(v ? v->type() : ir::TypeInfo{});
  schemas::InferOutputElementTypes(n, *s, in, out);
  if (n.op_type() == "Cast" && n.domain().empty() && n.has_attr("to")) {
    out.at(0) = ir::TypeInfo::Tensor(static_cast<DataType>(n.GetInt("to", 0)));
  }
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    ir::Value* v = n.output(i);
    if (v && v->type().kind == ir::TypeInfo::Kind::kUnknown) v->set_type(out[i]);
  }
}

ir::Node* ConversionContext::Rebuild(ir::Node* node, const std::string& op, std::vector<ir::Value*> inputs,
                                     std::vector<ir::Value*> outputs, std::vector<ir::Attribute> attributes) {
  const std::vector<ir::Value*> old_inputs = node->inputs();
  ir::Node* n = ir::Rebuild(node, op, std::move(inputs), std::move(outputs), std::move(attributes));
  FillTypes(*n);
  for (ir::Value* v : old_inputs) DropIfUnused(v);
  return n;
}

void ConversionContext::Remove(ir::Node* node) {
  const std::vector<ir::Value*> old_inputs = node->inputs();
  node->owner()->RemoveNode(node);
  for (ir::Value* v : old_inputs) DropIfUnused(v);
}

ir::Node* ConversionContext::Decompose(ir::Node* node, const Step& step) {
  const legalize::Choice choice = legalize::ChooseDecomposition(*node, step.after());
  if (!choice.decomposition) Refuse(choice.reason);
  const std::vector<ir::Value*> old_inputs = node->inputs();
  for (ir::Node* n : legalize::Decompose(model_, *node->owner(), node, *choice.decomposition, step.after(), &names_)) {
    added_.push_back(n);
  }
  for (ir::Value* v : old_inputs) DropIfUnused(v);
  return nullptr;
}

ir::Node* DecomposeDown(ConversionContext& ctx, ir::Node* node, const Step& step) {
  return ctx.Decompose(node, step);
}

std::vector<ir::Node*> ConversionContext::TakeAdded() {
  std::vector<ir::Node*> out;
  out.swap(added_);
  return out;
}

void ConversionContext::DropIfUnused(ir::Value* v) {
  if (v) orphans_.push_back(v);
}

void ConversionContext::RemoveOrphans() {
  std::sort(orphans_.begin(), orphans_.end());
  orphans_.erase(std::unique(orphans_.begin(), orphans_.end()), orphans_.end());
  for (ir::Value* v : orphans_) {
    if (IsUsed(v)) continue;
    ir::Graph* g = v->owner();
    const auto& in = g->inputs();
    if (std::find(in.begin(), in.end(), v) != in.end()) continue;
    if (v->is_initializer()) {
      g->RemoveInitializer(v);
    } else if (ir::Node* p = v->producer(); p && p->domain().empty() && p->op_type() == "Constant") {
      g->RemoveNode(p);
      g->RemoveValue(v);
    }
  }
  orphans_.clear();
}

// ---- AdapterRegistry --------------------------------------------------------------------------------------

void AdapterRegistry::Add(Adapter a) {
  auto key = std::make_pair(a.op, a.boundary);
  if (index_.count(key)) {
    throw InternalError("opset converter: two adapters for " + a.op + " at opset " + std::to_string(a.boundary));
  }
  index_[key] = adapters_.size();
  adapters_.push_back(std::move(a));
}

const Adapter* AdapterRegistry::Find(std::string_view op, int64_t boundary) const {
  auto it = index_.find(std::make_pair(std::string(op), boundary));
  return it == index_.end() ? nullptr : &adapters_[it->second];
}

// ---- the generic rule -------------------------------------------------------------------------------------

namespace {

const schemas::FormalParam* ParamAt(const std::vector<schemas::FormalParam>& params, size_t i) {
  if (i < params.size()) return &params[i];
  if (!params.empty() && params.back().option == schemas::ParamOption::kVariadic) return &params.back();
  return nullptr;
}

bool TypeKnown(const ir::TypeInfo& t) {
  switch (t.kind) {
    case ir::TypeInfo::Kind::kTensor:
    case ir::TypeInfo::Kind::kSparseTensor:
      return t.elem_type != DataType::kUndefined;
    case ir::TypeInfo::Kind::kSequence:
    case ir::TypeInfo::Kind::kOptional:
      return t.elem && TypeKnown(*t.elem);
    case ir::TypeInfo::Kind::kMap:
      return t.elem_type != DataType::kUndefined && t.elem && TypeKnown(*t.elem);
    case ir::TypeInfo::Kind::kUnknown:
      return false;
  }
  return false;
}

bool TypeMatches(const ir::TypeInfo& a, const ir::TypeInfo& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ir::TypeInfo::Kind::kTensor:
    case ir::TypeInfo::Kind::kSparseTensor:
      return a.elem_type == b.elem_type;
    case ir::TypeInfo::Kind::kSequence:
    case ir::TypeInfo::Kind::kOptional:
      return a.elem && b.elem && TypeMatches(*a.elem, *b.elem);
    case ir::TypeInfo::Kind::kMap:
      return a.elem_type == b.elem_type && a.elem && b.elem && TypeMatches(*a.elem, *b.elem);
    case ir::TypeInfo::Kind::kUnknown:
      return false;
  }
  return false;
}

std::string TypeName(const ir::TypeInfo& t) {
  switch (t.kind) {
    case ir::TypeInfo::Kind::kTensor:
      return std::string(DataTypeName(t.elem_type));
    case ir::TypeInfo::Kind::kSparseTensor:
      return "sparse " + std::string(DataTypeName(t.elem_type));
    case ir::TypeInfo::Kind::kSequence:
      return "seq(" + (t.elem ? TypeName(*t.elem) : "?") + ")";
    case ir::TypeInfo::Kind::kOptional:
      return "optional(" + (t.elem ? TypeName(*t.elem) : "?") + ")";
    case ir::TypeInfo::Kind::kMap:
      return "map(" + std::string(DataTypeName(t.elem_type)) + "," + (t.elem ? TypeName(*t.elem) : "?") + ")";
    case ir::TypeInfo::Kind::kUnknown:
      return "?";
  }
  return "?";
}

// The types a formal parameter accepts (empty when the schema does not say, or a type string is not parsed).
std::vector<ir::TypeInfo> Allowed(const schemas::OpSchema& s, const schemas::FormalParam& p) {
  std::vector<ir::TypeInfo> out;
  std::vector<std::string> strings;
  if (const schemas::TypeConstraint* tc = s.FindTypeConstraint(p.type_str)) {
    strings = tc->allowed;
  } else {
    strings = {p.type_str};
  }
  for (const auto& str : strings) {
    auto t = schemas::ParseTypeString(str);
    if (!t) return {};
    out.push_back(std::move(*t));
  }
  return out;
}

bool AnyMatches(const std::vector<ir::TypeInfo>& allowed, const ir::TypeInfo& t) {
  return std::any_of(allowed.begin(), allowed.end(), [&](const ir::TypeInfo& a) { return TypeMatches(t, a); });
}

void CheckTypes(const ir::Node& node, const schemas::OpSchema& schema, const schemas::OpSchema* from, bool inputs) {
  const auto& values = inputs ? node.inputs() : node.outputs();
  const auto& params = inputs ? schema.inputs : schema.outputs;
  std::map<std::string, std::pair<ir::TypeInfo, const ir::Value*>> bound;
  for (size_t i = 0; i < values.size(); ++i) {
    const ir::Value* v = values[i];
    const schemas::FormalParam* p = ParamAt(params, i);
    if (!v || !p) continue;
    const std::vector<ir::TypeInfo> allowed = Allowed(schema, *p);
    if (allowed.empty()) continue;
    const char* what = inputs ? "input" : "output";
    const ir::TypeInfo& t = v->type();
    if (TypeKnown(t)) {
      if (!AnyMatches(allowed, t)) {
        Refuse(std::string(what) + " '" + v->name() + "' is " + TypeName(t) + ", which " + SchemaName(&schema) +
               " does not accept for '" + p->name + "'");
      }
      const bool var = schema.FindTypeConstraint(p->type_str) != nullptr;
      if (var && p->homogeneous) {
        auto [it, fresh] = bound.emplace(p->type_str, std::make_pair(t, v));
        if (!fresh && !TypeMatches(it->second.first, t)) {
          Refuse(std::string(what) + "s '" + it->second.second->name() + "' (" + TypeName(it->second.first) +
                 ") and '" + v->name() + "' (" + TypeName(t) + ") must have one type in " + SchemaName(&schema));
        }
      }
    } else if (from) {
      const schemas::FormalParam* fp = ParamAt(inputs ? from->inputs : from->outputs, i);
      if (!fp) continue;
      for (const ir::TypeInfo& old : Allowed(*from, *fp)) {
        if (!AnyMatches(allowed, old)) {
          Refuse(std::string("the type of ") + what + " '" + v->name() + "' is unknown, and " + SchemaName(&schema) +
                 " does not accept every type " + SchemaName(from) + " does (" + TypeName(old) + ")");
        }
      }
    }
  }
}

// Attribute values that mean "nothing" where the attribute has no declared default: all-1 dilations.
bool Neutral(const ir::Attribute& a) {
  if (a.name == "dilations" && a.type == ir::AttrType::kInts) {
    return std::all_of(a.ints.begin(), a.ints.end(), [](int64_t d) { return d == 1; });
  }
  return false;
}

}  // namespace

void CheckNodeAt(const ir::Node& node, const schemas::OpSchema& schema, const schemas::OpSchema* from) {
  std::string e = schemas::ValidateNodeAgainstSchema(node, schema);
  if (!e.empty()) {
    // "node 'n' (Op) [Op at opset N, schema version V]: problem" -> "Op-V: problem"
    const size_t cut = e.find("]: ");
    Refuse(SchemaName(&schema) + ": " + (cut == std::string::npos ? e : e.substr(cut + 3)));
  }
  CheckTypes(node, schema, from, true);
  CheckTypes(node, schema, from, false);
}

bool GenericStep(ir::Node& node, const Step& step) {
  const schemas::OpSchema* from = step.from();
  const schemas::OpSchema* to = step.to();
  if (!to) Refuse(node.op_type() + " does not exist before opset " + std::to_string(step.boundary));
  if (to->deprecated) {
    Refuse(node.op_type() + " is deprecated (removed) as of opset " + std::to_string(to->since_version));
  }
  bool changed = false;
  auto& attrs = node.mutable_attributes();
  for (size_t i = 0; i < attrs.size();) {
    const ir::Attribute& a = attrs[i];
    if (to->FindAttr(a.name)) {
      ++i;
      continue;
    }
    const schemas::AttrSchema* old = from ? from->FindAttr(a.name) : nullptr;
    if ((old && old->default_value && SameAttrValue(a, *old->default_value)) || Neutral(a)) {
      attrs.erase(attrs.begin() + static_cast<std::ptrdiff_t>(i));
      changed = true;
      continue;
    }
    Refuse("attribute " + a.name + "=" + AttrValueString(a) + " has no equivalent in " + SchemaName(to));
  }
  // An attribute whose default changed keeps its old meaning by being written out.
  for (const schemas::AttrSchema& d : to->attributes) {
    if (!d.default_value || node.has_attr(d.name) || !from) continue;
    const schemas::AttrSchema* old = from->FindAttr(d.name);
    if (old && old->default_value && !SameAttrValue(*old->default_value, *d.default_value)) {
      ir::Attribute a = *old->default_value;
      a.name = d.name;
      attrs.push_back(std::move(a));
      changed = true;
    }
  }
  CheckNodeAt(node, *to, step.in_function ? nullptr : from);
  return changed;
}

// ---- helpers ----------------------------------------------------------------------------------------------

bool IsUsed(const ir::Value* v) {
  if (!v) return false;
  if (!v->consumers().empty()) return true;
  const auto& out = v->owner()->outputs();
  return std::find(out.begin(), out.end(), v) != out.end();
}

std::vector<ir::Attribute> AttrsWithout(const ir::Node& node, std::initializer_list<std::string_view> names) {
  std::vector<ir::Attribute> out;
  for (const ir::Attribute& a : node.attributes()) {
    if (std::find(names.begin(), names.end(), a.name) == names.end()) out.push_back(a);
  }
  return out;
}

void SetAttr(std::vector<ir::Attribute>& attrs, ir::Attribute a) {
  for (ir::Attribute& x : attrs) {
    if (x.name == a.name) {
      x = std::move(a);
      return;
    }
  }
  attrs.push_back(std::move(a));
}

bool SameAttrValue(const ir::Attribute& a, const ir::Attribute& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ir::AttrType::kInt:
      return a.i == b.i;
    case ir::AttrType::kFloat:
      return a.f == b.f;
    case ir::AttrType::kString:
      return a.s == b.s;
    case ir::AttrType::kInts:
      return a.ints == b.ints;
    case ir::AttrType::kFloats:
      return a.floats == b.floats;
    case ir::AttrType::kStrings:
      return a.strings == b.strings;
    default:
      return false;
  }
}

std::string AttrValueString(const ir::Attribute& a) {
  auto join = [](const auto& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += ",";
      if constexpr (std::is_same_v<std::decay_t<decltype(v[0])>, std::string>) {
        s += "'" + v[i] + "'";
      } else {
        std::ostringstream os;
        os << v[i];
        s += os.str();
      }
    }
    return s + "]";
  };
  switch (a.type) {
    case ir::AttrType::kInt:
      return std::to_string(a.i);
    case ir::AttrType::kFloat: {
      std::ostringstream os;
      os << a.f;
      return os.str();
    }
    case ir::AttrType::kString:
      return "'" + a.s + "'";
    case ir::AttrType::kInts:
      return join(a.ints);
    case ir::AttrType::kFloats:
      return join(a.floats);
    case ir::AttrType::kStrings:
      return join(a.strings);
    default:
      return std::string("<") + ir::AttrTypeName(a.type) + ">";
  }
}

int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank) {
    Refuse(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::string NodeBase(const ir::Node& node) { return node.name().empty() ? node.op_type() : node.name(); }

std::vector<ir::Value*> InputsResized(const ir::Node& node, size_t n) {
  std::vector<ir::Value*> out = node.inputs();
  out.resize(n, nullptr);
  return out;
}

std::vector<ir::Value*> TrimInputs(std::vector<ir::Value*> inputs) {
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  return inputs;
}

}  // namespace ferry::convert
