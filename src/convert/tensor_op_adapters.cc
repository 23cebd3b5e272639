// Tensor plumbing ops whose contract changed: Constant (12), Reshape (14), Shape (15), CastLike (15), the variadic
// Max/Min/Mean/Sum (8) and Gemm (11).
//   Constant-12: value_float(s)/value_int(s)/value_string(s) are a `value` tensor of that type and shape (scalar or
//     1-D) written another way.
//   Reshape-14: allowzero=1 (a 0 in shape means a zero-size dim, not "copy") equals allowzero=0 when the shape is a
//     constant without zeros.
//   Shape-15: start/end slice the shape: Shape(x, start, end) == Slice(Shape(x), [start], [end]).
//   CastLike-15: CastLike(x, y) == Cast(x, to = y's element type), when that type is known.
//   Max/Min/Mean/Sum-8: multidirectional broadcasting was added; before 8 all inputs have one shape, so going down
//     the inputs' shapes must provably be equal.
//   Gemm-11: C became optional; an absent C is a C of 0 (a scalar of A's type, broadcast).
#include <algorithm>
#include <climits>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* ConstantDown12(ConversionContext&, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : n->attributes()) {
    Tensor t;
    if (a.name == "value_float") {
      t = Tensor::FromVector(DataType::kFloat, Shape{}, std::vector<float>{a.f});
    } else if (a.name == "value_floats") {
      t = Tensor::FromVector(DataType::kFloat, Shape{static_cast<int64_t>(a.floats.size())}, a.floats);
    } else if (a.name == "value_int") {
      t = Tensor::FromVector(DataType::kInt64, Shape{}, std::vector<int64_t>{a.i});
    } else if (a.name == "value_ints") {
      t = Tensor::FromVector(DataType::kInt64, Shape{static_cast<int64_t>(a.ints.size())}, a.ints);
    } else if (a.name == "value_string") {
      t = Tensor::FromVector(DataType::kString, Shape{}, std::vector<std::string>{a.s});
    } else if (a.name == "value_strings") {
      t = Tensor::FromVector(DataType::kString, Shape{static_cast<int64_t>(a.strings.size())}, a.strings);
    } else {
      attrs.push_back(a);
      continue;
    }
    ir::Attribute v;
    v.name = "value";
    v.type = ir::AttrType::kTensor;
    v.t = std::move(t);
    attrs.push_back(std::move(v));
  }
  n->mutable_attributes() = attrs;
  GenericStep(*n, step);
  return n;
}

ir::Node* ReshapeDown14(ConversionContext&, ir::Node* n, const Step& step) {
  if (n->GetInt("allowzero", 0) != 0) {
    auto shape = ConstantInts(n->input(1));
    if (!shape || std::find(shape->begin(), shape->end(), 0) != shape->end()) {
      Refuse("allowzero=1 with a shape that may hold 0 (a zero-size dim, which " + step.ToName() +
             " reads as 'copy the input dim')");
    }
    n->mutable_attributes() = AttrsWithout(*n, {"allowzero"});
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* ShapeDown15(ConversionContext& ctx, ir::Node* n, const Step& step) {
  const int64_t start = n->GetInt("start", 0);
  const bool has_end = n->attr("end") != nullptr;
  // Read before Rebuild, which deletes `n` and its attributes.
  const int64_t end = has_end ? n->GetInt("end", INT64_MAX) : INT64_MAX;
  if (start == 0 && !has_end) {
    n->mutable_attributes() = AttrsWithout(*n, {"start"});
    GenericStep(*n, step);
    return n;
  }
  ir::Builder b = ctx.Build(*n->owner(), 13);
  ir::Value* y = n->output(0);
  ir::Value* full = b.AddValue((y ? y->name() : NodeBase(*n)) + "_full");
  ir::Node* r = ctx.Rebuild(n, n->op_type(), n->inputs(), {full}, AttrsWithout(*n, {"start", "end"}));
  ir::Value* starts = b.AddInt64s(NodeBase(*r) + "_start", {start});
  ir::Value* ends = b.AddInt64s(NodeBase(*r) + "_end", {end});
  if (y) b.AddNode(NodeBase(*r) + "_slice", "Slice", {full, starts, ends}, {y});
  GenericStep(*r, step);
  return r;
}

ir::Node* CastLikeDown15(ConversionContext& ctx, ir::Node* n, const Step&) {
  const DataType to = TensorElementType(n->input(1));
  if (to == DataType::kUndefined) Refuse("CastLike does not exist before opset 15, and the target type is unknown");
  return ctx.Rebuild(n, "Cast", {n->input(0)}, n->outputs(), {IntAttr("to", static_cast<int64_t>(to))});
}

ir::Node* VariadicDown8(ConversionContext&, ir::Node* n, const Step& step) {
  const ir::Value* first = nullptr;
  for (const ir::Value* v : n->inputs()) {
    if (!v) continue;
    if (!first) {
      first = v;
      continue;
    }
    const auto a = TypeDims(first);
    const auto b = TypeDims(v);
    bool same = a && b && a->size() == b->size();
    for (size_t i = 0; same && i < a->size(); ++i) {
      const ir::Dim &x = (*a)[i], &y = (*b)[i];
      same = (x.is_static() && x == y) || (!x.symbol.empty() && x.symbol == y.symbol);
    }
    if (!same) {
      Refuse("inputs '" + first->name() + "' and '" + v->name() + "' may broadcast, which " + step.ToName() +
             " does not (multidirectional broadcasting came with opset 8)");
    }
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* GemmDown11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  if (n->input(2)) {
    GenericStep(*n, step);
    return n;
  }
  const DataType dt = TensorElementType(n->input(0));
  ir::Value* zero = dt == DataType::kUndefined ? nullptr : ctx.Build(*n->owner()).AddScalar(NodeBase(*n) + "_c", dt, 0);
  if (!zero)
    Refuse("C is absent, and " + step.ToName() + " needs one: a zero C needs A's element type, which is unknown");
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0), n->input(1), zero}, n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

}  // namespace

void RegisterTensorOpAdapters(AdapterRegistry& r) {
  r.Add({"Constant", 12, "constant-value", nullptr, ConstantDown12});
  r.Add({"Reshape", 14, "reshape-allowzero", nullptr, ReshapeDown14});
  r.Add({"Shape", 15, "shape-slice", nullptr, ShapeDown15});
  r.Add({"CastLike", 15, "castlike-cast", nullptr, CastLikeDown15});
  for (const char* op : {"Max", "Min", "Mean", "Sum"}) r.Add({op, 8, "broadcast", nullptr, VariadicDown8});
  r.Add({"Gemm", 11, "gemm-c", nullptr, GemmDown11});
}

}  // namespace ferry::convert
