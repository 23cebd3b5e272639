// Checking a node against its operator schema, and generic element-type propagation through the schema's
// type variables.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "schemas/schema.h"

namespace ferry::schemas {

// "" when `node` is a valid use of `schema`, else the first problem found, naming the node, op and opset:
// a deprecated op, input/output counts out of range, a missing required input/output, an unknown attribute
// (default domain and closed_attributes schemas only: other domains' unknown attributes are tolerated, as
// ONNX's checker does for custom ops), an attribute of the wrong type, or a missing required attribute.
std::string ValidateNodeAgainstSchema(const ir::Node& node, const OpSchema& schema);

// Parses an ONNX type string: "tensor(float)", "seq(tensor(int64))", "optional(seq(tensor(bool)))",
// "sparse_tensor(float)", "map(string,tensor(int64))". nullopt when malformed or the element type is unknown.
std::optional<ir::TypeInfo> ParseTypeString(std::string_view type_str);

// The element type bound to type variable `var` by the node's inputs (the first known input whose formal
// parameter uses `var`), or, when no input binds it and the constraint allows exactly one tensor type, that type.
// kUndefined when unknown. `inputs[i]` may be nullptr (omitted or unknown input).
DataType ResolveTypeVar(const OpSchema& schema, std::string_view var, const std::vector<const ir::TypeInfo*>& inputs);

// Fills the still-unknown entries of `outputs` (resized to node.num_outputs()) from the schema alone: an output
// whose formal type is a concrete type string gets that type; one bound to a type variable gets the type of an
// input bound to the same variable, or the variable's only allowed type. Shapes are not inferred. Outputs whose
// type depends on an attribute (Cast's `to`, ...) stay unknown.
void InferOutputElementTypes(const ir::Node& node, const OpSchema& schema,
                             const std::vector<const ir::TypeInfo*>& inputs, std::vector<ir::TypeInfo>& outputs);

}  // namespace ferry::schemas
