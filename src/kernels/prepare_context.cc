// PrepareContext (kernel.h): the input specs a kernel's Prepare reads and the outputs, workspace and state it
// declares, and the schema-derived default of OpKernel::Prepare.
#include <optional>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "kernels/kernel.h"
#include "schemas/schema.h"
#include "schemas/shape_inference/context.h"
#include "schemas/validate.h"

namespace ferry {

InputSpec InputSpec::Of(const Value* v, const Tensor* data) {
  InputSpec s;
  if (!v || v->is_none()) return s;
  if (!v->is_tensor()) {
    s.kind = Kind::kOther;
    return s;
  }
  s.kind = Kind::kTensor;
  s.dtype = v->tensor().dtype();
  s.shape = v->tensor().shape();
  s.data = data;
  return s;
}

PrepareContext::PrepareContext(const ir::Node& node, std::span<const InputSpec> inputs, const KernelOptions& options,
                               std::string_view model)
    : node_(node), inputs_(inputs), options_(options), model_(model) {
  prepared_.outputs.resize(node.num_outputs());
}

std::string PrepareContext::Describe() const {
  return model_.empty() ? node_.Describe() : std::string(model_) + ": " + node_.Describe();
}

const InputSpec& PrepareContext::input(int i) const {
  static const InputSpec kAbsent;
  return i >= 0 && static_cast<size_t>(i) < inputs_.size() ? inputs_[static_cast<size_t>(i)] : kAbsent;
}

const InputSpec& PrepareContext::tensor_input(int i) const {
  const InputSpec& s = input(i);
  if (s.kind == InputSpec::Kind::kAbsent) {
    throw InvalidModelError(Describe() + ": required input " + std::to_string(i) + " is missing");
  }
  if (s.kind != InputSpec::Kind::kTensor) {
    throw InvalidArgumentError(Describe() + ": input " + std::to_string(i) + " must be a tensor, got a sequence");
  }
  return s;
}

void PrepareContext::SetOutput(int i, DataType dtype, Shape shape) {
  OutputSpec& o = output(i);
  o.kind = OutputSpec::Kind::kTensor;
  o.dtype = dtype;
  o.shape = std::move(shape);
}

void PrepareContext::SetOutputValue(int i, Tensor value) {
  SetOutput(i, value.dtype(), value.shape());
  output(i).value = std::make_shared<const Tensor>(std::move(value));
}

void PrepareContext::SetOutputDynamic(int i) { output(i) = OutputSpec{}; }

std::string PrepareContext::InputString(int i) const {
  const ir::Value* v = i >= 0 && static_cast<size_t>(i) < node_.num_inputs() ? node_.input(i) : nullptr;
  std::string s = "input " + std::to_string(i) + (v ? " '" + v->name() + "'" : std::string());
  const InputSpec& in = input(i);
  switch (in.kind) {
    case InputSpec::Kind::kAbsent: return s + " (absent)";
    case InputSpec::Kind::kOther: return s + " (not a tensor)";
    case InputSpec::Kind::kTensor: break;
  }
  return s + " " + std::string(DataTypeName(in.dtype)) + ShapeToString(in.shape);
}

namespace {

ir::TypeInfo TypeOf(const InputSpec& s) {
  std::vector<ir::Dim> dims;
  dims.reserve(s.shape.size());
  for (int64_t d : s.shape) dims.push_back(ir::Dim::Static(d));
  return ir::TypeInfo::Tensor(s.dtype, std::move(dims));
}

// The spec of an inferred type: a tensor whose element type and every dim are known, else nullopt.
std::optional<Shape> StaticShapeOf(const ir::TypeInfo& t) {
  if (!t.is_tensor() || t.elem_type == DataType::kUndefined || !t.shape) return std::nullopt;
  Shape shape;
  shape.reserve(t.shape->size());
  for (const ir::Dim& d : *t.shape) {
    if (!d.is_static()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

// The int64 tensor of fully known partial values (shape arithmetic), as the op's output dtype.
std::optional<Tensor> TensorOfValue(const schemas::PartialValue& v, DataType dtype, const Shape& shape) {
  const auto ints = v.Ints();
  if (!ints || (dtype != DataType::kInt64 && dtype != DataType::kInt32)) return std::nullopt;
  if (ShapeElementCount(shape) != static_cast<int64_t>(ints->size())) return std::nullopt;
  Tensor t(dtype, shape);
  for (size_t k = 0; k < ints->size(); ++k) {
    if (dtype == DataType::kInt64) {
      t.data<int64_t>()[k] = (*ints)[k];
    } else {
      t.data<int32_t>()[k] = static_cast<int32_t>((*ints)[k]);
    }
  }
  return t;
}

}  // namespace

void PrepareContext::InferOutputsFromSchema() {
  for (auto& o : prepared_.outputs) o = OutputSpec{};
  if (!node_.subgraphs().empty()) return;  // If/Loop/Scan: what the body makes is known when it has run
  const std::string_view domain = schemas::CanonicalDomain(node_.domain());
  const schemas::OpSchema* schema = schemas::SchemaRegistry::Get().Find(domain, node_.op_type(), node_.opset());
  if (!schema || !schemas::ValidateNodeAgainstSchema(node_, *schema).empty()) return;  // a custom op: no facts
  std::vector<ir::TypeInfo> types(node_.num_inputs());
  std::vector<std::optional<schemas::PartialValue>> values(node_.num_inputs());
  schemas::InferenceContext ctx(node_, *schema, model_);
  for (size_t k = 0; k < node_.num_inputs(); ++k) {
    const InputSpec& s = input(static_cast<int>(k));
    const bool tensor = s.is_tensor();
    if (tensor) types[k] = TypeOf(s);
    if (tensor && s.data) values[k] = schemas::PartialValueFromTensor(*s.data);
    ctx.inputs.push_back(tensor ? &types[k] : nullptr);
    ctx.input_values.push_back(values[k] ? &*values[k] : nullptr);
  }
  ctx.outputs.resize(node_.num_outputs());
  schemas::InferOutputElementTypes(node_, *schema, ctx.inputs, ctx.outputs);
  if (!schema->infer) return;
  try {
    schema->infer(ctx);
  } catch (const InvalidModelError&) {
    throw;  // the inputs can never be valid for this node: the kernel's check, named by the schema
  } catch (const std::exception&) {
    return;  // a limitation of the inference function: the outputs stay dynamic
  }
  for (size_t i = 0; i < node_.num_outputs() && i < ctx.outputs.size(); ++i) {
    const std::optional<Shape> shape = StaticShapeOf(ctx.outputs[i]);
    if (!shape) continue;
    const int out = static_cast<int>(i);
    SetOutput(out, ctx.outputs[i].elem_type, *shape);
    if (i < ctx.output_values.size() && ctx.output_values[i]) {
      if (auto t = TensorOfValue(*ctx.output_values[i], ctx.outputs[i].elem_type, *shape)) {
        output(out).value = std::make_shared<const Tensor>(std::move(*t));
      }
    }
  }
}

}  // namespace ferry
