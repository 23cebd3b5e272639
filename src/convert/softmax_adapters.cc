// Softmax, LogSoftmax, Hardmax: before 13 the input is coerced to 2-D at `axis` (default 1), [d0*..*d(a-1),
// da*..*dn], and the op runs over each row; from 13 the op runs over the single axis `axis` (default -1).
//   Equivalence: the two agree exactly when the axis is the last one. Otherwise, up: Flatten(x, axis) -> op(axis
//   -1) -> Reshape(shape of x) is the old op; down: Transpose(x, swap a and r-1) -> op(axis r-1) -> the same
//   Transpose back is the new op along a (needs the rank). Opset 11 also allowed a negative axis: going below 11
//   it is made non-negative (needs the rank).
#include <numeric>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* Up13(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  const int64_t axis = n->GetInt("axis", 1);
  const auto rank = TypeRank(x);
  const bool last = axis == -1 || (rank && NormalizeAxis(axis, *rank, "axis") == *rank - 1);
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"axis"});
  attrs.push_back(IntAttr("axis", -1));  // the last axis: of the input, or of its 2-D view
  if (last || !x || !y) {
    ir::Node* r = ctx.Rebuild(n, n->op_type(), n->inputs(), n->outputs(), attrs);
    GenericStep(*r, step);
    return r;
  }
  const std::string base = NodeBase(*n);
  ir::Builder b = ctx.Build(g, 13);
  ir::Value* flat = b.AddValue(y->name() + "_2d");
  b.AddNode(base + "_flatten", "Flatten", {x}, {flat}, {IntAttr("axis", axis)});
  ir::Value* y2 = b.AddValue(y->name() + "_2d_out");
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {flat}, {y2}, attrs);
  ir::Value* shape = nullptr;
  if (auto dims = TypeStaticShape(x)) {
    shape = b.AddInt64s(base + "_shape", *dims);
  } else {
    shape = b.AddValue(base + "_shape");
    b.AddNode(base + "_shape", "Shape", {x}, {shape}, {});
  }
  b.AddNode(base + "_reshape", "Reshape", {y2, shape}, {y}, {});
  GenericStep(*r, step);
  return r;
}

ir::Node* Down13(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  const int64_t axis = n->GetInt("axis", -1);
  const auto rank = TypeRank(x);
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"axis"});
  if (!rank) {
    if (axis != -1) {
      Refuse("axis " + std::to_string(axis) + " of an input of unknown rank: " + step.ToName() +
             " coerces the input to 2-D there");
    }
    attrs.push_back(IntAttr("axis", -1));
    ir::Node* r = ctx.Rebuild(n, n->op_type(), n->inputs(), n->outputs(), attrs);
    GenericStep(*r, step);
    return r;
  }
  const int64_t a = NormalizeAxis(axis, *rank, "axis");
  attrs.push_back(IntAttr("axis", *rank - 1));
  if (a == *rank - 1 || !y) {
    ir::Node* r = ctx.Rebuild(n, n->op_type(), n->inputs(), n->outputs(), attrs);
    GenericStep(*r, step);
    return r;
  }
  // A swap of two axes is its own inverse.
  std::vector<int64_t> perm(static_cast<size_t>(*rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(a)], perm.back());
  const std::string base = NodeBase(*n);
  ir::Builder b = ctx.Build(g, 12);
  ir::Value* xt = b.AddValue(x->name() + "_t");
  b.AddNode(base + "_transpose_in", "Transpose", {x}, {xt}, {IntsAttr("perm", perm)});
  ir::Value* yt = b.AddValue(y->name() + "_t");
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {xt}, {yt}, attrs);
  b.AddNode(base + "_transpose_out", "Transpose", {yt}, {y}, {IntsAttr("perm", perm)});
  GenericStep(*r, step);
  return r;
}

// Below 11 the axis must be non-negative.
ir::Node* Down11(ConversionContext&, ir::Node* n, const Step& step) {
  const int64_t axis = n->GetInt("axis", 1);
  if (axis < 0) {
    auto rank = TypeRank(n->input(0));
    if (!rank) Refuse("a negative axis needs the input's rank, which is unknown");
    std::vector<ir::Attribute> attrs = n->attributes();
    SetAttr(attrs, IntAttr("axis", NormalizeAxis(axis, *rank, "axis")));
    n->mutable_attributes() = attrs;
  }
  GenericStep(*n, step);
  return n;
}

}  // namespace

void RegisterSoftmaxAdapters(AdapterRegistry& r) {
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    r.Add({op, 13, "softmax-axis", Up13, Down13});
    r.Add({op, 11, "negative-axis", nullptr, Down11});
  }
}

}  // namespace ferry::convert
