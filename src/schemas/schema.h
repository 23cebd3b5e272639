// Ferry's own operator schemas for opsets 1–28 (ai.onnx), ai.onnx.ml and ai.onnx.preview.training.
// Versions up to opset 17 are generated from Debian's libonnx at build time (schemas_generated.cc);
// newer versions are written by hand as data in schemas_opset18_plus.cc. The runtime reads only this registry.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/graph.h"

namespace ferry::schemas {

enum class ParamOption { kSingle, kOptional, kVariadic };

struct FormalParam {
  std::string name;
  std::string type_str;  // a type variable ("T") or a concrete type ("tensor(int64)")
  ParamOption option = ParamOption::kSingle;
  bool homogeneous = true;  // variadic: all arguments share one type
  int min_arity = 1;        // variadic: minimum count
};

struct AttrSchema {
  std::string name;
  ir::AttrType type = ir::AttrType::kUndefined;
  bool required = false;
  std::optional<ir::Attribute> default_value;
};

struct TypeConstraint {
  std::string var;
  std::vector<std::string> allowed;  // ONNX type strings: "tensor(float)", "seq(tensor(int64))", "optional(...)"
};

struct OpSchema;
class InferenceContext;  // schemas/shape_inference/context.h

// Static shape/type inference for one node: reads the input types (and constant or partially known input
// values) from the context and fills the output types. Unknown stays unknown; a proven inconsistency (a
// broadcast of 3 vs 4, MatMul inner dims that differ) calls ctx.Fail(). Set by RegisterShapeInference().
using InferenceFn = void (*)(InferenceContext& ctx);

struct OpSchema {
  std::string domain;  // "" = ai.onnx
  std::string name;
  int since_version = 1;
  bool deprecated = false;
  std::vector<FormalParam> inputs, outputs;
  std::vector<AttrSchema> attributes;
  std::vector<TypeConstraint> type_constraints;
  int min_inputs = 0, max_inputs = 0, min_outputs = 0, max_outputs = 0;  // INT_MAX for variadic
  InferenceFn infer = nullptr;  // may be empty
  // Reject attributes `attributes` does not list. Always so in the default domain; other built-in domains
  // tolerate unknown attributes as ONNX's checker does; plugin ops declare all of theirs.
  bool closed_attributes = false;

  const AttrSchema* FindAttr(std::string_view attr) const;
  const TypeConstraint* FindTypeConstraint(std::string_view var) const;
  // Type variable bound by input/output `index` ("" when the parameter has a concrete type).
  std::string InputTypeVar(size_t index) const;
  std::string OutputTypeVar(size_t index) const;
};

class SchemaRegistry {
 public:
  static const SchemaRegistry& Get();

  // The schema in effect for `op` in `domain` at `opset`: the one with the largest since_version <= opset.
  const OpSchema* Find(std::string_view domain, std::string_view op, int64_t opset) const;
  // All versions of one op, oldest first (empty if the op is unknown in that domain).
  std::vector<const OpSchema*> Versions(std::string_view domain, std::string_view op) const;
  const std::vector<OpSchema>& all() const { return schemas_; }
  // Highest opset version Ferry knows for a domain (0 if the domain is unknown).
  int64_t MaxOpset(std::string_view domain) const;

  void Add(OpSchema schema);  // used by the generated and hand-written tables; replaces an equal version
  // Sets the shape-inference function of every version of `op` in `domain` with since_version in
  // [since_min, since_max]; throws InternalError when no version matches (a typo in a registration list).
  void SetInference(std::string_view domain, std::string_view op, int since_min, InferenceFn fn,
                    int since_max = INT_MAX);
  // Declares that `domain` is known up to opset `version` even where that opset introduced no schema version.
  void SetMaxOpset(std::string_view domain, int64_t version);

  // Adds the schema of a custom op (a plugin's) for the rest of the process; Find, Versions and MaxOpset see it
  // from then on. Only domains Ferry has no built-in schemas for; `max_opset` is the newest opset of the domain
  // the op accepts. Thread-safe. Throws InvalidArgumentError for a built-in domain or an op version already added.
  static void AddExtension(OpSchema schema, int64_t max_opset);
  // True when Ferry's own tables define schemas for `domain` ("", ai.onnx.ml, ai.onnx.preview.training, ...).
  bool IsBuiltinDomain(std::string_view domain) const;

 private:
  SchemaRegistry();
  std::vector<OpSchema> schemas_;
  // domain -> op -> indices into schemas_, sorted by since_version.
  std::map<std::string, std::map<std::string, std::vector<size_t>, std::less<>>, std::less<>> index_;
  std::map<std::string, int64_t, std::less<>> max_opset_;
};

// Ferry's own operators (fused and blocked-layout ops the optimizer produces), schemas_ferry.cc.
inline constexpr std::string_view kFerryDomain = "ai.ferry";

// Canonical domain name: "ai.onnx" and "" are the same domain, returned as "".
std::string_view CanonicalDomain(std::string_view domain);

}  // namespace ferry::schemas
