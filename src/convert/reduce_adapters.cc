// Reduce*: the `axes` attribute became an input (ReduceSum at 13, the other reductions at 18), with
// noop_with_empty_axes added.
//   Equivalence: Reduce(x, axes=A) before == Reduce(x, axes_input=const A) after; no axes reduces every axis in
//   both (noop_with_empty_axes defaults to 0). Going down the axes input must be a constant (it becomes the
//   attribute); noop_with_empty_axes=1 with no (or empty) axes is an identity the old form cannot say.
#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* AxesToInput(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Value*> inputs = {n->input(0)};
  const std::vector<int64_t> axes = n->GetInts("axes");
  if (!axes.empty()) inputs.push_back(ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_axes", axes));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {"axes"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* AxesToAttribute(ConversionContext& ctx, ir::Node* n, const Step& step) {
  const bool noop = n->GetInt("noop_with_empty_axes", 0) != 0;
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"noop_with_empty_axes"});
  std::vector<int64_t> axes;
  if (ir::Value* a = n->input(1)) {
    auto c = ConstantInts(a);
    if (!c)
      Refuse("its axes come from a non-constant input ('" + a->name() + "'), and " + step.ToName() +
             " takes axes only as an attribute");
    axes = *c;
  }
  if (axes.empty() && noop) {
    Refuse("noop_with_empty_axes=1 without axes (an identity) has no " + step.ToName() + " form");
  }
  if (!axes.empty()) attrs.push_back(IntsAttr("axes", axes));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

}  // namespace

void RegisterReduceAdapters(AdapterRegistry& r) {
  r.Add({"ReduceSum", 13, "reduce-axes", AxesToInput, AxesToAttribute});
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    r.Add({op, 18, "reduce-axes", AxesToInput, AxesToAttribute});
  }
}

}  // namespace ferry::convert
