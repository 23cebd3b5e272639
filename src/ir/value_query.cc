// The value queries: rank, dims, element type and constant contents of a value, from its type and initializer.
#include "ir/value_query.h"

#include <algorithm>

#include "ferry/float16.h"

namespace ferry::ir {

// ---- rank ---------------------------------------------------------------------------------------------------

std::optional<int64_t> TypeRank(const Value* v) { return v ? v->type().rank() : std::nullopt; }

std::optional<int64_t> KnownRank(const Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) return t->rank();
  return v->type().rank();
}

int64_t RankOrMinusOne(const Value* v) { return KnownRank(v).value_or(-1); }

// ---- dims ---------------------------------------------------------------------------------------------------

std::optional<std::vector<Dim>> TypeDims(const Value* v) {
  if (!v || !v->type().is_tensor() || !v->type().shape) return std::nullopt;
  return *v->type().shape;
}

std::optional<std::vector<Dim>> KnownDims(const Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) {
    std::vector<Dim> d;
    for (int64_t x : t->shape()) d.push_back(Dim::Static(x));
    return d;
  }
  return TypeDims(v);
}

std::optional<Shape> TypeStaticShape(const Value* v) { return v ? v->type().static_dims() : std::nullopt; }

std::optional<Shape> KnownStaticShape(const Value* v) {
  if (!v) return std::nullopt;
  if (const Tensor* t = v->initializer()) return t->shape();
  return TypeStaticShape(v);
}

int64_t DimOrMinusOne(const Value* v, int64_t i) {
  const auto dims = KnownDims(v);
  if (!dims) return -1;
  const int64_t rank = static_cast<int64_t>(dims->size());
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return -1;
  const Dim& d = (*dims)[static_cast<size_t>(i)];
  return d.is_static() ? d.value : -1;
}

// ---- element type -------------------------------------------------------------------------------------------

DataType TensorElementType(const Value* v) {
  return v && v->type().is_tensor() ? v->type().elem_type : DataType::kUndefined;
}

DataType DeclaredElementType(const Value* v) { return v ? v->type().elem_type : DataType::kUndefined; }

// ---- constants ----------------------------------------------------------------------------------------------

namespace {

bool IsConstantNode(const Node* n) { return n && n->domain().empty() && n->op_type() == "Constant"; }

// A one-element tensor of type float or double (and, with `ints`, int32 or int64), as double.
std::optional<double> ScalarAsDouble(const Tensor* t, bool ints) {
  if (!t || t->size() != 1) return std::nullopt;
  switch (t->dtype()) {
    case DataType::kFloat: return t->data<float>()[0];
    case DataType::kDouble: return t->data<double>()[0];
    case DataType::kInt32:
      if (ints) return t->data<int32_t>()[0];
      return std::nullopt;
    case DataType::kInt64:
      if (ints) return static_cast<double>(t->data<int64_t>()[0]);
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

bool IsConstantInitializer(const Graph& graph, const Value* v) {
  if (!v || !v->is_initializer()) return false;
  const auto& in = graph.inputs();
  return std::find(in.begin(), in.end(), v) == in.end();
}

const Tensor* ConstantTensor(const Graph& graph, const Value* v) {
  if (!v) return nullptr;
  if (const Node* p = v->producer(); IsConstantNode(p)) {
    const Attribute* value = p->attr("value");
    return value && value->type == AttrType::kTensor ? &value->t : nullptr;
  }
  return IsConstantInitializer(graph, v) ? v->initializer() : nullptr;
}

std::optional<double> ConstantFloatScalar(const Graph& graph, const Value* v) {
  return ScalarAsDouble(ConstantTensor(graph, v), false);
}

std::optional<double> ConstantNumberScalar(const Graph& graph, const Value* v) {
  return ScalarAsDouble(ConstantTensor(graph, v), true);
}

std::optional<Tensor> ConstantValue(const Value* v) {
  if (!v) return std::nullopt;
  if (const Node* p = v->producer()) {
    if (!IsConstantNode(p)) return std::nullopt;
    for (const Attribute& a : p->attributes()) {
      if (a.name == "value" && a.type == AttrType::kTensor) return a.t;
      if (a.name == "value_float") return Tensor::FromVector(DataType::kFloat, Shape{}, std::vector<float>{a.f});
      if (a.name == "value_floats") {
        return Tensor::FromVector(DataType::kFloat, Shape{static_cast<int64_t>(a.floats.size())}, a.floats);
      }
      if (a.name == "value_int") return Tensor::FromVector(DataType::kInt64, Shape{}, std::vector<int64_t>{a.i});
      if (a.name == "value_ints") {
        return Tensor::FromVector(DataType::kInt64, Shape{static_cast<int64_t>(a.ints.size())}, a.ints);
      }
    }
    return std::nullopt;
  }
  if (!v->is_initializer() || !IsConstantInitializer(*v->owner(), v)) return std::nullopt;
  return *v->initializer();
}

std::optional<std::vector<int64_t>> ConstantInts(const Value* v) {
  auto t = ConstantValue(v);
  if (!t) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(t->size()));
  if (t->dtype() == DataType::kInt64) {
    std::copy(t->data<int64_t>(), t->data<int64_t>() + t->size(), out.begin());
  } else if (t->dtype() == DataType::kInt32) {
    std::copy(t->data<int32_t>(), t->data<int32_t>() + t->size(), out.begin());
  } else {
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<double>> ConstantFloats(const Value* v) {
  auto t = ConstantValue(v);
  if (!t) return std::nullopt;
  std::vector<double> out(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) {
    const size_t k = static_cast<size_t>(i);
    switch (t->dtype()) {
      case DataType::kFloat: out[k] = t->data<float>()[i]; break;
      case DataType::kDouble: out[k] = t->data<double>()[i]; break;
      case DataType::kFloat16: out[k] = static_cast<float>(t->data<Float16>()[i]); break;
      case DataType::kBFloat16: out[k] = static_cast<float>(t->data<BFloat16>()[i]); break;
      default: return std::nullopt;
    }
  }
  return out;
}

}  // namespace ferry::ir
