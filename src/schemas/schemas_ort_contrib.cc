#include "schemas/schemas_ort_contrib.h"

#include <string>

#include "schemas/op_origin.h"

namespace ferry::schemas {

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
