// Shape inference for tensor data movement: Concat, Split, Gather/GatherElements/GatherND, the Scatter ops,
// Slice, Pad, Resize/Upsample (constant scales or sizes), OneHot, CenterCropPad, and the data-dependent ops
// (NonZero, Compress, Unique, NonMaxSuppression) whose dynamic dims stay unknown. Concat, Gather and Slice also
// propagate partial values.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"
#include "semantics/slice.h"

namespace ferry::schemas {
namespace {

std::string IntsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void Concat(InferenceContext& ctx) {
  const Dims* first = nullptr;
  size_t first_index = 0;
  bool all_known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Dims* s = ctx.input_shape(i);
    if (!s) {
      all_known = false;
      continue;
    }
    if (!first) {
      first = s;
      first_index = i;
    } else if (s->size() != first->size()) {
      ctx.Fail("all inputs must have the same rank, got " + ctx.InputString(first_index) + " and " +
               ctx.InputString(i));
    }
  }
  if (!first) return;
  const int64_t rank = static_cast<int64_t>(first->size());
  if (rank == 0) ctx.Fail("inputs must have rank >= 1, got " + ctx.InputString(first_index));
  const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 1), rank, "axis"));
  Dims out(*first);
  int64_t sum = 0;
  bool sum_known = all_known;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Dims* s = ctx.input_shape(i);
    if (!s) continue;
    for (size_t d = 0; d < s->size(); ++d) {
      if (d == axis) {
        std::optional<int64_t> next = (*s)[d].is_static() ? CheckedAdd(sum, (*s)[d].value) : std::nullopt;
        if (next && sum_known) sum = *next;
        else sum_known = false;
        continue;
      }
      bool conflict = false;
      out[d] = MergeDim(out[d], (*s)[d], &conflict);
      if (conflict) {
        ctx.Fail("inputs differ in dim " + std::to_string(d) + " (not the concatenation axis " +
                 std::to_string(axis) + "): " + ctx.InputString(first_index) + " vs " + ctx.InputString(i));
      }
    }
  }
  out[axis] = sum_known ? ir::Dim::Static(sum) : (ctx.num_inputs() == 1 ? (*first)[axis] : UnknownDim());
  ctx.SetOutputShape(0, std::move(out));
  // Partial values: concatenation of 1-D values.
  PartialValue v;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const PartialValue* p = ctx.input_value(i);
    if (!p || p->scalar) return;
    v.elems.insert(v.elems.end(), p->elems.begin(), p->elems.end());
  }
  ctx.SetOutputValue(0, std::move(v));
}

void Split(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), rank, "axis"));
  const size_t n = ctx.num_outputs();
  std::optional<std::vector<int64_t>> split;
  if (ctx.opset() >= 13) {
    if (ctx.has_input(1)) split = ctx.input_ints(1);
  } else if (ctx.has_attr("split")) {
    split = ctx.attr_ints("split");
  } else if (ctx.has_input(1)) {
    split = ctx.input_ints(1);  // opset 1: optional second input
  }
  if (ctx.has_input(1) && ctx.opset() >= 13 && !split) {
    for (size_t i = 0; i < n; ++i) {
      Dims out(*x);
      out[axis] = UnknownDim();
      ctx.SetOutputShape(i, std::move(out));
    }
    return;
  }
  const ir::Dim& dim = (*x)[axis];
  std::vector<ir::Dim> sizes(n);
  if (split && !split->empty()) {
    if (split->size() != n) {
      ctx.Fail("split " + IntsString(*split) + " has " + std::to_string(split->size()) + " values for " +
               std::to_string(n) + " outputs");
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; ++i) {
      if ((*split)[i] < 0) ctx.Fail("split " + IntsString(*split) + " has a negative value");
      total = CheckedAdd(total, (*split)[i]).value_or(INT64_MAX);
      sizes[i] = ir::Dim::Static((*split)[i]);
    }
    if (dim.is_static() && total != dim.value) {
      ctx.Fail("split " + IntsString(*split) + " sums to " + std::to_string(total) + ", but dim " +
               std::to_string(axis) + " of input " + ctx.InputString(0) + " is " + std::to_string(dim.value));
    }
  } else if (dim.is_static() && n > 0) {
    const int64_t d = dim.value, k = static_cast<int64_t>(n);
    if (ctx.opset() >= 18 && ctx.has_attr("num_outputs")) {
      const int64_t chunk = d / k + (d % k != 0 ? 1 : 0);
      for (size_t i = 0; i < n; ++i) {
        const int64_t begin = std::min<int64_t>(d, chunk * static_cast<int64_t>(i));
        sizes[i] = ir::Dim::Static(std::min<int64_t>(chunk, d - begin));
      }
    } else {
      if (d % k != 0) {
        ctx.Fail("dim " + std::to_string(axis) + " of input " + ctx.InputString(0) + " cannot be split evenly into " +
                 std::to_string(n) + " outputs");
      }
      for (size_t i = 0; i < n; ++i) sizes[i] = ir::Dim::Static(d / k);
    }
  } else if (n == 1) {
    sizes[0] = dim;
  }
  for (size_t i = 0; i < n; ++i) {
    Dims out(*x);
    out[axis] = sizes[i];
    ctx.SetOutputShape(i, std::move(out));
  }
}

void Gather(InferenceContext& ctx) {
  const Dims* data = ctx.input_shape(0);
  const Dims* indices = ctx.input_shape(1);
  if (data && indices) {
    const int64_t rank = static_cast<int64_t>(data->size());
    if (rank == 0) ctx.Fail("input data " + ctx.InputString(0) + " must have rank >= 1");
    const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), rank, "axis"));
    Dims out(data->begin(), data->begin() + static_cast<std::ptrdiff_t>(axis));
    out.insert(out.end(), indices->begin(), indices->end());
    out.insert(out.end(), data->begin() + static_cast<std::ptrdiff_t>(axis) + 1, data->end());
    ctx.SetOutputShape(0, std::move(out));
  }
  const PartialValue* v = ctx.input_value(0);
  const PartialValue* idx = ctx.input_value(1);
  if (!v || !idx || v->scalar) return;
  PartialValue out{idx->scalar, {}};
  const int64_t n = static_cast<int64_t>(v->elems.size());
  for (const SymInt& e : idx->elems) {
    if (!e.value || *e.value < -n || *e.value >= n) return;
    out.elems.push_back(v->elems[static_cast<size_t>(*e.value < 0 ? *e.value + n : *e.value)]);
  }
  ctx.SetOutputValue(0, std::move(out));
}

void GatherElements(InferenceContext& ctx) { ctx.PropagateShape(1, 0); }

void GatherND(InferenceContext& ctx) {
  const Dims* data = ctx.input_shape(0);
  const Dims* indices = ctx.input_shape(1);
  if (!data || !indices || indices->empty() || !indices->back().is_static()) return;
  const int64_t b = ctx.attr_int("batch_dims", 0);
  const int64_t last = indices->back().value;
  if (b < 0 || b > static_cast<int64_t>(data->size()) || last > static_cast<int64_t>(data->size()) - b) {
    ctx.Fail("indices " + ctx.InputString(1) + " index " + std::to_string(last) + " dims after batch_dims = " +
             std::to_string(b) + ", more than data " + ctx.InputString(0) + " has");
  }
  Dims out(indices->begin(), indices->end() - 1);
  out.insert(out.end(), data->begin() + b + last, data->end());
  ctx.SetOutputShape(0, std::move(out));
}

void SameAsData(InferenceContext& ctx) { ctx.PropagateShape(0, 0); }

void Slice(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes");
    steps = std::vector<int64_t>{};
  } else {
    starts = ctx.input_ints(1);
    ends = ctx.input_ints(2);
    axes = ctx.has_input(3) ? ctx.input_ints(3) : std::vector<int64_t>{};
    steps = ctx.has_input(4) ? ctx.input_ints(4) : std::vector<int64_t>{};
  }
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  if (!starts || !ends || !axes || !steps) {
    Dims out(*x);
    if (axes && !axes->empty()) {
      for (int64_t a : *axes) out[static_cast<size_t>(NormalizeAxis(ctx, a, rank, "axis"))] = UnknownDim();
    } else {
      out.assign(x->size(), UnknownDim());
    }
    ctx.SetOutputShape(0, std::move(out));
    return;
  }
  if (starts->size() != ends->size()) {
    ctx.Fail("starts " + IntsString(*starts) + " and ends " + IntsString(*ends) + " differ in length");
  }
  const size_t n = starts->size();
  if (axes->empty()) {
    for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (steps->empty()) steps->assign(n, 1);
  if (axes->size() != n || steps->size() != n) {
    ctx.Fail("starts, ends, axes and steps must have the same length");
  }
  Dims out(*x);
  std::vector<bool> seen(x->size(), false);
  for (size_t i = 0; i < n; ++i) {
    const size_t a = static_cast<size_t>(NormalizeAxis(ctx, (*axes)[i], rank, "axis"));
    if (seen[a]) ctx.Fail("axes " + IntsString(*axes) + " name the same axis twice");
    seen[a] = true;
    const int64_t step = (*steps)[i];
    if (step == 0) ctx.Fail("steps must not be 0");
    const ir::Dim& d = (*x)[a];
    if (d.is_static()) {
      out[a] = ir::Dim::Static(semantics::ResolveSliceAxis(d.value, (*starts)[i], (*ends)[i], step).length);
    } else if (!(step == 1 && (*starts)[i] == 0 && (*ends)[i] >= INT32_MAX)) {
      out[a] = UnknownDim();  // a full-range slice keeps the dim
    }
  }
  ctx.SetOutputShape(0, std::move(out));
  // Partial values: a slice of a 1-D value.
  const PartialValue* v = ctx.input_value(0);
  if (!v || v->scalar || n != 1) return;
  const int64_t len = static_cast<int64_t>(v->elems.size());
  const semantics::SliceAxis axis = semantics::ResolveSliceAxis(len, (*starts)[0], (*ends)[0], (*steps)[0]);
  if (axis.length <= 0) {
    ctx.SetOutputValue(0, PartialValue{});
    return;
  }
  PartialValue r;
  for (int64_t k = 0; k < axis.length; ++k) {
    r.elems.push_back(v->elems[static_cast<size_t>(axis.begin + k * axis.step)]);
  }
  ctx.SetOutputValue(0, std::move(r));
}

void Pad(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  std::optional<std::vector<int64_t>> pads;
  if (ctx.opset() < 2) pads = ctx.attr_ints("paddings");
  else if (ctx.opset() < 11) pads = ctx.attr_ints("pads");
  else pads = ctx.input_ints(1);
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    auto a = ctx.input_ints(3);
    if (!a) pads.reset();
    else axes = *a;
  }
  if (!pads) {
    ctx.SetOutputShape(0, Dims(x->size()));
    return;
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads->size() != 2 * axes.size()) {
    ctx.Fail("pads " + IntsString(*pads) + " has " + std::to_string(pads->size()) + " values, expected " +
             std::to_string(2 * axes.size()) + " for input " + ctx.InputString(0));
  }
  Dims out(*x);
  const size_t n = axes.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t a = static_cast<size_t>(NormalizeAxis(ctx, axes[i], rank, "axis"));
    const auto extra = CheckedAdd((*pads)[i], (*pads)[i + n]);
    if (extra && *extra == 0) continue;
    const auto sum = extra && out[a].is_static() ? CheckedAdd(out[a].value, *extra) : std::nullopt;
    if (!sum) {
      out[a] = UnknownDim();
      continue;
    }
    const int64_t v = *sum;
    if (v < 0) {
      ctx.Fail("pads " + IntsString(*pads) + " remove more than dim " + std::to_string(a) + " of input " +
               ctx.InputString(0) + " holds");
    }
    out[a] = ir::Dim::Static(v);
  }
  ctx.SetOutputShape(0, std::move(out));
}

// Output dims from per-axis scales: floor(dim * scale), as the ref kernel computes it.
ir::Dim Scaled(const ir::Dim& d, double scale) {
  if (scale == 1.0) return d;
  if (!d.is_static() || !(scale > 0) || !std::isfinite(scale)) return UnknownDim();
  const double len = std::floor(scale * static_cast<double>(d.value));
  return len < 9.0e18 ? ir::Dim::Static(static_cast<int64_t>(len)) : UnknownDim();
}

void Resize(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<int64_t> axes = ctx.opset() >= 18 ? ctx.attr_ints("axes") : std::vector<int64_t>{};
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) a = NormalizeAxis(ctx, a, rank, "axis");
  const size_t scales_at = ctx.opset() >= 11 ? 2 : 1;
  const size_t sizes_at = 3;
  Dims out(*x);
  auto input_size = [&](size_t i) -> int64_t {  // element count of a 1-D input, -1 when unknown
    const Dims* s = ctx.input_shape(i);
    if (!ctx.has_input(i)) return 0;
    if (!s || s->size() != 1 || !(*s)[0].is_static()) return -1;
    return (*s)[0].value;
  };
  const int64_t nscales = input_size(scales_at);
  const int64_t nsizes = ctx.opset() >= 11 ? input_size(sizes_at) : 0;
  if (nscales > 0 || (nscales < 0 && nsizes == 0)) {
    auto scales = ctx.input_floats(scales_at);
    if (!scales) {
      for (int64_t a : axes) out[static_cast<size_t>(a)] = UnknownDim();
    } else {
      if (scales->size() != axes.size()) {
        ctx.Fail("scales has " + std::to_string(scales->size()) + " values, expected " + std::to_string(axes.size()) +
                 " for input " + ctx.InputString(0));
      }
      for (size_t i = 0; i < axes.size(); ++i) {
        out[static_cast<size_t>(axes[i])] = Scaled((*x)[static_cast<size_t>(axes[i])], (*scales)[i]);
      }
    }
  } else if (nsizes != 0) {
    auto sizes = ctx.input_ints(sizes_at);
    const std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
    if (!sizes || sizes->size() != axes.size()) {
      if (sizes) {
        ctx.Fail("sizes has " + std::to_string(sizes->size()) + " values, expected " + std::to_string(axes.size()) +
                 " for input " + ctx.InputString(0));
      }
      for (int64_t a : axes) out[static_cast<size_t>(a)] = UnknownDim();
    } else if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) {
        out[static_cast<size_t>(axes[i])] = DimOf((*sizes)[i]);
      }
    } else {
      // One scale for all axes (the smallest or the largest ratio), rounded.
      const bool not_larger = policy == "not_larger";
      double s = not_larger ? INFINITY : 0.0;
      bool known = true;
      for (size_t i = 0; i < axes.size(); ++i) {
        const ir::Dim& d = (*x)[static_cast<size_t>(axes[i])];
        if (!d.is_static() || d.value == 0) {
          known = false;
          break;
        }
        const double r = static_cast<double>((*sizes)[i]) / static_cast<double>(d.value);
        s = not_larger ? std::min(s, r) : std::max(s, r);
      }
      for (int64_t a : axes) {
        const ir::Dim& d = (*x)[static_cast<size_t>(a)];
        const double v = s * static_cast<double>(d.value) + 0.5;
        out[static_cast<size_t>(a)] = known && v >= 0 && v < 9.0e18 ? ir::Dim::Static(static_cast<int64_t>(v)) : UnknownDim();
      }
    }
  }
  ctx.SetOutputShape(0, std::move(out));
}

void Upsample(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  std::vector<float> scales;
  if (ctx.opset() < 7) {
    scales = {1.0f, 1.0f, ctx.attr_float("height_scale", 1.0f), ctx.attr_float("width_scale", 1.0f)};
  } else if (ctx.opset() < 9) {
    scales = ctx.attr_floats("scales");
  } else if (auto s = ctx.input_floats(1)) {
    scales = *s;
  } else {
    ctx.SetOutputShape(0, Dims(x->size()));
    return;
  }
  if (scales.size() != x->size()) {
    ctx.Fail("got " + std::to_string(scales.size()) + " scales for input " + ctx.InputString(0));
  }
  Dims out(x->size());
  for (size_t d = 0; d < x->size(); ++d) out[d] = Scaled((*x)[d], scales[d]);
  ctx.SetOutputShape(0, std::move(out));
}

void OneHot(InferenceContext& ctx) {
  const Dims* indices = ctx.input_shape(0);
  if (!indices) return;
  const int64_t out_rank = static_cast<int64_t>(indices->size()) + 1;
  const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", -1), out_rank, "axis"));
  ir::Dim depth;
  if (const Tensor* t = ctx.input_constant(1); t && t->size() == 1) {
    double v = 0;
    switch (t->dtype()) {
      case DataType::kFloat: v = t->data<float>()[0]; break;
      case DataType::kDouble: v = t->data<double>()[0]; break;
      case DataType::kInt64: v = static_cast<double>(t->data<int64_t>()[0]); break;
      case DataType::kInt32: v = t->data<int32_t>()[0]; break;
      default: v = -1; break;
    }
    if (v >= 0 && v < 9.0e18) depth = ir::Dim::Static(static_cast<int64_t>(v));
  }
  Dims out(*indices);
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  ctx.SetOutputShape(0, std::move(out));
}

void CenterCropPad(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  auto shape = ctx.input_ints(1);
  std::vector<int64_t> axes = ctx.attr_ints("axes");
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  Dims out(*x);
  for (size_t i = 0; i < axes.size(); ++i) {
    const size_t a = static_cast<size_t>(NormalizeAxis(ctx, axes[i], rank, "axis"));
    out[a] = shape && i < shape->size() ? DimOf((*shape)[i]) : UnknownDim();
  }
  ctx.SetOutputShape(0, std::move(out));
}

void NonZero(InferenceContext& ctx) {
  const int64_t rank = ctx.input_rank(0);
  ctx.SetOutputShape(0, {rank >= 0 ? ir::Dim::Static(rank) : UnknownDim(), UnknownDim()});
}

void Compress(InferenceContext& ctx) {
  if (!ctx.has_attr("axis")) {
    ctx.SetOutputShape(0, {UnknownDim()});
    return;
  }
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  Dims out(*x);
  out[static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(x->size()), "axis"))] =
      UnknownDim();
  ctx.SetOutputShape(0, std::move(out));
}

void Unique(InferenceContext& ctx) {
  if (ctx.has_attr("axis")) {
    if (const Dims* x = ctx.input_shape(0)) {
      Dims out(*x);
      out[static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(x->size()),
                                            "axis"))] = UnknownDim();
      ctx.SetOutputShape(0, std::move(out));
    }
  } else {
    ctx.SetOutputShape(0, {UnknownDim()});
  }
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.SetOutputShape(i, {UnknownDim()});
}

// TfIdfVectorizer: [C] -> [max(ngram_indexes) + 1], [N, C] -> [N, max(ngram_indexes) + 1].
void TfIdfVectorizer(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const std::vector<int64_t> idx = ctx.attr_ints("ngram_indexes");
  if (!x || idx.empty() || x->empty() || x->size() > 2) return;
  const int64_t max = *std::max_element(idx.begin(), idx.end());
  const ir::Dim n = max < INT64_MAX ? DimOf(max + 1) : UnknownDim();
  ctx.SetOutputShape(0, x->size() == 1 ? Dims{n} : Dims{(*x)[0], n});
}

void NonMaxSuppression(InferenceContext& ctx) { ctx.SetOutputShape(0, {UnknownDim(), ir::Dim::Static(3)}); }

// com.microsoft::WordConvEmbedding: Sequence [words, chars], W [embedding_size, 1, window, char_dim] -> Y [words,
// embedding_size].
void WordConvEmbedding(InferenceContext& ctx) {
  const Dims* seq = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(1);
  if (seq && seq->size() != 2) ctx.Fail("input Sequence " + ctx.InputString(0) + " must have rank 2");
  if (w && w->size() != 4) ctx.Fail("input W " + ctx.InputString(1) + " must have rank 4");
  if (!seq && !w) return;
  ctx.SetOutputShape(0, {seq ? (*seq)[0] : UnknownDim(), w ? (*w)[0] : UnknownDim()});
}

}  // namespace

void RegisterTensorShapeInference(SchemaRegistry& r) {
  r.SetInference("", "Concat", 1, Concat);
  r.SetInference("", "Split", 1, Split);
  r.SetInference("", "Gather", 1, Gather);
  r.SetInference("", "GatherElements", 1, GatherElements);
  r.SetInference("", "GatherND", 1, GatherND);
  for (const char* op : {"Scatter", "ScatterElements", "ScatterND"}) r.SetInference("", op, 1, SameAsData);
  r.SetInference("", "Slice", 1, Slice);
  r.SetInference("", "Pad", 1, Pad);
  r.SetInference("", "Resize", 1, Resize);
  r.SetInference("", "Upsample", 1, Upsample);
  r.SetInference("", "OneHot", 1, OneHot);
  r.SetInference("", "CenterCropPad", 1, CenterCropPad);
  r.SetInference("", "NonZero", 1, NonZero);
  r.SetInference("", "Compress", 1, Compress);
  r.SetInference("", "Unique", 1, Unique);
  r.SetInference(kMsDomain, "Unique", 1, Unique);  // no axis: 1-D outputs of data-dependent length
  r.SetInference(kMsDomain, "WordConvEmbedding", 1, WordConvEmbedding);
  r.SetInference("", "NonMaxSuppression", 1, NonMaxSuppression);
  r.SetInference("", "TfIdfVectorizer", 1, TfIdfVectorizer);
}

}  // namespace ferry::schemas
