#include "schemas/shape_inference/context.h"

#include <algorithm>

#include "ferry/error.h"
#include "ferry/float16.h"

namespace ferry::schemas {

// --- SymInt / PartialValue ---

SymInt SymInt::FromDim(const ir::Dim& d) {
  if (d.is_static()) return Known(d.value);
  return SymInt{std::nullopt, d.symbol};
}

ir::Dim SymInt::ToDim() const {
  if (value) return *value >= 0 ? ir::Dim::Static(*value) : ir::Dim{};
  return ir::Dim::Symbolic(symbol);
}

std::optional<std::vector<int64_t>> PartialValue::Ints() const {
  std::vector<int64_t> out;
  out.reserve(elems.size());
  for (const SymInt& e : elems) {
    if (!e.value) return std::nullopt;
    out.push_back(*e.value);
  }
  return out;
}

std::optional<PartialValue> PartialValueFromTensor(const Tensor& t) {
  if (t.rank() > 1 || t.size() > kMaxPartialValueElems) return std::nullopt;
  PartialValue v;
  v.scalar = t.rank() == 0;
  v.elems.reserve(static_cast<size_t>(t.size()));
  auto fill = [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t k = 0; k < t.size(); ++k) v.elems.push_back(SymInt::Known(static_cast<int64_t>(p[k])));
  };
  switch (t.dtype()) {
    case DataType::kInt64: fill(int64_t{}); break;
    case DataType::kInt32: fill(int32_t{}); break;
    case DataType::kInt16: fill(int16_t{}); break;
    case DataType::kInt8: fill(int8_t{}); break;
    case DataType::kUint8: fill(uint8_t{}); break;
    case DataType::kUint16: fill(uint16_t{}); break;
    case DataType::kUint32: fill(uint32_t{}); break;
    default: return std::nullopt;  // uint64 may not fit; floats, bools and strings are not tracked
  }
  return v;
}

// --- InferenceContext: inputs ---

const std::vector<ir::Dim>* InferenceContext::input_shape(size_t i) const {
  const ir::TypeInfo* t = input_type(i);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || !t->shape) return nullptr;
  return &*t->shape;
}

int64_t InferenceContext::input_rank(size_t i) const {
  const auto* s = input_shape(i);
  return s ? static_cast<int64_t>(s->size()) : -1;
}

DataType InferenceContext::input_elem_type(size_t i) const {
  const ir::TypeInfo* t = input_type(i);
  return t && t->kind == ir::TypeInfo::Kind::kTensor ? t->elem_type : DataType::kUndefined;
}

const Tensor* InferenceContext::input_constant(size_t i) const {
  const ir::Value* v = node_.input(i);
  if (!v) return nullptr;
  if (v->initializer()) return v->initializer();
  const ir::Node* p = v->producer();
  if (!p || p->op_type() != "Constant" || !CanonicalDomain(p->domain()).empty() || p->num_outputs() != 1) {
    return nullptr;
  }
  const ir::Attribute* a = p->attr("value");
  if (!a || a->type != ir::AttrType::kTensor || !a->t.defined()) return nullptr;
  return &a->t;
}

std::optional<std::vector<int64_t>> InferenceContext::input_ints(size_t i) const {
  if (const PartialValue* v = input_value(i)) return v->Ints();
  return std::nullopt;
}

std::optional<std::vector<float>> InferenceContext::input_floats(size_t i) const {
  const Tensor* t = input_constant(i);
  if (!t || t->rank() > 1) return std::nullopt;
  std::vector<float> out(static_cast<size_t>(t->size()));
  switch (t->dtype()) {
    case DataType::kFloat: std::copy_n(t->data<float>(), t->size(), out.begin()); break;
    case DataType::kDouble:
      for (int64_t k = 0; k < t->size(); ++k) out[k] = static_cast<float>(t->data<double>()[k]);
      break;
    case DataType::kFloat16:
      for (int64_t k = 0; k < t->size(); ++k) out[k] = static_cast<float>(t->data<Float16>()[k]);
      break;
    case DataType::kBFloat16:
      for (int64_t k = 0; k < t->size(); ++k) out[k] = static_cast<float>(t->data<BFloat16>()[k]);
      break;
    default: return std::nullopt;
  }
  return out;
}

// --- InferenceContext: attributes ---

namespace {

const ir::Attribute* SchemaDefault(const OpSchema& s, std::string_view name) {
  const AttrSchema* a = s.FindAttr(name);
  return a && a->default_value ? &*a->default_value : nullptr;
}

}  // namespace

int64_t InferenceContext::attr_int(std::string_view name, int64_t def) const {
  if (const ir::Attribute* a = node_.attr(name); a && a->type == ir::AttrType::kInt) return a->i;
  if (const ir::Attribute* a = SchemaDefault(schema_, name); a && a->type == ir::AttrType::kInt) return a->i;
  return def;
}

float InferenceContext::attr_float(std::string_view name, float def) const {
  if (const ir::Attribute* a = node_.attr(name); a && a->type == ir::AttrType::kFloat) return a->f;
  if (const ir::Attribute* a = SchemaDefault(schema_, name); a && a->type == ir::AttrType::kFloat) return a->f;
  return def;
}

std::string InferenceContext::attr_string(std::string_view name, const std::string& def) const {
  if (const ir::Attribute* a = node_.attr(name); a && a->type == ir::AttrType::kString) return a->s;
  if (const ir::Attribute* a = SchemaDefault(schema_, name); a && a->type == ir::AttrType::kString) return a->s;
  return def;
}

std::vector<int64_t> InferenceContext::attr_ints(std::string_view name) const {
  if (const ir::Attribute* a = node_.attr(name); a && a->type == ir::AttrType::kInts) return a->ints;
  if (const ir::Attribute* a = SchemaDefault(schema_, name); a && a->type == ir::AttrType::kInts) return a->ints;
  return {};
}

std::vector<float> InferenceContext::attr_floats(std::string_view name) const {
  if (const ir::Attribute* a = node_.attr(name); a && a->type == ir::AttrType::kFloats) return a->floats;
  if (const ir::Attribute* a = SchemaDefault(schema_, name); a && a->type == ir::AttrType::kFloats) return a->floats;
  return {};
}

// --- InferenceContext: outputs ---

void InferenceContext::SetOutputShape(size_t i, std::vector<ir::Dim> dims) {
  if (i >= outputs.size()) return;
  ir::TypeInfo& t = outputs[i];
  if (t.kind != ir::TypeInfo::Kind::kTensor && t.kind != ir::TypeInfo::Kind::kSparseTensor) {
    t = ir::TypeInfo::Tensor(DataType::kUndefined);
  }
  t.shape = std::move(dims);
}

void InferenceContext::SetOutputElemType(size_t i, DataType dt) {
  if (i >= outputs.size()) return;
  ir::TypeInfo& t = outputs[i];
  if (t.kind != ir::TypeInfo::Kind::kTensor) t = ir::TypeInfo::Tensor(DataType::kUndefined);
  t.elem_type = dt;
}

void InferenceContext::PropagateShape(size_t in, size_t out) {
  if (const auto* s = input_shape(in)) SetOutputShape(out, *s);
}

void InferenceContext::SetOutputValue(size_t i, PartialValue v) {
  if (i >= outputs.size() || v.elems.size() > static_cast<size_t>(kMaxPartialValueElems)) return;
  if (output_values.size() < outputs.size()) output_values.resize(outputs.size());
  output_values[i] = std::move(v);
}

std::vector<ir::TypeInfo> InferenceContext::InferSubgraph(const ir::Graph& g,
                                                          const std::vector<const ir::TypeInfo*>& input_types) {
  visited_subgraphs.push_back(&g);
  if (!infer_subgraph) {
    std::vector<ir::TypeInfo> out;
    for (const ir::Value* v : g.outputs()) out.push_back(v->type());
    return out;
  }
  return infer_subgraph(g, input_types);
}

void InferenceContext::Fail(const std::string& message) const {
  std::string op = (schema_.domain.empty() ? "" : schema_.domain + "::") + schema_.name;
  throw InvalidModelError(std::string(model_) + ": " + node_.Describe() + " [" + op + " at opset " +
                          std::to_string(node_.opset()) + "]: shape inference: " + message);
}

std::string InferenceContext::InputString(size_t i) const {
  const ir::TypeInfo* t = input_type(i);
  std::string name = node_.input(i) ? "'" + node_.input(i)->name() + "' " : std::string();
  return name + (t ? t->ToString() : std::string("?"));
}

// --- shape algebra ---

std::string DimsToString(std::span<const ir::Dim> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    const ir::Dim& d = dims[i];
    s += d.is_static() ? std::to_string(d.value) : (d.symbol.empty() ? "?" : d.symbol);
  }
  return s + "]";
}

bool IsOne(const ir::Dim& d) { return d.is_static() && d.value == 1; }

std::optional<Dims> BroadcastInputs(InferenceContext& ctx, std::span<const size_t> indices) {
  size_t rank = 0;
  for (size_t i : indices) {
    if (!ctx.has_input(i)) continue;
    const Dims* s = ctx.input_shape(i);
    if (!s) return std::nullopt;
    rank = std::max(rank, s->size());
  }
  Dims out(rank, ir::Dim::Static(1));
  for (size_t i : indices) {
    if (!ctx.has_input(i)) continue;
    const Dims& s = *ctx.input_shape(i);
    const size_t off = rank - s.size();
    for (size_t k = 0; k < s.size(); ++k) {
      bool conflict = false;
      ir::Dim d = BroadcastDim(out[off + k], s[k], &conflict);
      if (conflict) {
        std::string shapes;
        for (size_t j : indices) {
          if (ctx.has_input(j)) shapes += (shapes.empty() ? "" : ", ") + ctx.InputString(j);
        }
        ctx.Fail("inputs cannot be broadcast together: dim " + std::to_string(out[off + k].value) + " vs " +
                 std::to_string(s[k].value) + " (input shapes " + shapes + ")");
      }
      out[off + k] = std::move(d);
    }
  }
  return out;
}

ir::Dim MergeDim(const ir::Dim& a, const ir::Dim& b, bool* conflict) {
  if (a.is_static() && b.is_static()) {
    if (a.value != b.value) *conflict = true;
    return a;
  }
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  if (!a.symbol.empty()) return a;
  return b;
}

ir::Dim DimProduct(std::span<const ir::Dim> dims) {
  int64_t prod = 1;
  const ir::Dim* other = nullptr;
  int non_static = 0;
  for (const ir::Dim& d : dims) {
    if (d.is_static()) {
      auto p = CheckedMul(prod, d.value);
      if (!p) return ir::Dim{};
      prod = *p;
    } else {
      ++non_static;
      other = &d;
    }
  }
  if (non_static == 0) return ir::Dim::Static(prod);
  if (prod == 0) return ir::Dim::Static(0);
  if (non_static == 1 && prod == 1) return *other;
  return ir::Dim{};
}

ir::Dim MulDim(const ir::Dim& a, int64_t b) {
  if (b == 1) return a;
  if (b == 0) return ir::Dim::Static(0);
  if (!a.is_static()) return ir::Dim{};
  auto p = CheckedMul(a.value, b);
  return p ? ir::Dim::Static(*p) : ir::Dim{};
}

int64_t NormalizeAxis(InferenceContext& ctx, int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank) {
    ctx.Fail(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) +
             " (input " + ctx.InputString(0) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace ferry::schemas
