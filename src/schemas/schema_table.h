// Compact, POD-only tables of operator schemas. The schema generator (tools/schema_gen) emits its output in
// this form so that the generated source compiles quickly; AddSchemaTable() turns a table into OpSchemas.
// All strings are indices into `strings`; list-valued fields are (begin, count) ranges into the pools.
#pragma once

#include <cstdint>

namespace ferry::schemas {

class SchemaRegistry;

struct TableParam {
  uint16_t name, type_str;
  uint8_t option;  // ParamOption
  uint8_t homogeneous;
  uint16_t min_arity;
};

struct TableAttr {
  uint16_t name;
  uint8_t type;  // ir::AttrType
  uint8_t required;
  uint8_t has_default;
  // Default value: kFloat/kFloats -> floats pool; kInt/kInts -> ints pool; kString/kStrings -> string_lists pool.
  int32_t begin, count;
};

struct TableConstraint {
  uint16_t var;
  int32_t begin, count;  // into string_lists
};

struct TableSchema {
  uint16_t domain, name;
  int16_t since_version;
  uint8_t deprecated;
  int32_t in_begin, in_count, out_begin, out_count, attr_begin, attr_count, tc_begin, tc_count;
  int32_t min_inputs, max_inputs, min_outputs, max_outputs;
};

struct SchemaTable {
  const char* const* strings;
  const int64_t* ints;
  const float* floats;
  const uint16_t* string_lists;
  const TableParam* params;
  const TableAttr* attrs;
  const TableConstraint* constraints;
  const TableSchema* schemas;
  int32_t num_schemas;
};

void AddSchemaTable(SchemaRegistry& registry, const SchemaTable& table);

// Defined in the generated source (build/generated/schemas_generated.cc).
void RegisterGeneratedSchemas(SchemaRegistry& registry);

}  // namespace ferry::schemas
