#include "schemas/validate.h"

#include <climits>

namespace ferry::schemas {

namespace {

std::string Where(const ir::Node& node, const OpSchema& schema) {
  std::string op = (schema.domain.empty() ? "" : schema.domain + "::") + schema.name;
  return node.Describe() + " [" + op + " at opset " + std::to_string(node.opset()) + ", schema version " +
         std::to_string(schema.since_version) + "]";
}

std::string Count(int n) { return n == INT_MAX ? std::string("unbounded") : std::to_string(n); }

const FormalParam* ParamAt(const std::vector<FormalParam>& params, size_t index) {
  if (index < params.size()) return &params[index];
  if (!params.empty() && params.back().option == ParamOption::kVariadic) return &params.back();
  return nullptr;
}

std::string CheckArity(const ir::Node& node, const OpSchema& schema, bool inputs) {
  const char* what = inputs ? "input" : "output";
  size_t n = inputs ? node.num_inputs() : node.num_outputs();
  int min = inputs ? schema.min_inputs : schema.min_outputs;
  int max = inputs ? schema.max_inputs : schema.max_outputs;
  const auto& params = inputs ? schema.inputs : schema.outputs;
  if (static_cast<int64_t>(n) > max) {
    return Where(node, schema) + ": has " + std::to_string(n) + " " + what + "s, at most " + Count(max) +
           " allowed";
  }
  if (static_cast<int64_t>(n) < min) {
    const FormalParam* p = ParamAt(params, n);
    return Where(node, schema) + ": has " + std::to_string(n) + " " + what + "s, at least " + std::to_string(min) +
           " required" + (p ? " (missing '" + p->name + "')" : std::string());
  }
  for (size_t i = 0; i < n; ++i) {
    bool present = inputs ? node.input(i) != nullptr : node.output(i) != nullptr;
    if (present) continue;
    const FormalParam* p = ParamAt(params, i);
    if (p && p->option == ParamOption::kSingle) {
      return Where(node, schema) + ": required " + what + " " + std::to_string(i) + " ('" + p->name +
             "') is empty";
    }
  }
  return "";
}

}  // namespace

std::string ValidateNodeAgainstSchema(const ir::Node& node, const OpSchema& schema) {
  if (schema.deprecated) {
    return Where(node, schema) + ": the op is deprecated (removed) as of opset " +
           std::to_string(schema.since_version);
  }
  if (std::string e = CheckArity(node, schema, true); !e.empty()) return e;
  if (std::string e = CheckArity(node, schema, false); !e.empty()) return e;

  const bool strict_attrs = CanonicalDomain(schema.domain).empty() || schema.closed_attributes;
  for (const auto& a : node.attributes()) {
    const AttrSchema* s = schema.FindAttr(a.name);
    if (!s) {
      if (strict_attrs) return Where(node, schema) + ": unknown attribute '" + a.name + "'";
      continue;
    }
    if (a.type != s->type) {
      return Where(node, schema) + ": attribute '" + a.name + "' must be of type " + ir::AttrTypeName(s->type) +
             ", got " + ir::AttrTypeName(a.type);
    }
  }
  for (const auto& s : schema.attributes) {
    if (s.required && !node.has_attr(s.name)) {
      return Where(node, schema) + ": required attribute '" + s.name + "' is missing";
    }
  }
  return "";
}

std::optional<ir::TypeInfo> ParseTypeString(std::string_view t) {
  auto inner = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (t.size() > prefix.size() + 2 && t.starts_with(prefix) && t[prefix.size()] == '(' && t.back() == ')') {
      return t.substr(prefix.size() + 1, t.size() - prefix.size() - 2);
    }
    return std::nullopt;
  };
  if (auto e = inner("tensor")) {
    auto dt = DataTypeFromName(*e);
    if (!dt) return std::nullopt;
    return ir::TypeInfo::Tensor(*dt);
  }
  if (auto e = inner("sparse_tensor")) {
    auto dt = DataTypeFromName(*e);
    if (!dt) return std::nullopt;
    ir::TypeInfo ti;
    ti.kind = ir::TypeInfo::Kind::kSparseTensor;
    ti.elem_type = *dt;
    return ti;
  }
  for (auto [prefix, kind] : {std::pair{std::string_view("seq"), ir::TypeInfo::Kind::kSequence},
                              std::pair{std::string_view("optional"), ir::TypeInfo::Kind::kOptional}}) {
    if (auto e = inner(prefix)) {
      auto elem = ParseTypeString(*e);
      if (!elem) return std::nullopt;
      ir::TypeInfo ti;
      ti.kind = kind;
      ti.elem = std::make_shared<ir::TypeInfo>(std::move(*elem));
      return ti;
    }
  }
  if (auto e = inner("map")) {
    size_t comma = e->find(',');
    if (comma == std::string_view::npos) return std::nullopt;
    auto key = DataTypeFromName(e->substr(0, comma));
    std::string_view value = e->substr(comma + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    auto elem = ParseTypeString(value);
    if (!elem) {  // ai.onnx.ml writes map values as bare element types: "map(int64, string)"
      if (auto dt = DataTypeFromName(value)) elem = ir::TypeInfo::Tensor(*dt);
    }
    if (!key || !elem) return std::nullopt;
    ir::TypeInfo ti;
    ti.kind = ir::TypeInfo::Kind::kMap;
    ti.elem_type = *key;
    ti.elem = std::make_shared<ir::TypeInfo>(std::move(*elem));
    return ti;
  }
  return std::nullopt;
}

namespace {

// The single type a constraint allows, if it allows exactly one.
std::optional<ir::TypeInfo> OnlyAllowed(const OpSchema& schema, std::string_view var) {
  const TypeConstraint* tc = schema.FindTypeConstraint(var);
  if (!tc || tc->allowed.size() != 1) return std::nullopt;
  return ParseTypeString(tc->allowed[0]);
}

const ir::TypeInfo* BoundBy(const OpSchema& schema, std::string_view var,
                            const std::vector<const ir::TypeInfo*>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TypeInfo* t = inputs[i];
    if (!t || t->kind == ir::TypeInfo::Kind::kUnknown) continue;
    const FormalParam* p = ParamAt(schema.inputs, i);
    if (!p || p->type_str != var) continue;
    // A heterogeneous variadic parameter binds no single type.
    if (p->option == ParamOption::kVariadic && !p->homogeneous) continue;
    return t;
  }
  return nullptr;
}

}  // namespace

DataType ResolveTypeVar(const OpSchema& schema, std::string_view var, const std::vector<const ir::TypeInfo*>& inputs) {
  if (const ir::TypeInfo* t = BoundBy(schema, var, inputs)) {
    if (t->kind == ir::TypeInfo::Kind::kTensor || t->kind == ir::TypeInfo::Kind::kSparseTensor) return t->elem_type;
    return DataType::kUndefined;
  }
  if (auto only = OnlyAllowed(schema, var); only && only->is_tensor()) return only->elem_type;
  return DataType::kUndefined;
}

void InferOutputElementTypes(const ir::Node& node, const OpSchema& schema,
                             const std::vector<const ir::TypeInfo*>& inputs, std::vector<ir::TypeInfo>& outputs) {
  outputs.resize(node.num_outputs());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].kind != ir::TypeInfo::Kind::kUnknown) continue;
    const FormalParam* p = ParamAt(schema.outputs, i);
    if (!p) continue;
    if (!schema.FindTypeConstraint(p->type_str)) {
      if (auto t = ParseTypeString(p->type_str)) outputs[i] = std::move(*t);
      continue;
    }
    if (p->option == ParamOption::kVariadic && !p->homogeneous) continue;  // e.g. Loop/Scan/If outputs
    if (const ir::TypeInfo* bound = BoundBy(schema, p->type_str, inputs)) {
      ir::TypeInfo t;
      t.kind = bound->kind;
      t.elem_type = bound->elem_type;
      t.elem = bound->elem;
      outputs[i] = std::move(t);
    } else if (auto only = OnlyAllowed(schema, p->type_str)) {
      outputs[i] = std::move(*only);
    }
  }
}

}  // namespace ferry::schemas
