// The schema registry: built once (generated tables for opsets <= 17, then the hand-written newer versions) and
// indexed by (domain, op) for Find().
#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "ferry/error.h"
#include "schemas/schema.h"
#include "schemas/schema_builder.h"
#include "schemas/schema_table.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {

std::string_view CanonicalDomain(std::string_view domain) {
  if (domain == "ai.onnx") return "";
  return domain;
}

// --- OpSchema ---

const AttrSchema* OpSchema::FindAttr(std::string_view attr) const {
  for (const auto& a : attributes) {
    if (a.name == attr) return &a;
  }
  return nullptr;
}

const TypeConstraint* OpSchema::FindTypeConstraint(std::string_view var) const {
  for (const auto& tc : type_constraints) {
    if (tc.var == var) return &tc;
  }
  return nullptr;
}

namespace {

// The formal parameter that actual argument `index` binds to: the last one when it is variadic.
const FormalParam* ParamAt(const std::vector<FormalParam>& params, size_t index) {
  if (index < params.size()) return &params[index];
  if (!params.empty() && params.back().option == ParamOption::kVariadic) return &params.back();
  return nullptr;
}

std::string TypeVarOf(const OpSchema& s, const FormalParam* p) {
  if (p == nullptr || s.FindTypeConstraint(p->type_str) == nullptr) return "";
  return p->type_str;
}

}  // namespace

std::string OpSchema::InputTypeVar(size_t index) const { return TypeVarOf(*this, ParamAt(inputs, index)); }
std::string OpSchema::OutputTypeVar(size_t index) const { return TypeVarOf(*this, ParamAt(outputs, index)); }

// --- SchemaRegistry ---

const SchemaRegistry& SchemaRegistry::Get() {
  static const SchemaRegistry registry;  // thread-safe initialization
  return registry;
}

SchemaRegistry::SchemaRegistry() {
  RegisterGeneratedSchemas(*this);
  RegisterOpset18PlusSchemas(*this);
  RegisterFerrySchemas(*this);
  RegisterOrtContribSchemas(*this);
  RegisterShapeInference(*this);  // after all tables: sets `infer` on the versions it covers
}

void SchemaRegistry::SetInference(std::string_view domain, std::string_view op, int since_min, InferenceFn fn,
                                  int since_max) {
  bool any = false;
  auto d = index_.find(CanonicalDomain(domain));
  if (d != index_.end()) {
    auto o = d->second.find(op);
    if (o != d->second.end()) {
      for (size_t i : o->second) {
        OpSchema& s = schemas_[i];
        if (s.since_version < since_min || s.since_version > since_max) continue;
        s.infer = fn;
        any = true;
      }
    }
  }
  if (!any) {
    throw InternalError("shape inference registration: no schema version of " + std::string(op) + " in domain '" +
                        std::string(domain) + "' with since_version in [" + std::to_string(since_min) + ", " +
                        std::to_string(since_max) + "]");
  }
}

void SchemaRegistry::Add(OpSchema schema) {
  schema.domain = std::string(CanonicalDomain(schema.domain));
  auto& by_op = index_[schema.domain];
  auto it = by_op.find(schema.name);
  if (it == by_op.end()) it = by_op.emplace(schema.name, std::vector<size_t>{}).first;
  std::vector<size_t>& versions = it->second;
  auto pos = std::lower_bound(versions.begin(), versions.end(), schema.since_version,
                              [&](size_t i, int v) { return schemas_[i].since_version < v; });
  if (pos != versions.end() && schemas_[*pos].since_version == schema.since_version) {
    schemas_[*pos] = std::move(schema);  // a later definition of the same version wins
    return;
  }
  versions.insert(pos, schemas_.size());
  schemas_.push_back(std::move(schema));
}

void SchemaRegistry::SetMaxOpset(std::string_view domain, int64_t version) {
  domain = CanonicalDomain(domain);
  auto it = max_opset_.find(domain);
  if (it == max_opset_.end()) {
    max_opset_.emplace(std::string(domain), version);
  } else {
    it->second = std::max(it->second, version);
  }
}

namespace {

// Schemas added at run time (plugins), in domains the built-in tables do not have. A deque keeps the pointers
// handed out stable; schemas are never removed.
struct Extensions {
  std::shared_mutex mu;
  std::deque<OpSchema> schemas;
  std::map<std::string, std::map<std::string, std::vector<const OpSchema*>, std::less<>>, std::less<>> index;
  std::map<std::string, int64_t, std::less<>> max_opset;
};

Extensions& Ext() {
  static auto* ext = new Extensions();
  return *ext;
}

const std::vector<const OpSchema*>* FindExtensionVersions(std::string_view domain, std::string_view op) {
  Extensions& ext = Ext();
  auto d = ext.index.find(domain);
  if (d == ext.index.end()) return nullptr;
  auto o = d->second.find(op);
  return o == d->second.end() ? nullptr : &o->second;
}

}  // namespace

void SchemaRegistry::AddExtension(OpSchema schema, int64_t max_opset) {
  schema.domain = std::string(CanonicalDomain(schema.domain));
  if (Get().IsBuiltinDomain(schema.domain)) {
    throw InvalidArgumentError("custom op " + schema.domain + "::" + schema.name + ": domain '" +
                               (schema.domain.empty() ? std::string("ai.onnx") : schema.domain) +
                               "' is one of Ferry's built-in domains; custom ops need a domain of their own");
  }
  Extensions& ext = Ext();
  std::unique_lock lock(ext.mu);
  auto& versions = ext.index[schema.domain][schema.name];
  for (const OpSchema* v : versions) {
    if (v->since_version == schema.since_version) {
      throw InvalidArgumentError("custom op " + schema.domain + "::" + schema.name + " version " +
                                 std::to_string(schema.since_version) + " is already registered");
    }
  }
  ext.schemas.push_back(std::move(schema));
  const OpSchema* added = &ext.schemas.back();
  versions.insert(std::upper_bound(versions.begin(), versions.end(), added,
                                   [](const OpSchema* a, const OpSchema* b) { return a->since_version < b->since_version; }),
                  added);
  int64_t& m = ext.max_opset[ext.schemas.back().domain];
  m = std::max(m, max_opset);
}

bool SchemaRegistry::IsBuiltinDomain(std::string_view domain) const {
  return index_.count(CanonicalDomain(domain)) > 0 || max_opset_.count(CanonicalDomain(domain)) > 0;
}

const OpSchema* SchemaRegistry::Find(std::string_view domain, std::string_view op, int64_t opset) const {
  auto d = index_.find(CanonicalDomain(domain));
  if (d == index_.end()) {
    std::shared_lock lock(Ext().mu);
    const auto* versions = FindExtensionVersions(CanonicalDomain(domain), op);
    if (!versions) return nullptr;
    const OpSchema* best = nullptr;
    for (const OpSchema* s : *versions) {  // oldest first
      if (s->since_version <= opset) best = s;
    }
    return best;
  }
  auto o = d->second.find(op);
  if (o == d->second.end()) return nullptr;
  const OpSchema* best = nullptr;
  for (size_t i : o->second) {  // oldest first
    if (schemas_[i].since_version > opset) break;
    best = &schemas_[i];
  }
  return best;
}

std::vector<const OpSchema*> SchemaRegistry::Versions(std::string_view domain, std::string_view op) const {
  std::vector<const OpSchema*> out;
  auto d = index_.find(CanonicalDomain(domain));
  if (d == index_.end()) {
    std::shared_lock lock(Ext().mu);
    if (const auto* versions = FindExtensionVersions(CanonicalDomain(domain), op)) out = *versions;
    return out;
  }
  auto o = d->second.find(op);
  if (o == d->second.end()) return out;
  for (size_t i : o->second) out.push_back(&schemas_[i]);
  return out;
}

int64_t SchemaRegistry::MaxOpset(std::string_view domain) const {
  domain = CanonicalDomain(domain);
  int64_t best = 0;
  auto m = max_opset_.find(domain);
  if (m != max_opset_.end()) best = m->second;
  auto d = index_.find(domain);
  if (d == index_.end() && m == max_opset_.end()) {
    Extensions& ext = Ext();
    std::shared_lock lock(ext.mu);
    auto e = ext.max_opset.find(domain);
    return e == ext.max_opset.end() ? 0 : e->second;
  }
  if (d != index_.end()) {
    for (const auto& [op, versions] : d->second) {
      if (!versions.empty()) best = std::max<int64_t>(best, schemas_[versions.back()].since_version);
    }
  }
  return best;
}

// --- Tables (the generated schemas) ---

void AddSchemaTable(SchemaRegistry& registry, const SchemaTable& t) {
  auto params = [&](int32_t begin, int32_t count) {
    std::vector<FormalParam> out;
    out.reserve(static_cast<size_t>(count));
    for (int32_t k = 0; k < count; ++k) {
      const TableParam& p = t.params[begin + k];
      out.push_back(FormalParam{t.strings[p.name], t.strings[p.type_str], static_cast<ParamOption>(p.option),
                                p.homogeneous != 0, static_cast<int>(p.min_arity)});
    }
    return out;
  };
  for (int32_t n = 0; n < t.num_schemas; ++n) {
    const TableSchema& ts = t.schemas[n];
    OpSchema s;
    s.domain = t.strings[ts.domain];
    s.name = t.strings[ts.name];
    s.since_version = ts.since_version;
    s.deprecated = ts.deprecated != 0;
    s.inputs = params(ts.in_begin, ts.in_count);
    s.outputs = params(ts.out_begin, ts.out_count);
    s.attributes.reserve(static_cast<size_t>(ts.attr_count));
    for (int32_t k = 0; k < ts.attr_count; ++k) {
      const TableAttr& ta = t.attrs[ts.attr_begin + k];
      AttrSchema a;
      a.name = t.strings[ta.name];
      a.type = static_cast<ir::AttrType>(ta.type);
      a.required = ta.required != 0;
      if (ta.has_default) {
        ir::Attribute v;
        v.name = a.name;
        v.type = a.type;
        switch (a.type) {
          case ir::AttrType::kFloat: v.f = t.floats[ta.begin]; break;
          case ir::AttrType::kInt: v.i = t.ints[ta.begin]; break;
          case ir::AttrType::kString: v.s = t.strings[t.string_lists[ta.begin]]; break;
          case ir::AttrType::kFloats: v.floats.assign(t.floats + ta.begin, t.floats + ta.begin + ta.count); break;
          case ir::AttrType::kInts: v.ints.assign(t.ints + ta.begin, t.ints + ta.begin + ta.count); break;
          case ir::AttrType::kStrings:
            for (int32_t k2 = 0; k2 < ta.count; ++k2) v.strings.emplace_back(t.strings[t.string_lists[ta.begin + k2]]);
            break;
          default: break;
        }
        a.default_value = std::move(v);
      }
      s.attributes.push_back(std::move(a));
    }
    for (int32_t k = 0; k < ts.tc_count; ++k) {
      const TableConstraint& tc = t.constraints[ts.tc_begin + k];
      TypeConstraint c;
      c.var = t.strings[tc.var];
      for (int32_t k2 = 0; k2 < tc.count; ++k2) c.allowed.emplace_back(t.strings[t.string_lists[tc.begin + k2]]);
      s.type_constraints.push_back(std::move(c));
    }
    s.min_inputs = ts.min_inputs;
    s.max_inputs = ts.max_inputs;
    s.min_outputs = ts.min_outputs;
    s.max_outputs = ts.max_outputs;
    registry.Add(std::move(s));
  }
}

// --- SchemaEdit (hand-written schemas) ---

TypeList Types(std::initializer_list<std::string_view> elem_types) {
  TypeList out;
  for (auto t : elem_types) out.push_back("tensor(" + std::string(t) + ")");
  return out;
}

TypeList Wrap(std::string_view kind, const TypeList& types) {
  TypeList out;
  for (const auto& t : types) out.push_back(std::string(kind) + "(" + t + ")");
  return out;
}

TypeList Concat(std::initializer_list<TypeList> lists) {
  TypeList out;
  for (const auto& l : lists) {
    for (const auto& t : l) {
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
  }
  return out;
}

namespace types {
const TypeList kFloat = Types({"float16", "float", "double"});
const TypeList kFloatBf = Types({"bfloat16", "float16", "float", "double"});
const TypeList kIntSigned = Types({"int8", "int16", "int32", "int64"});
const TypeList kIntUnsigned = Types({"uint8", "uint16", "uint32", "uint64"});
const TypeList kInt = Concat({kIntUnsigned, kIntSigned});
const TypeList kNumeric = Concat({kInt, kFloatBf});
const TypeList kFloat8 = Types({"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"});
const TypeList kInt4 = Types({"uint4", "int4"});
const TypeList kComplex = Types({"complex64", "complex128"});
const TypeList kAllIr4 = Concat({kNumeric, Types({"string", "bool"}), kComplex});
const TypeList kAllIr9 = Concat({kAllIr4, kFloat8});
const TypeList kAllIr10 = Concat({kAllIr9, kInt4});
const TypeList kAllIr11 = Concat({kAllIr10, Types({"float4e2m1"})});
const TypeList kAllIr12 = Concat({kAllIr11, Types({"float8e8m0"})});
const TypeList kAllIr13 = Concat({kAllIr12, Types({"uint2", "int2"})});
}  // namespace types

namespace {

void ComputeArity(const std::vector<FormalParam>& params, int& min, int& max) {
  min = 0;
  max = 0;
  for (const auto& p : params) {
    switch (p.option) {
      case ParamOption::kSingle:
        ++max;
        min = max;
        break;
      case ParamOption::kOptional:
        ++max;
        break;
      case ParamOption::kVariadic:
        min = max + p.min_arity;
        max = INT_MAX;
        break;
    }
  }
}

void SetParam(std::vector<FormalParam>& params, size_t index, FormalParam p) {
  if (index < params.size()) {
    params[index] = std::move(p);
  } else if (index == params.size()) {
    params.push_back(std::move(p));
  } else {
    throw InternalError("schema edit: parameter index " + std::to_string(index) + " out of range");
  }
}

}  // namespace

void SchemaEdit::RecomputeArity() {
  ComputeArity(inputs, min_inputs, max_inputs);
  ComputeArity(outputs, min_outputs, max_outputs);
}

SchemaEdit& SchemaEdit::In(std::string name, std::string type_str, ParamOption option, bool homogeneous,
                           int min_arity) {
  inputs.push_back(FormalParam{std::move(name), std::move(type_str), option, homogeneous, min_arity});
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::Out(std::string name, std::string type_str, ParamOption option, bool homogeneous,
                            int min_arity) {
  outputs.push_back(FormalParam{std::move(name), std::move(type_str), option, homogeneous, min_arity});
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::SetIn(size_t index, FormalParam p) {
  SetParam(inputs, index, std::move(p));
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::SetOut(size_t index, FormalParam p) {
  SetParam(outputs, index, std::move(p));
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::TruncateInputs(size_t count) {
  if (inputs.size() > count) inputs.resize(count);
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::TruncateOutputs(size_t count) {
  if (outputs.size() > count) outputs.resize(count);
  RecomputeArity();
  return *this;
}

SchemaEdit& SchemaEdit::Attr(AttrSchema a) {
  for (auto& existing : attributes) {
    if (existing.name == a.name) {
      existing = std::move(a);
      return *this;
    }
  }
  auto pos = std::lower_bound(attributes.begin(), attributes.end(), a.name,
                              [](const AttrSchema& x, const std::string& n) { return x.name < n; });
  attributes.insert(pos, std::move(a));
  return *this;
}

namespace {

AttrSchema WithDefault(std::string name, ir::AttrType type, ir::Attribute v) {
  v.name = name;
  v.type = type;
  AttrSchema a;
  a.name = std::move(name);
  a.type = type;
  a.default_value = std::move(v);
  return a;
}

}  // namespace

SchemaEdit& SchemaEdit::AttrRequired(std::string name, ir::AttrType type) {
  return Attr(AttrSchema{std::move(name), type, true, std::nullopt});
}

SchemaEdit& SchemaEdit::AttrOptional(std::string name, ir::AttrType type) {
  return Attr(AttrSchema{std::move(name), type, false, std::nullopt});
}

SchemaEdit& SchemaEdit::AttrInt(std::string name, int64_t def) {
  ir::Attribute v;
  v.i = def;
  return Attr(WithDefault(std::move(name), ir::AttrType::kInt, std::move(v)));
}

SchemaEdit& SchemaEdit::AttrFloat(std::string name, float def) {
  ir::Attribute v;
  v.f = def;
  return Attr(WithDefault(std::move(name), ir::AttrType::kFloat, std::move(v)));
}

SchemaEdit& SchemaEdit::AttrString(std::string name, std::string def) {
  ir::Attribute v;
  v.s = std::move(def);
  return Attr(WithDefault(std::move(name), ir::AttrType::kString, std::move(v)));
}

SchemaEdit& SchemaEdit::AttrInts(std::string name, std::vector<int64_t> def) {
  ir::Attribute v;
  v.ints = std::move(def);
  return Attr(WithDefault(std::move(name), ir::AttrType::kInts, std::move(v)));
}

SchemaEdit& SchemaEdit::AttrFloats(std::string name, std::vector<float> def) {
  ir::Attribute v;
  v.floats = std::move(def);
  return Attr(WithDefault(std::move(name), ir::AttrType::kFloats, std::move(v)));
}

SchemaEdit& SchemaEdit::AttrStrings(std::string name, std::vector<std::string> def) {
  ir::Attribute v;
  v.strings = std::move(def);
  return Attr(WithDefault(std::move(name), ir::AttrType::kStrings, std::move(v)));
}

SchemaEdit& SchemaEdit::RemoveAttr(std::string_view name) {
  auto it = std::find_if(attributes.begin(), attributes.end(), [&](const AttrSchema& a) { return a.name == name; });
  if (it == attributes.end()) {
    throw InternalError("schema edit: " + this->name + "-" + std::to_string(since_version) + " has no attribute '" +
                        std::string(name) + "' to remove");
  }
  attributes.erase(it);
  return *this;
}

SchemaEdit& SchemaEdit::Constrain(std::string var, TypeList allowed) {
  for (auto& tc : type_constraints) {
    if (tc.var == var) {
      tc.allowed = std::move(allowed);
      return *this;
    }
  }
  type_constraints.push_back(TypeConstraint{std::move(var), std::move(allowed)});
  return *this;
}

SchemaEdit& SchemaEdit::AddTypes(std::string_view var, const TypeList& add) {
  for (auto& tc : type_constraints) {
    if (tc.var == var) {
      for (const auto& t : add) {
        if (std::find(tc.allowed.begin(), tc.allowed.end(), t) == tc.allowed.end()) tc.allowed.push_back(t);
      }
      return *this;
    }
  }
  throw InternalError("schema edit: " + name + "-" + std::to_string(since_version) + " has no type variable '" +
                      std::string(var) + "'");
}

SchemaEdit& SchemaEdit::RemoveTypes(std::string_view var, const TypeList& remove) {
  for (auto& tc : type_constraints) {
    if (tc.var == var) {
      std::erase_if(tc.allowed,
                    [&](const std::string& t) { return std::find(remove.begin(), remove.end(), t) != remove.end(); });
      return *this;
    }
  }
  throw InternalError("schema edit: " + name + "-" + std::to_string(since_version) + " has no type variable '" +
                      std::string(var) + "'");
}

SchemaEdit& SchemaEdit::RemoveConstraint(std::string_view var) {
  std::erase_if(type_constraints, [&](const TypeConstraint& tc) { return tc.var == var; });
  return *this;
}

SchemaEdit NewOp(std::string name, int since, std::string domain) {
  SchemaEdit s;
  s.domain = std::move(domain);
  s.name = std::move(name);
  s.since_version = since;
  return s;
}

SchemaEdit Derive(const SchemaRegistry& r, std::string_view op, int since, std::string_view domain) {
  const OpSchema* base = r.Find(domain, op, since - 1);
  if (base == nullptr) {
    throw InternalError("schema edit: no version of " + std::string(op) + " older than " + std::to_string(since));
  }
  SchemaEdit s(*base);
  s.since_version = since;
  s.deprecated = false;
  return s;
}

}  // namespace ferry::schemas
