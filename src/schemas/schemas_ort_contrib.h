// ONNX Runtime's contrib operator schemas, as data: the domains com.microsoft and com.microsoft.nchwc (opset 1:
// ONNX Runtime registers every contrib op at since_version 1) and its default-domain registrations below an
// op's first ONNX version. Taken from ONNX Runtime's docs/ContribOperators.md and its schema definitions:
// inputs and outputs in order with their optionality, attributes with ONNX Runtime's schema defaults (an
// attribute whose default ONNX Runtime applies in its kernels, not in the schema, is optional without a default
// here too), type constraints as ONNX Runtime writes them. Schemas only: which backend runs an op is the kernel
// registries' business (`ferry ops --domain com.microsoft`).
#pragma once

#include "schemas/schema_builder.h"

namespace ferry::schemas {

// One per file; RegisterOrtContribSchemas (schema_builder.h) calls them all.
void RegisterMsFusedSchemas(SchemaRegistry& r);           // schemas_com_microsoft_fused.cc: fusions, activations
void RegisterMsTransformerSchemas(SchemaRegistry& r);     // schemas_com_microsoft_transformer.cc: norms, attention
void RegisterMsTensorSchemas(SchemaRegistry& r);          // schemas_com_microsoft_tensor.cc: tensor and misc ops
void RegisterMsQuantSchemas(SchemaRegistry& r);           // schemas_com_microsoft_quant.cc: quantized ops
void RegisterMsLlmSchemas(SchemaRegistry& r);             // schemas_com_microsoft_llm.cc: LLM attention, decoding
void RegisterMsNchwcSchemas(SchemaRegistry& r);           // schemas_com_microsoft_nchwc.cc: com.microsoft.nchwc
void RegisterOrtDefaultDomainSchemas(SchemaRegistry& r);  // schemas_ort_default_domain.cc

// Shared by the files above.
// Adds each of `names` as an optional attribute of `type` without a default (ONNX Runtime's OPTIONAL_VALUE).
SchemaEdit& AttrsOptional(SchemaEdit& s, ir::AttrType type, std::initializer_list<const char*> names);
// SimplifiedLayerNormalization-1 in `domain`: ONNX Runtime registers it in the default domain, and models carry it
// under com.microsoft too (schemas_ort_default_domain.cc).
SchemaEdit SimplifiedLayerNormalizationSchema(std::string domain);

}  // namespace ferry::schemas
