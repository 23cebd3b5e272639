// Shape inference for reductions: the Reduce* ops (axes as an attribute, or as an input from opset 13 for
// ReduceSum and 18 for the others; keepdims; noop_with_empty_axes), ArgMax/ArgMin and TopK (constant K).
#include <string>

#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

template <int kAxesInputSince>
void Reduce(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (ctx.opset() >= kAxesInputSince) {
    if (ctx.has_input(1)) {
      auto a = ctx.input_ints(1);
      if (!a) {
        if (keepdims) ctx.SetOutputShape(0, Dims(x->size()));
        return;
      }
      axes = *a;
    }
    if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.PropagateShape(0, 0);
      return;
    }
  } else {
    axes = ctx.attr_ints("axes");
  }
  std::vector<bool> reduced(x->size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(NormalizeAxis(ctx, a, rank, "axis"))] = true;
  Dims out;
  for (size_t d = 0; d < x->size(); ++d) {
    if (!reduced[d]) out.push_back((*x)[d]);
    else if (keepdims) out.push_back(ir::Dim::Static(1));
  }
  ctx.SetOutputShape(0, std::move(out));
}

void ArgMaxMin(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), rank, "axis"));
  Dims out(*x);
  if (ctx.attr_int("keepdims", 1) != 0) out[axis] = ir::Dim::Static(1);
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  ctx.SetOutputShape(0, std::move(out));
}

void TopK(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", -1), rank, "axis"));
  ir::Dim k;
  if (ctx.opset() < 10) {
    k = DimOf(ctx.attr_int("k", 0));
  } else if (auto v = ctx.input_ints(1); v && v->size() == 1) {
    if ((*v)[0] < 0) ctx.Fail("K = " + std::to_string((*v)[0]) + " must be >= 0");
    k = ir::Dim::Static((*v)[0]);
  }
  Dims out(*x);
  out[axis] = k;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputShape(i, out);
}

}  // namespace

void RegisterReduceShapeInference(SchemaRegistry& r) {
  r.SetInference("", "ReduceSum", 1, Reduce<13>);
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
                         "ReduceLogSumExp", "ReduceSumSquare"}) {
    r.SetInference("", op, 1, Reduce<18>);
  }
  r.SetInference("", "ArgMax", 1, ArgMaxMin);
  r.SetInference("", "ArgMin", 1, ArgMaxMin);
  r.SetInference("", "TopK", 1, TopK);
}

}  // namespace ferry::schemas
