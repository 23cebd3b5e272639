// Shape inference for the ops that compute or rearrange shapes: Shape, Size, Reshape (0 and -1, symbolic -1 by
// cancelling symbols), Flatten, Squeeze, Unsqueeze, Expand, Tile, Transpose, Cast and Identity. Shape, Size,
// Squeeze, Unsqueeze, Reshape, Cast and Identity also propagate partial values. com.microsoft::ExpandDims is an
// Unsqueeze of one axis.
#include <algorithm>
#include <string>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

std::string IntsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// The axes of Squeeze/Unsqueeze/...: the attribute before `input_since`, input `index` from then on.
// nullopt when unknown; an empty vector when absent.
std::optional<std::vector<int64_t>> AxesAttrOrInput(InferenceContext& ctx, int64_t input_since, size_t index) {
  if (ctx.opset() < input_since) return ctx.attr_ints("axes");
  if (!ctx.has_input(index)) return std::vector<int64_t>{};
  return ctx.input_ints(index);
}

void Shape(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) {
    if (!ctx.has_attr("start") && !ctx.has_attr("end")) ctx.SetOutputShape(0, {UnknownDim()});
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = clamp(ctx.attr_int("end", rank));
  const int64_t n = std::max<int64_t>(0, end - start);
  ctx.SetOutputShape(0, {ir::Dim::Static(n)});
  PartialValue v;
  for (int64_t d = start; d < start + n; ++d) v.elems.push_back(SymInt::FromDim((*x)[static_cast<size_t>(d)]));
  ctx.SetOutputValue(0, std::move(v));
}

void Size(InferenceContext& ctx) {
  ctx.SetOutputShape(0, {});
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  ir::Dim p = DimProduct(*x);
  ctx.SetOutputValue(0, PartialValue{true, {SymInt::FromDim(p)}});
}

// A product of dims as coefficient × symbols, for cancelling symbols when resolving Reshape's -1.
struct SymProduct {
  int64_t coef = 1;
  std::vector<std::string> symbols;  // sorted multiset
  bool ok = true;                    // false: an unknown dim or overflow

  void Mul(const ir::Dim& d) {
    if (d.is_static()) {
      auto p = CheckedMul(coef, d.value);
      if (!p) ok = false;
      else coef = *p;
    } else if (!d.symbol.empty()) {
      symbols.insert(std::upper_bound(symbols.begin(), symbols.end(), d.symbol), d.symbol);
    } else {
      ok = false;
    }
  }
};

void Reshape(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  std::vector<SymInt> target;
  if (ctx.opset() < 5) {
    if (!ctx.has_attr("shape")) return;
    for (int64_t v : ctx.attr_ints("shape")) target.push_back(SymInt::Known(v));
  } else if (const PartialValue* v = ctx.input_value(1)) {
    target = v->elems;
  } else {
    const Dims* s = ctx.input_shape(1);
    if (s && s->size() == 1 && (*s)[0].is_static() && (*s)[0].value <= kMaxPartialValueElems) {
      ctx.SetOutputShape(0, Dims(static_cast<size_t>((*s)[0].value)));
    }
    return;
  }
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  Dims out(target.size());
  int64_t infer_at = -1;
  for (size_t k = 0; k < target.size(); ++k) {
    const SymInt& e = target[k];
    if (!e.value) {
      out[k] = e.ToDim();
      continue;
    }
    const int64_t v = *e.value;
    if (v == 0 && !allowzero) {
      if (x) {
        if (k >= x->size()) {
          ctx.Fail("shape " + ctx.InputString(1) + " copies dim " + std::to_string(k) + " (a 0) of input " +
                   ctx.InputString(0) + ", which has only " + std::to_string(x->size()) + " dims");
        }
        out[k] = (*x)[k];
      }
    } else if (v == -1) {
      if (infer_at >= 0) ctx.Fail("the target shape has more than one -1");
      infer_at = static_cast<int64_t>(k);
    } else if (v < -1) {
      ctx.Fail("the target shape has an invalid value " + std::to_string(v));
    } else {
      out[k] = ir::Dim::Static(v);
    }
  }
  if (x) {
    SymProduct in, known;
    for (const ir::Dim& d : *x) in.Mul(d);
    for (size_t k = 0; k < out.size(); ++k) {
      if (static_cast<int64_t>(k) != infer_at) known.Mul(out[k]);
    }
    if (in.ok && known.ok) {
      // Cancel the target's symbols against the input's.
      std::vector<std::string> rest;
      bool subset = std::includes(in.symbols.begin(), in.symbols.end(), known.symbols.begin(), known.symbols.end());
      if (subset) {
        std::set_difference(in.symbols.begin(), in.symbols.end(), known.symbols.begin(), known.symbols.end(),
                            std::back_inserter(rest));
      }
      const bool all_static = in.symbols.empty() && known.symbols.empty();
      if (infer_at >= 0) {
        ir::Dim& d = out[static_cast<size_t>(infer_at)];
        if (known.coef == 0) {
          if (all_static && in.coef != 0) ctx.Fail("cannot infer the -1 of the target shape: other dims multiply to 0");
        } else if (in.coef % known.coef != 0) {
          if (all_static) {
            ctx.Fail("input " + ctx.InputString(0) + " cannot be reshaped to " + DimsToString(out) +
                     ": its element count is not divisible by that of the known target dims");
          }
        } else if (subset && rest.empty()) {
          d = ir::Dim::Static(in.coef / known.coef);
        } else if (subset && rest.size() == 1 && in.coef == known.coef) {
          d = ir::Dim::Symbolic(rest[0]);
        }
      } else if (all_static && in.coef != known.coef) {
        ctx.Fail("input " + ctx.InputString(0) + " has " + std::to_string(in.coef) + " elements, the target shape " +
                 DimsToString(out) + " has " + std::to_string(known.coef));
      }
    }
  }
  // A rank <= 1 reshape of a tracked value keeps its elements.
  if (const PartialValue* v = ctx.input_value(0); v && out.size() <= 1) {
    ir::Dim n = out.empty() ? ir::Dim::Static(1) : out[0];
    if (n.is_static() && static_cast<size_t>(n.value) == v->elems.size()) {
      ctx.SetOutputValue(0, PartialValue{out.empty(), v->elems});
    }
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Flatten(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.Fail("axis " + std::to_string(axis) + " is out of range for input " + ctx.InputString(0));
  }
  if (axis < 0) axis += rank;
  std::span<const ir::Dim> dims(*x);
  ctx.SetOutputShape(0, {DimProduct(dims.subspan(0, static_cast<size_t>(axis))),
                         DimProduct(dims.subspan(static_cast<size_t>(axis)))});
}

void Squeeze(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  auto axes = AxesAttrOrInput(ctx, 13, 1);
  if (!x || !axes) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<bool> drop(x->size(), false);
  if (axes->empty()) {
    for (size_t d = 0; d < x->size(); ++d) {
      if (!(*x)[d].is_static()) return;  // an unknown dim may or may not be 1
      drop[d] = (*x)[d].value == 1;
    }
  } else {
    for (int64_t a : *axes) {
      const int64_t d = NormalizeAxis(ctx, a, rank, "axis");
      const ir::Dim& dim = (*x)[static_cast<size_t>(d)];
      if (dim.is_static() && dim.value != 1) {
        ctx.Fail("cannot squeeze axis " + std::to_string(a) + " of input " + ctx.InputString(0) + ": its size is " +
                 std::to_string(dim.value));
      }
      drop[static_cast<size_t>(d)] = true;
    }
  }
  Dims out;
  for (size_t d = 0; d < x->size(); ++d) {
    if (!drop[d]) out.push_back((*x)[d]);
  }
  if (const PartialValue* v = ctx.input_value(0); v && out.empty() && v->elems.size() == 1) {
    ctx.SetOutputValue(0, PartialValue{true, v->elems});
  }
  ctx.SetOutputShape(0, std::move(out));
}

// Unsqueeze (axes an input from opset kInputSince on); com.microsoft::ExpandDims is Unsqueeze<1> with one axis.
template <int64_t kInputSince>
void Unsqueeze(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  auto axes = AxesAttrOrInput(ctx, kInputSince, 1);
  if (!x || !axes) return;
  const int64_t out_rank = static_cast<int64_t>(x->size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : *axes) {
    const int64_t d = NormalizeAxis(ctx, a, out_rank, "axis");
    if (inserted[static_cast<size_t>(d)]) ctx.Fail("axes " + IntsString(*axes) + " name the same axis twice");
    inserted[static_cast<size_t>(d)] = true;
  }
  Dims out;
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d) {
    out.push_back(inserted[static_cast<size_t>(d)] ? ir::Dim::Static(1) : (*x)[next++]);
  }
  if (const PartialValue* v = ctx.input_value(0); v && out.size() == 1) {
    ctx.SetOutputValue(0, PartialValue{false, v->elems});
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Expand(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  Dims target;
  if (const PartialValue* v = ctx.input_value(1)) {
    for (const SymInt& e : v->elems) target.push_back(e.ToDim());
  } else if (const Dims* s = ctx.input_shape(1);
             s && s->size() == 1 && (*s)[0].is_static() && (*s)[0].value <= kMaxPartialValueElems) {
    target.assign(static_cast<size_t>((*s)[0].value), UnknownDim());
  } else {
    return;
  }
  if (!x) {
    // The output has at least the target's rank; without x's rank it is unknown.
    return;
  }
  const size_t rank = std::max(x->size(), target.size());
  Dims out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const ir::Dim one = ir::Dim::Static(1);
    const ir::Dim& a = k + x->size() >= rank ? (*x)[k + x->size() - rank] : one;
    const ir::Dim& b = k + target.size() >= rank ? target[k + target.size() - rank] : one;
    bool conflict = false;
    out[k] = BroadcastDim(a, b, &conflict);
    if (conflict) {
      ctx.Fail("input " + ctx.InputString(0) + " cannot be expanded to shape " + DimsToString(target));
    }
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Tile(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  auto repeats = ctx.input_ints(1);
  if (!repeats) {
    ctx.SetOutputShape(0, Dims(x->size()));
    return;
  }
  if (repeats->size() != x->size()) {
    ctx.Fail("repeats " + IntsString(*repeats) + " must have one value per dim of input " + ctx.InputString(0));
  }
  Dims out(x->size());
  for (size_t d = 0; d < x->size(); ++d) {
    if ((*repeats)[d] < 0) ctx.Fail("repeats " + IntsString(*repeats) + " has a negative value");
    out[d] = MulDim((*x)[d], (*repeats)[d]);
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Transpose(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const size_t rank = x->size();
  std::vector<int64_t> perm = ctx.attr_ints("perm");
  if (perm.empty()) {
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  if (perm.size() != rank) {
    ctx.Fail("perm " + IntsString(perm) + " has " + std::to_string(perm.size()) + " values, input " +
             ctx.InputString(0) + " has rank " + std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  Dims out(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t p = perm[d];
    if (p < 0) p += static_cast<int64_t>(rank);  // tolerated, as onnxruntime does
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      ctx.Fail("perm " + IntsString(perm) + " is not a permutation of the " + std::to_string(rank) +
               " dims of input " + ctx.InputString(0));
    }
    seen[static_cast<size_t>(p)] = true;
    out[d] = (*x)[static_cast<size_t>(p)];
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Cast(InferenceContext& ctx) {
  const int64_t to = ctx.attr_int("to", 0);
  if (IsKnownDataType(static_cast<int32_t>(to))) ctx.SetOutputElemType(0, static_cast<DataType>(to));
  ctx.PropagateShape(0, 0);
  const DataType dt = static_cast<DataType>(to);
  if (const PartialValue* v = ctx.input_value(0); v && (dt == DataType::kInt64 || dt == DataType::kInt32)) {
    ctx.SetOutputValue(0, *v);
  }
}

void Identity(InferenceContext& ctx) {
  if (const ir::TypeInfo* t = ctx.input_type(0)) ctx.output(0) = *t;
  if (const PartialValue* v = ctx.input_value(0)) ctx.SetOutputValue(0, *v);
}

}  // namespace

void RegisterShapeOpsShapeInference(SchemaRegistry& r) {
  r.SetInference("", "Shape", 1, Shape);
  r.SetInference("", "Size", 1, Size);
  r.SetInference("", "Reshape", 1, Reshape);
  r.SetInference("", "Flatten", 1, Flatten);
  r.SetInference("", "Squeeze", 1, Squeeze);
  r.SetInference("", "Unsqueeze", 1, Unsqueeze<13>);
  r.SetInference(kMsDomain, "ExpandDims", 1, Unsqueeze<1>);
  r.SetInference("", "Expand", 1, Expand);
  r.SetInference("", "Tile", 6, Tile);
  r.SetInference("", "Transpose", 1, Transpose);
  r.SetInference("", "Cast", 1, Cast);
  r.SetInference("", "Identity", 1, Identity);
}

}  // namespace ferry::schemas
