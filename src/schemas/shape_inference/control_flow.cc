// Type and shape inference through control flow and sequences: If (the branches' outputs, merged), Loop and
// Scan (the body is inferred with the node's input types; Loop-carried values keep their element type and rank,
// their dims may change between iterations; Scan states keep their shape), and the sequence/optional ops' container types.
#include <algorithm>
#include <memory>
#include <string>

#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"

namespace ferry::schemas {
namespace {

// What two types that may each describe a value have in common: equal dims stay, anything else is unknown.
ir::TypeInfo Common(const ir::TypeInfo& a, const ir::TypeInfo& b) {
  if (a.kind != b.kind) return {};
  ir::TypeInfo t;
  t.kind = a.kind;
  t.elem_type = a.elem_type == b.elem_type ? a.elem_type
                : a.elem_type == DataType::kUndefined ? b.elem_type
                : b.elem_type == DataType::kUndefined ? a.elem_type
                                                      : DataType::kUndefined;
  if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
    Dims d(a.shape->size());
    for (size_t k = 0; k < d.size(); ++k) {
      if ((*a.shape)[k] == (*b.shape)[k]) d[k] = (*a.shape)[k];
    }
    t.shape = std::move(d);
  }
  if (a.elem && b.elem) t.elem = std::make_shared<ir::TypeInfo>(Common(*a.elem, *b.elem));
  return t;
}

// Two types of one value (a Scan state before and after an iteration): the more specific of each dim.
ir::TypeInfo Refine(const ir::TypeInfo& a, const ir::TypeInfo& b) {
  if (a.kind != b.kind || !a.shape || !b.shape || a.shape->size() != b.shape->size()) return Common(a, b);
  ir::TypeInfo t = Common(a, b);
  bool conflict = false;
  for (size_t k = 0; k < t.shape->size(); ++k) (*t.shape)[k] = MergeDim((*a.shape)[k], (*b.shape)[k], &conflict);
  return conflict ? Common(a, b) : t;
}

// The type with every dim forgotten (rank and element types kept), for values that may change shape.
ir::TypeInfo WithoutDims(const ir::TypeInfo& a) {
  ir::TypeInfo t = a;
  if (t.shape) t.shape = Dims(t.shape->size());
  if (t.elem) t.elem = std::make_shared<ir::TypeInfo>(WithoutDims(*t.elem));
  return t;
}

void If(InferenceContext& ctx) {
  const ir::Graph* then_g = ctx.node().GetGraph("then_branch");
  const ir::Graph* else_g = ctx.node().GetGraph("else_branch");
  if (!then_g || !else_g) return;
  std::vector<ir::TypeInfo> then_out = ctx.InferSubgraph(*then_g, {});
  std::vector<ir::TypeInfo> else_out = ctx.InferSubgraph(*else_g, {});
  if (then_out.size() != ctx.num_outputs() || else_out.size() != ctx.num_outputs()) {
    ctx.Fail("the branches have " + std::to_string(then_out.size()) + " and " + std::to_string(else_out.size()) +
             " outputs, the node has " + std::to_string(ctx.num_outputs()));
  }
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.output(i) = Common(then_out[i], else_out[i]);
}

void Loop(InferenceContext& ctx) {
  const ir::Graph* body = ctx.node().GetGraph("body");
  if (!body) return;
  const size_t carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  std::vector<ir::TypeInfo> in_types;
  in_types.reserve(carried + 2);
  in_types.push_back(ir::TypeInfo::Tensor(DataType::kInt64, Dims{}));
  in_types.push_back(ir::TypeInfo::Tensor(DataType::kBool, Dims{}));
  for (size_t i = 0; i < carried; ++i) {
    const ir::TypeInfo* t = ctx.input_type(2 + i);
    in_types.push_back(t ? WithoutDims(*t) : ir::TypeInfo{});
  }
  std::vector<const ir::TypeInfo*> in_ptrs;
  for (size_t i = 0; i < in_types.size() && i < body->inputs().size(); ++i) in_ptrs.push_back(&in_types[i]);
  std::vector<ir::TypeInfo> out = ctx.InferSubgraph(*body, in_ptrs);
  // Body outputs: cond, carried..., scan outputs...
  for (size_t i = 0; i < ctx.num_outputs() && i + 1 < out.size(); ++i) {
    const ir::TypeInfo& b = out[i + 1];
    if (i < carried) {
      const ir::TypeInfo* init = ctx.input_type(2 + i);
      ctx.output(i) = init ? Common(*init, b) : WithoutDims(b);
    } else {
      ir::TypeInfo t = b;
      if (t.kind == ir::TypeInfo::Kind::kTensor && t.shape) t.shape->insert(t.shape->begin(), UnknownDim());
      ctx.output(i) = std::move(t);
    }
  }
}

void Scan(InferenceContext& ctx) {
  const ir::Graph* body = ctx.node().GetGraph("body");
  if (!body) return;
  const int64_t num_scan = ctx.attr_int("num_scan_inputs", 0);
  if (num_scan <= 0 || static_cast<size_t>(num_scan) > ctx.num_inputs()) return;
  const size_t states = ctx.num_inputs() - static_cast<size_t>(num_scan);
  std::vector<int64_t> in_axes = ctx.attr_ints("scan_input_axes");
  std::vector<int64_t> out_axes = ctx.attr_ints("scan_output_axes");
  in_axes.resize(static_cast<size_t>(num_scan), 0);
  std::vector<ir::TypeInfo> in_types;
  ir::Dim seq_len;
  bool seq_len_set = false;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ir::TypeInfo* t = ctx.input_type(i);
    if (!t) {
      in_types.emplace_back();
      continue;
    }
    if (i < states) {
      in_types.push_back(*t);  // Scan's state variables keep their shape across iterations
      continue;
    }
    ir::TypeInfo s = *t;
    if (s.kind == ir::TypeInfo::Kind::kTensor && s.shape) {
      const int64_t rank = static_cast<int64_t>(s.shape->size());
      const size_t axis = static_cast<size_t>(NormalizeAxis(ctx, in_axes[i - states], rank, "scan input axis"));
      if (!seq_len_set) {
        seq_len = (*s.shape)[axis];
        seq_len_set = true;
      }
      s.shape->erase(s.shape->begin() + static_cast<std::ptrdiff_t>(axis));
    }
    in_types.push_back(std::move(s));
  }
  std::vector<const ir::TypeInfo*> in_ptrs;
  for (size_t i = 0; i < in_types.size() && i < body->inputs().size(); ++i) in_ptrs.push_back(&in_types[i]);
  std::vector<ir::TypeInfo> out = ctx.InferSubgraph(*body, in_ptrs);
  for (size_t i = 0; i < ctx.num_outputs() && i < out.size(); ++i) {
    if (i < states) {
      const ir::TypeInfo* init = ctx.input_type(i);
      ctx.output(i) = init ? Refine(*init, out[i]) : out[i];
      continue;
    }
    ir::TypeInfo t = out[i];
    if (t.kind == ir::TypeInfo::Kind::kTensor && t.shape) {
      const size_t j = i - states;
      const int64_t rank = static_cast<int64_t>(t.shape->size()) + 1;
      const int64_t axis = NormalizeAxis(ctx, j < out_axes.size() ? out_axes[j] : 0, rank, "scan output axis");
      t.shape->insert(t.shape->begin() + axis, seq_len);
    }
    ctx.output(i) = std::move(t);
  }
}

ir::TypeInfo SequenceOf(ir::TypeInfo elem) {
  ir::TypeInfo t;
  t.kind = ir::TypeInfo::Kind::kSequence;
  t.elem = std::make_shared<ir::TypeInfo>(std::move(elem));
  return t;
}

void SequenceConstruct(InferenceContext& ctx) {
  std::optional<ir::TypeInfo> elem;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const ir::TypeInfo* t = ctx.input_type(i);
    if (!t) return;
    elem = elem ? Common(*elem, *t) : *t;
  }
  if (elem) ctx.output(0) = SequenceOf(std::move(*elem));
}

void SequenceEmpty(InferenceContext& ctx) {
  const int64_t dt = ctx.attr_int("dtype", static_cast<int64_t>(DataType::kFloat));
  if (IsKnownDataType(static_cast<int32_t>(dt))) ctx.output(0) = SequenceOf(ir::TypeInfo::Tensor(static_cast<DataType>(dt)));
}

void SequenceAt(InferenceContext& ctx) {
  const ir::TypeInfo* s = ctx.input_type(0);
  if (s && s->kind == ir::TypeInfo::Kind::kSequence && s->elem) ctx.output(0) = *s->elem;
}

void SameAsInput(InferenceContext& ctx) {
  if (const ir::TypeInfo* t = ctx.input_type(0)) ctx.output(0) = *t;
}

void SequenceInsert(InferenceContext& ctx) {
  const ir::TypeInfo* s = ctx.input_type(0);
  const ir::TypeInfo* t = ctx.input_type(1);
  if (!s || s->kind != ir::TypeInfo::Kind::kSequence) return;
  if (s->elem && t) ctx.output(0) = SequenceOf(Common(*s->elem, *t));
  else ctx.output(0) = *s;
}

void ScalarOutput(InferenceContext& ctx) { ctx.SetOutputShape(0, {}); }

// SplitToSequence: without `split`, chunks of 1 along axis (removed when keepdims = 0); with it, chunks of a
// size known only when all are equal.
void SplitToSequence(InferenceContext& ctx) {
  const DataType dt = ctx.input_elem_type(0);
  if (dt == DataType::kUndefined) return;
  ir::TypeInfo elem = ir::TypeInfo::Tensor(dt);
  if (const Dims* x = ctx.input_shape(0)) {
    const size_t axis =
        static_cast<size_t>(NormalizeAxis(ctx, ctx.attr_int("axis", 0), static_cast<int64_t>(x->size()), "axis"));
    Dims d(*x);
    if (!ctx.has_input(1)) {
      if (ctx.attr_int("keepdims", 1) != 0) d[axis] = ir::Dim::Static(1);
      else d.erase(d.begin() + static_cast<std::ptrdiff_t>(axis));
    } else {
      auto split = ctx.input_ints(1);
      const bool equal = split && !split->empty() && ctx.input_rank(1) == 1 &&
                         std::all_of(split->begin(), split->end(), [&](int64_t v) { return v == split->front(); });
      d[axis] = equal && split->front() >= 0 ? ir::Dim::Static(split->front()) : UnknownDim();
    }
    elem.shape = std::move(d);
  }
  ctx.output(0) = SequenceOf(std::move(elem));
}

void ConcatFromSequence(InferenceContext& ctx) {
  const ir::TypeInfo* s = ctx.input_type(0);
  if (s && s->kind == ir::TypeInfo::Kind::kSequence && s->elem && s->elem->is_tensor()) {
    ctx.SetOutputElemType(0, s->elem->elem_type);
  }
}

void Optional(InferenceContext& ctx) {
  ir::TypeInfo t;
  t.kind = ir::TypeInfo::Kind::kOptional;
  if (ctx.has_input(0)) {
    const ir::TypeInfo* in = ctx.input_type(0);
    if (!in) return;
    t.elem = std::make_shared<ir::TypeInfo>(*in);
  } else if (const ir::Attribute* a = ctx.node().attr("type"); a && a->type == ir::AttrType::kTypeProto) {
    t.elem = std::make_shared<ir::TypeInfo>(a->tp);
  } else {
    return;
  }
  ctx.output(0) = std::move(t);
}

void OptionalGetElement(InferenceContext& ctx) {
  const ir::TypeInfo* in = ctx.input_type(0);
  if (!in) return;
  if (in->kind == ir::TypeInfo::Kind::kOptional) {
    if (in->elem) ctx.output(0) = *in->elem;
  } else {
    ctx.output(0) = *in;
  }
}

}  // namespace

void RegisterControlFlowShapeInference(SchemaRegistry& r) {
  r.SetInference("", "If", 1, If);
  r.SetInference("", "Loop", 1, Loop);
  r.SetInference("", "Scan", 9, Scan);
  r.SetInference("", "SequenceConstruct", 1, SequenceConstruct);
  r.SetInference("", "SequenceEmpty", 1, SequenceEmpty);
  r.SetInference("", "SequenceAt", 1, SequenceAt);
  r.SetInference("", "SequenceInsert", 1, SequenceInsert);
  r.SetInference("", "SequenceErase", 1, SameAsInput);
  r.SetInference("", "SequenceLength", 1, ScalarOutput);
  r.SetInference("", "SplitToSequence", 1, SplitToSequence);
  r.SetInference("", "ConcatFromSequence", 1, ConcatFromSequence);
  r.SetInference("", "Optional", 1, Optional);
  r.SetInference("", "OptionalGetElement", 1, OptionalGetElement);
  r.SetInference("", "OptionalHasElement", 1, ScalarOutput);
}

}  // namespace ferry::schemas
