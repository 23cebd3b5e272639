// The context a shape-inference function (OpSchema::infer) works in: the node, its schema, the input types,
// the constant or partially known values of small integer inputs, and the output types to fill. Also the small
// shape algebra the op families share: broadcasting, dim products, axis normalization, window sizes.
//
// Partial values follow ONNX's "data propagation": a 0-D or 1-D integer tensor that a shape computation builds
// (Shape -> Gather -> Concat -> Reshape) is tracked element by element as known integers or dimension symbols,
// so that Reshape, Expand, ConstantOfShape... see a target shape even when it is not an initializer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/checked_int.h"
#include "ir/graph.h"
#include "schemas/schema.h"
#include "semantics/broadcast.h"

namespace ferry::schemas {

// One element of a partially known integer tensor: a known value, a dimension symbol, or unknown.
struct SymInt {
  std::optional<int64_t> value;
  std::string symbol;  // when !value: the symbol of the dim it equals, "" if unknown

  static SymInt Known(int64_t v) { return SymInt{v, {}}; }
  static SymInt FromDim(const ir::Dim& d);
  bool known() const { return value.has_value(); }
  // A dim: known values >= 0 are static, symbols symbolic, anything else unknown.
  ir::Dim ToDim() const;
  bool operator==(const SymInt&) const = default;
};

// The value of a 0-D or 1-D integer tensor, element by element.
struct PartialValue {
  bool scalar = false;  // rank 0 (then elems has one entry)
  std::vector<SymInt> elems;

  // The values when all are known.
  std::optional<std::vector<int64_t>> Ints() const;
};

// Tensors whose values are tracked: integer element type, rank <= 1, at most this many elements.
inline constexpr int64_t kMaxPartialValueElems = 256;

// The partial value of a constant tensor: all elements known; nullopt unless it is a small integer tensor.
std::optional<PartialValue> PartialValueFromTensor(const Tensor& t);

// Infers the types of a subgraph's outputs given types for its inputs (nullptr: keep what is declared).
using SubgraphInferrer =
    std::function<std::vector<ir::TypeInfo>(const ir::Graph& graph, const std::vector<const ir::TypeInfo*>& inputs)>;

class InferenceContext {
 public:
  InferenceContext(const ir::Node& node, const OpSchema& schema, std::string_view model_description)
      : node_(node), schema_(schema), model_(model_description) {}

  const ir::Node& node() const { return node_; }
  const OpSchema& schema() const { return schema_; }
  int64_t opset() const { return node_.opset(); }

  // --- inputs ---
  // Filled by the caller: one entry per node input, nullptr when omitted or unknown.
  std::vector<const ir::TypeInfo*> inputs;
  std::vector<const PartialValue*> input_values;

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return node_.input(i) != nullptr; }
  const ir::TypeInfo* input_type(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // The input's dims when it is a tensor of known rank, else nullptr.
  const std::vector<ir::Dim>* input_shape(size_t i) const;
  int64_t input_rank(size_t i) const;  // -1 when unknown
  DataType input_elem_type(size_t i) const;
  // The input's value when it is an initializer or a Constant node's output (value attribute), else nullptr.
  const Tensor* input_constant(size_t i) const;
  const PartialValue* input_value(size_t i) const { return i < input_values.size() ? input_values[i] : nullptr; }
  // The integer values of the input when all are known (constant or propagated).
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;
  // The floating-point values of a constant float/double/float16/bfloat16 input.
  std::optional<std::vector<float>> input_floats(size_t i) const;

  // --- attributes, with the schema's defaults ---
  bool has_attr(std::string_view name) const { return node_.has_attr(name); }
  int64_t attr_int(std::string_view name, int64_t def) const;
  float attr_float(std::string_view name, float def) const;
  std::string attr_string(std::string_view name, const std::string& def) const;
  std::vector<int64_t> attr_ints(std::string_view name) const;  // empty when absent without default
  std::vector<float> attr_floats(std::string_view name) const;

  // --- outputs ---
  // Prefilled by the caller with the schema's element types; one entry per node output.
  std::vector<ir::TypeInfo> outputs;
  std::vector<std::optional<PartialValue>> output_values;

  size_t num_outputs() const { return outputs.size(); }
  ir::TypeInfo& output(size_t i) { return outputs[i]; }
  // Makes output i a tensor (keeping a known element type) with these dims.
  void SetOutputShape(size_t i, std::vector<ir::Dim> dims);
  void SetOutputElemType(size_t i, DataType t);
  // Output i gets input j's shape (when known); the element type is left as the schema gave it.
  void PropagateShape(size_t in, size_t out);
  void SetOutputValue(size_t i, PartialValue v);

  // --- subgraphs ---
  SubgraphInferrer infer_subgraph;  // may be empty
  std::vector<const ir::Graph*> visited_subgraphs;
  std::vector<ir::TypeInfo> InferSubgraph(const ir::Graph& g, const std::vector<const ir::TypeInfo*>& input_types);

  // Throws InvalidModelError naming the model, node, op and opset: the model can never run as declared.
  [[noreturn]] void Fail(const std::string& message) const;
  // "float32[N,3,224,224]" for input i ("?" when unknown), for messages.
  std::string InputString(size_t i) const;

 private:
  const ir::Node& node_;
  const OpSchema& schema_;
  std::string_view model_;
};

// --- shape algebra ---

using Dims = std::vector<ir::Dim>;

std::string DimsToString(std::span<const ir::Dim> dims);
inline ir::Dim UnknownDim() { return ir::Dim{}; }
// A static dim for v >= 0 (attribute values, constants), else unknown.
inline ir::Dim DimOf(int64_t v) { return v >= 0 ? ir::Dim::Static(v) : ir::Dim{}; }
bool IsOne(const ir::Dim& d);
// The multidirectional broadcast of two dims; sets *conflict when both are static, differ and neither is 1
// (semantics/broadcast.h, the kernels' rule).
using semantics::BroadcastDim;
// Broadcasts the shapes of the given inputs; nullopt when a rank is unknown. Fails on static conflicts.
std::optional<Dims> BroadcastInputs(InferenceContext& ctx, std::span<const size_t> indices);
// Merges two dims known to be equal: static wins over symbolic over unknown; sets *conflict on two different
// static values.
ir::Dim MergeDim(const ir::Dim& a, const ir::Dim& b, bool* conflict);
// The product of dims: static when all are, the one non-static dim when the others multiply to 1, else unknown.
// Overflow gives unknown.
ir::Dim DimProduct(std::span<const ir::Dim> dims);
// a * b when both are static (and the product fits), else unknown; a * 1 keeps a.
ir::Dim MulDim(const ir::Dim& a, int64_t b);
// Normalizes `axis` into [0, rank); Fails naming `what` when out of range.
int64_t NormalizeAxis(InferenceContext& ctx, int64_t axis, int64_t rank, std::string_view what);
// Checked arithmetic (model attributes and dims are untrusted): nullopt on overflow (core/checked_int.h).
using ferry::CheckedAdd;
using ferry::CheckedMul;

}  // namespace ferry::schemas
