// Helpers for writing operator schemas by hand as short data: a new schema from scratch, or a new version derived
// from the newest older version of the same op with a few edits (more types, an attribute or input changed).
//
//   r.Add(Derive(r, "Relu", 14).AddTypes("T", Types({"int8", "int16", "int32", "int64"})));
//   r.Add(NewOp("Gelu", 20).In("X", "T").Out("Y", "T").AttrString("approximate", "none")
//             .Constrain("T", kFloatTypes));
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "schemas/schema.h"

namespace ferry::schemas {

using TypeList = std::vector<std::string>;

// "tensor(x)" for each short name: Types({"float", "int64"}).
TypeList Types(std::initializer_list<std::string_view> elem_types);
// Wraps each type: Wrap("seq", Types({"float"})) -> {"seq(tensor(float))"}.
TypeList Wrap(std::string_view kind, const TypeList& types);
TypeList Concat(std::initializer_list<TypeList> lists);

class SchemaEdit : public OpSchema {
 public:
  SchemaEdit() = default;
  explicit SchemaEdit(OpSchema base) : OpSchema(std::move(base)) {}

  SchemaEdit& Since(int v) {
    since_version = v;
    return *this;
  }
  SchemaEdit& Deprecated() {
    deprecated = true;
    return *this;
  }

  // Formal parameters, appended in order. Arity limits are recomputed as in ONNX after every change.
  SchemaEdit& In(std::string name, std::string type_str, ParamOption option = ParamOption::kSingle,
                 bool homogeneous = true, int min_arity = 1);
  SchemaEdit& OptIn(std::string name, std::string type_str) {
    return In(std::move(name), std::move(type_str), ParamOption::kOptional);
  }
  SchemaEdit& VarIn(std::string name, std::string type_str, int min_arity = 1, bool homogeneous = true) {
    return In(std::move(name), std::move(type_str), ParamOption::kVariadic, homogeneous, min_arity);
  }
  SchemaEdit& Out(std::string name, std::string type_str, ParamOption option = ParamOption::kSingle,
                  bool homogeneous = true, int min_arity = 1);
  SchemaEdit& OptOut(std::string name, std::string type_str) {
    return Out(std::move(name), std::move(type_str), ParamOption::kOptional);
  }
  SchemaEdit& VarOut(std::string name, std::string type_str, int min_arity = 1, bool homogeneous = true) {
    return Out(std::move(name), std::move(type_str), ParamOption::kVariadic, homogeneous, min_arity);
  }
  // Replaces input/output `index` (appends when index == size).
  SchemaEdit& SetIn(size_t index, FormalParam p);
  SchemaEdit& SetOut(size_t index, FormalParam p);
  SchemaEdit& TruncateInputs(size_t count);
  SchemaEdit& TruncateOutputs(size_t count);

  // Attributes (an existing attribute of the same name is replaced).
  SchemaEdit& Attr(AttrSchema a);
  SchemaEdit& AttrRequired(std::string name, ir::AttrType type);
  SchemaEdit& AttrOptional(std::string name, ir::AttrType type);  // optional, no default
  SchemaEdit& AttrInt(std::string name, int64_t def);
  SchemaEdit& AttrFloat(std::string name, float def);
  SchemaEdit& AttrString(std::string name, std::string def);
  SchemaEdit& AttrInts(std::string name, std::vector<int64_t> def);
  SchemaEdit& AttrFloats(std::string name, std::vector<float> def);
  SchemaEdit& AttrStrings(std::string name, std::vector<std::string> def);
  SchemaEdit& RemoveAttr(std::string_view name);

  // Type constraints: set (create or replace), add types to an existing one, remove types.
  SchemaEdit& Constrain(std::string var, TypeList allowed);
  SchemaEdit& AddTypes(std::string_view var, const TypeList& types);
  SchemaEdit& RemoveTypes(std::string_view var, const TypeList& types);
  SchemaEdit& RemoveConstraint(std::string_view var);

  void RecomputeArity();
};

// A new op version from scratch (default domain unless `domain` is given).
SchemaEdit NewOp(std::string name, int since, std::string domain = "");
// A copy of the newest version of `op` older than `since`, re-versioned as `since`. Throws InternalError when
// there is no older version (a bug in the hand-written tables).
SchemaEdit Derive(const SchemaRegistry& r, std::string_view op, int since, std::string_view domain = "");

// Common ONNX type groups (tensor element types), as of the opsets that introduced them.
namespace types {
extern const TypeList kFloat;         // float16, float, double
extern const TypeList kFloatBf;       // + bfloat16
extern const TypeList kIntSigned;     // int8..int64
extern const TypeList kIntUnsigned;   // uint8..uint64
extern const TypeList kInt;           // signed + unsigned
extern const TypeList kNumeric;       // kInt + kFloatBf
extern const TypeList kFloat8;        // float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz
extern const TypeList kInt4;          // int4, uint4
extern const TypeList kComplex;       // complex64, complex128
extern const TypeList kAllIr4;        // all tensor types of IR 4: numeric + bool + string + complex
extern const TypeList kAllIr9;        // kAllIr4 + float8
extern const TypeList kAllIr10;       // kAllIr9 + int4/uint4
extern const TypeList kAllIr11;       // kAllIr10 + float4e2m1
extern const TypeList kAllIr12;       // kAllIr11 + float8e8m0
extern const TypeList kAllIr13;       // kAllIr12 + int2/uint2
}  // namespace types

// Registered by the SchemaRegistry constructor after the generated tables.
void RegisterOpset18PlusSchemas(SchemaRegistry& r);
void RegisterFerrySchemas(SchemaRegistry& r);  // schemas_ferry.cc: domain ai.ferry
// schemas_ort_contrib.cc: ONNX Runtime's com.microsoft and com.microsoft.nchwc, and its default-domain versions
// below an op's first ONNX version (schemas_ort_contrib.h).
void RegisterOrtContribSchemas(SchemaRegistry& r);

}  // namespace ferry::schemas
