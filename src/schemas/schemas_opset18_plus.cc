// Operator schema versions newer than Debian's libonnx 1.12 (default-domain opsets 18-28, and newer versions in
// ai.onnx.ml / ai.onnx.preview.training / ai.onnx.preview), written as data. Each opset group lives in its own
// file; this one holds the entry point and the shared edit helpers. Versions are registered oldest first, since
// Derive() copies the newest older version.
#include <algorithm>

#include "schemas/schema_opset_helpers.h"

namespace ferry::schemas {

namespace {

bool Allows(const TypeConstraint& tc, std::string_view type) {
  return std::find(tc.allowed.begin(), tc.allowed.end(), type) != tc.allowed.end();
}

bool AllowsPrefix(const TypeConstraint& tc, std::string_view prefix) {
  return std::any_of(tc.allowed.begin(), tc.allowed.end(),
                     [&](const std::string& t) { return t.starts_with(prefix); });
}

}  // namespace

SchemaEdit ExpandAllTypes(SchemaEdit s, const TypeList& add) {
  for (auto& tc : s.type_constraints) {
    bool all_tensors = Allows(tc, "tensor(bool)") && Allows(tc, "tensor(uint8)");
    bool seqs = AllowsPrefix(tc, "seq(tensor(");
    bool optionals = AllowsPrefix(tc, "optional(tensor(");
    if (!all_tensors && !seqs && !optionals) continue;
    TypeList extra;
    if (all_tensors) extra = Concat({extra, add});
    if (seqs) extra = Concat({extra, Wrap("seq", add)});
    if (optionals) extra = Concat({extra, Wrap("optional", add)});
    s.AddTypes(tc.var, extra);
  }
  return s;
}

SchemaEdit AddBfloat16(SchemaEdit s) {
  for (auto& tc : s.type_constraints) {
    if (Allows(tc, "tensor(float)")) s.AddTypes(tc.var, Types({"bfloat16"}));
  }
  return s;
}

void RegisterOpset18PlusSchemas(SchemaRegistry& r) {
  RegisterOpset18Schemas(r);
  RegisterOpset19Schemas(r);
  RegisterOpset20Schemas(r);
  RegisterOpset21Schemas(r);
  RegisterOpset22Schemas(r);
  RegisterOpset23Schemas(r);
  RegisterOpset24To28Schemas(r);
  RegisterMlAndPreviewSchemas(r);
  r.SetMaxOpset("", 28);
  r.SetMaxOpset("ai.onnx.ml", 5);
  r.SetMaxOpset("ai.onnx.preview.training", 1);
  r.SetMaxOpset("ai.onnx.preview", 1);
}

}  // namespace ferry::schemas
