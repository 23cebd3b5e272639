// Pad: attributes that became inputs (11), the axes input (18) and the wrap mode (19).
//   Pad-11: pads(attribute) == pads(input, constant); value(attribute, float, default 0) == constant_value(input,
//     a scalar of the data's type; absent is 0). Going down both inputs must be constant.
//   Pad-18: with axes, pads list begins and ends for those axes only; the same pads written for every axis (0 for
//     the others) are the older form (needs constant axes and pads, and the rank). Without axes nothing changes.
//   Pad-19: mode 'wrap' does not exist before 19.
#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* Up11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  std::vector<ir::Value*> inputs = {n->input(0), ctx.Build(g).AddInt64s(NodeBase(*n) + "_pads", n->GetInts("pads"))};
  const float value = n->GetFloat("value", 0.0f);
  if (value != 0.0f) {
    const DataType dt = TensorElementType(n->input(0));
    ir::Value* c = dt == DataType::kUndefined ? nullptr : ctx.Build(g).AddScalar(NodeBase(*n) + "_value", dt, value);
    if (!c) Refuse("value " + std::to_string(value) + " needs the data's element type, which is unknown");
    inputs.push_back(c);
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {"pads", "value"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* Down11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs = n->attributes();
  ir::Value* pads = n->input(1);
  auto p = ConstantInts(pads);
  if (!p) Refuse("its pads come from a non-constant input, which " + step.ToName() + " takes as an attribute");
  attrs.push_back(IntsAttr("pads", *p));
  if (ir::Value* cv = n->input(2)) {
    auto v = ConstantFloats(cv);
    if (!v || v->size() != 1) {
      Refuse("its constant_value is not a constant float scalar, which " + step.ToName() + " needs (attribute value)");
    }
    if ((*v)[0] != 0.0) attrs.push_back(FloatAttr("value", static_cast<float>((*v)[0])));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* Down18(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Value* axes = n->input(3);
  if (!axes) {
    ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(n->inputs()), n->outputs(), n->attributes());
    GenericStep(*r, step);
    return r;
  }
  auto a = ConstantInts(axes);
  auto p = ConstantInts(n->input(1));
  auto rank = TypeRank(n->input(0));
  if (!a || !p || !rank) {
    Refuse("it pads only the listed axes; writing pads for every axis needs constant axes and pads and the rank");
  }
  const size_t k = a->size();
  if (p->size() != 2 * k)
    Refuse("pads has " + std::to_string(p->size()) + " values for " + std::to_string(k) + " axes");
  std::vector<int64_t> full(static_cast<size_t>(2 * *rank), 0);
  for (size_t i = 0; i < k; ++i) {
    const auto ax = static_cast<size_t>(NormalizeAxis((*a)[i], *rank, "axis"));
    full[ax] = (*p)[i];
    full[ax + static_cast<size_t>(*rank)] = (*p)[k + i];
  }
  std::vector<ir::Value*> inputs = {n->input(0), ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_pads", full)};
  if (n->input(2)) inputs.push_back(n->input(2));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

ir::Node* Down19(ConversionContext&, ir::Node* n, const Step& step) {
  if (n->GetString("mode", "constant") == "wrap") Refuse("mode 'wrap' exists from opset 19 only");
  GenericStep(*n, step);
  return n;
}

}  // namespace

void RegisterPadAdapters(AdapterRegistry& r) {
  r.Add({"Pad", 11, "pad-inputs", Up11, Down11});
  r.Add({"Pad", 18, "pad-axes", nullptr, Down18});
  r.Add({"Pad", 19, "pad-wrap", nullptr, Down19});
}

}  // namespace ferry::convert
