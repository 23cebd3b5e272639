// Shared helpers for the hand-written schema tables (schemas_opset*.cc, schemas_ml_preview.cc).
#pragma once

#include "schemas/schema_builder.h"

namespace ferry::schemas {

// Adds `add` (tensor types) to every "all tensor types" constraint of `s` (one that allows both tensor(bool) and
// tensor(uint8)), and the seq(...)/optional(...) wrappings where the constraint already allows such types. This is
// how ONNX's IR-version type expansions (float8, int4, float4e2m1, float8e8m0, int2) extend existing ops.
SchemaEdit ExpandAllTypes(SchemaEdit s, const TypeList& add);
// Adds tensor(bfloat16) to every constraint that allows tensor(float) (the opset 22 expansion).
SchemaEdit AddBfloat16(SchemaEdit s);
// Registers version `since` of every op that takes "all tensor types" (Cast, Identity, Reshape, ...), each derived
// from its previous version with ExpandAllTypes(`add`).
void ExpandAllTypeOps(SchemaRegistry& r, int since, const TypeList& add);

void RegisterOpset18Schemas(SchemaRegistry& r);
void RegisterOpset19Schemas(SchemaRegistry& r);
void RegisterOpset20Schemas(SchemaRegistry& r);
void RegisterOpset21Schemas(SchemaRegistry& r);
void RegisterOpset22Schemas(SchemaRegistry& r);
void RegisterOpset23Schemas(SchemaRegistry& r);
void RegisterOpset24To28Schemas(SchemaRegistry& r);
void RegisterMlAndPreviewSchemas(SchemaRegistry& r);

}  // namespace ferry::schemas
