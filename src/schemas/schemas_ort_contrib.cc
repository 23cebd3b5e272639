#include "schemas/schemas_ort_contrib.h"

#include <string>

#include "schemas/op_origin.h"

namespace ferry::schemas {

SchemaEdit& AttrsOptional(SchemaEdit& s, ir::AttrType type, std::initializer_list<const char*> names) {
  for (const char* n : names) s.AttrOptional(n, type);
  return s;
}

void RegisterOrtContribSchemas(SchemaRegistry& r) {
  RegisterMsFusedSchemas(r);
  RegisterMsTransformerSchemas(r);
  RegisterMsTensorSchemas(r);
  RegisterMsQuantSchemas(r);
  RegisterMsLlmSchemas(r);
  RegisterMsNchwcSchemas(r);
  RegisterOrtDefaultDomainSchemas(r);
  r.SetMaxOpset(std::string(kMsDomain), 1);
  r.SetMaxOpset(std::string(kMsNchwcDomain), 1);
}

}  // namespace ferry::schemas
