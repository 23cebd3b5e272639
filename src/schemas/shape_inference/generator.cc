// Shape and element-type inference for ops that create tensors: Constant (every value attribute),
// ConstantOfShape (constant or propagated shape), Range (constant start/limit/delta), EyeLike, the random
// generators (dtype attribute), Multinomial and the window functions. Constant, ConstantOfShape and Range also
// propagate partial values.
#include <cmath>

#include "ferry/float16.h"
#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

void SetDtypeFromAttr(InferenceContext& ctx, std::string_view attr, DataType def) {
  const int64_t v = ctx.attr_int(attr, static_cast<int64_t>(def));
  if (IsKnownDataType(static_cast<int32_t>(v))) ctx.SetOutputElemType(0, static_cast<DataType>(v));
}

Dims StaticDims(const Shape& s) {
  Dims d;
  d.reserve(s.size());
  for (int64_t v : s) d.push_back(ir::Dim::Static(v));
  return d;
}

void Constant(InferenceContext& ctx) {
  const ir::Node& n = ctx.node();
  if (const ir::Attribute* a = n.attr("value"); a && a->t.defined()) {
    ctx.SetOutputElemType(0, a->t.dtype());
    ctx.SetOutputShape(0, StaticDims(a->t.shape()));
    if (auto v = PartialValueFromTensor(a->t)) ctx.SetOutputValue(0, std::move(*v));
  } else if (const ir::Attribute* a = n.attr("sparse_value"); a && a->t.defined()) {
    ctx.SetOutputElemType(0, a->t.dtype());
    ctx.SetOutputShape(0, StaticDims(a->t.shape()));
  } else if (const ir::Attribute* a = n.attr("value_int")) {
    ctx.SetOutputElemType(0, DataType::kInt64);
    ctx.SetOutputShape(0, {});
    ctx.SetOutputValue(0, PartialValue{true, {SymInt::Known(a->i)}});
  } else if (const ir::Attribute* a = n.attr("value_ints")) {
    ctx.SetOutputElemType(0, DataType::kInt64);
    ctx.SetOutputShape(0, {ir::Dim::Static(static_cast<int64_t>(a->ints.size()))});
    PartialValue v;
    for (int64_t x : a->ints) v.elems.push_back(SymInt::Known(x));
    ctx.SetOutputValue(0, std::move(v));
  } else if (n.has_attr("value_float")) {
    ctx.SetOutputElemType(0, DataType::kFloat);
    ctx.SetOutputShape(0, {});
  } else if (const ir::Attribute* a = n.attr("value_floats")) {
    ctx.SetOutputElemType(0, DataType::kFloat);
    ctx.SetOutputShape(0, {ir::Dim::Static(static_cast<int64_t>(a->floats.size()))});
  } else if (n.has_attr("value_string")) {
    ctx.SetOutputElemType(0, DataType::kString);
    ctx.SetOutputShape(0, {});
  } else if (const ir::Attribute* a = n.attr("value_strings")) {
    ctx.SetOutputElemType(0, DataType::kString);
    ctx.SetOutputShape(0, {ir::Dim::Static(static_cast<int64_t>(a->strings.size()))});
  }
}

void ConstantOfShape(InferenceContext& ctx) {
  std::optional<int64_t> fill;
  if (const ir::Attribute* a = ctx.node().attr("value"); a && a->t.defined()) {
    ctx.SetOutputElemType(0, a->t.dtype());
    if (a->t.size() == 1) {
      if (a->t.dtype() == DataType::kInt64) fill = a->t.data<int64_t>()[0];
      if (a->t.dtype() == DataType::kInt32) fill = a->t.data<int32_t>()[0];
    }
  } else {
    ctx.SetOutputElemType(0, DataType::kFloat);
  }
  Dims dims;
  if (const PartialValue* v = ctx.input_value(0)) {
    for (const SymInt& e : v->elems) {
      if (e.value && *e.value < 0) ctx.Fail("the shape input has a negative value " + std::to_string(*e.value));
      dims.push_back(e.ToDim());
    }
  } else if (const Dims* s = ctx.input_shape(0); s && s->size() == 1 && (*s)[0].is_static() &&
                                                  (*s)[0].value <= kMaxPartialValueElems) {
    dims.assign(static_cast<size_t>((*s)[0].value), UnknownDim());
  } else {
    return;
  }
  if (fill && dims.size() <= 1) {
    const ir::Dim n = dims.empty() ? ir::Dim::Static(1) : dims[0];
    if (n.is_static() && n.value <= kMaxPartialValueElems) {
      ctx.SetOutputValue(0, PartialValue{dims.empty(), std::vector<SymInt>(static_cast<size_t>(n.value),
                                                                           SymInt::Known(*fill))});
    }
  }
  ctx.SetOutputShape(0, std::move(dims));
}

// A constant scalar (or one-element) input as a double.
std::optional<double> ScalarInput(InferenceContext& ctx, size_t i) {
  const Tensor* t = ctx.input_constant(i);
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return t->data<double>()[0];
    case DataType::kFloat16: return static_cast<float>(t->data<Float16>()[0]);
    case DataType::kBFloat16: return static_cast<float>(t->data<BFloat16>()[0]);
    case DataType::kInt64: return static_cast<double>(t->data<int64_t>()[0]);
    case DataType::kInt32: return t->data<int32_t>()[0];
    case DataType::kInt16: return t->data<int16_t>()[0];
    default: return std::nullopt;
  }
}

void Range(InferenceContext& ctx) {
  // Integer inputs (possibly propagated, e.g. Range(0, Gather(Shape(x), 1), 1)) are exact.
  auto s = ctx.input_ints(0), l = ctx.input_ints(1), d = ctx.input_ints(2);
  if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1) {
    const int64_t start = (*s)[0], limit = (*l)[0], delta = (*d)[0];
    if (delta == 0) ctx.Fail("delta must not be 0");
    const double span = static_cast<double>(limit) - static_cast<double>(start);
    const double count = std::ceil(span / static_cast<double>(delta));
    if (!(count < 9.0e18)) {
      ctx.SetOutputShape(0, {UnknownDim()});
      return;
    }
    const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count));
    ctx.SetOutputShape(0, {ir::Dim::Static(n)});
    if (n <= kMaxPartialValueElems) {
      PartialValue v;
      std::optional<int64_t> x = start;
      for (int64_t k = 0; k < n && x; ++k, x = CheckedAdd(*x, delta)) v.elems.push_back(SymInt::Known(*x));
      if (static_cast<int64_t>(v.elems.size()) == n) ctx.SetOutputValue(0, std::move(v));
    }
    return;
  }
  auto fs = ScalarInput(ctx, 0), fl = ScalarInput(ctx, 1), fd = ScalarInput(ctx, 2);
  if (fs && fl && fd && *fd != 0) {
    const double n = std::ceil((*fl - *fs) / *fd);
    if (n < 9.0e18) {
      ctx.SetOutputShape(0, {ir::Dim::Static(n > 0 ? static_cast<int64_t>(n) : 0)});
      return;
    }
  }
  ctx.SetOutputShape(0, {UnknownDim()});
}

void EyeLike(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  if (ctx.has_attr("dtype")) SetDtypeFromAttr(ctx, "dtype", DataType::kUndefined);
  else ctx.SetOutputElemType(0, ctx.input_elem_type(0));
}

// RandomNormal, RandomUniform: the `shape` attribute, dtype float by default.
void RandomWithShape(InferenceContext& ctx) {
  SetDtypeFromAttr(ctx, "dtype", DataType::kFloat);
  if (ctx.has_attr("shape")) {
    Dims out;
    for (int64_t v : ctx.attr_ints("shape")) out.push_back(DimOf(v));
    ctx.SetOutputShape(0, std::move(out));
  }
}

// RandomNormalLike, RandomUniformLike, Bernoulli: the input's shape; dtype attribute or the input's type.
void RandomLike(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  if (ctx.has_attr("dtype")) SetDtypeFromAttr(ctx, "dtype", DataType::kUndefined);
  else if (ctx.input_elem_type(0) != DataType::kUndefined) ctx.SetOutputElemType(0, ctx.input_elem_type(0));
}

void Multinomial(InferenceContext& ctx) {
  SetDtypeFromAttr(ctx, "dtype", DataType::kInt32);
  const Dims* x = ctx.input_shape(0);
  ctx.SetOutputShape(0, {x && x->size() == 2 ? (*x)[0] : UnknownDim(),
                         DimOf(ctx.attr_int("sample_size", 1))});
}

// HannWindow, HammingWindow, BlackmanWindow: [size], output_datatype float by default.
void Window(InferenceContext& ctx) {
  SetDtypeFromAttr(ctx, "output_datatype", DataType::kFloat);
  auto size = ctx.input_ints(0);
  ctx.SetOutputShape(0, {size && size->size() == 1 && (*size)[0] >= 0 ? ir::Dim::Static((*size)[0]) : UnknownDim()});
}

}  // namespace

void RegisterGeneratorShapeInference(SchemaRegistry& r) {
  r.SetInference("", "Constant", 1, Constant);
  r.SetInference("", "ConstantOfShape", 1, ConstantOfShape);
  r.SetInference("", "Range", 1, Range);
  r.SetInference(kMsDomain, "Range", 1, Range);  // delta optional: without it the length stays unknown
  r.SetInference("", "EyeLike", 1, EyeLike);
  r.SetInference("", "RandomNormal", 1, RandomWithShape);
  r.SetInference("", "RandomUniform", 1, RandomWithShape);
  for (const char* op : {"RandomNormalLike", "RandomUniformLike", "Bernoulli"}) r.SetInference("", op, 1, RandomLike);
  r.SetInference("", "Multinomial", 1, Multinomial);
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) r.SetInference("", op, 1, Window);
}

}  // namespace ferry::schemas
