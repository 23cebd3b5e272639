// Slice and TopK: attributes that became inputs at opset 10.
//   Slice-10: starts/ends/axes(attributes) == starts/ends/axes(inputs, constant), steps absent (all 1). Going down
//     the inputs must be constant and the steps all 1.
//   TopK-10: k(attribute) == K(input, a constant 1-D tensor of one value).
#include <algorithm>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* SliceUp10(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  std::vector<ir::Value*> inputs = {n->input(0), ctx.Build(g).AddInt64s(NodeBase(*n) + "_starts", n->GetInts("starts")),
                                    ctx.Build(g).AddInt64s(NodeBase(*n) + "_ends", n->GetInts("ends"))};
  if (n->has_attr("axes")) inputs.push_back(ctx.Build(g).AddInt64s(NodeBase(*n) + "_axes", n->GetInts("axes")));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {"starts", "ends", "axes"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* SliceDown10(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs = n->attributes();
  const char* names[3] = {"starts", "ends", "axes"};
  for (size_t i = 1; i <= 3; ++i) {
    ir::Value* v = n->input(i);
    if (!v) continue;
    auto c = ConstantInts(v);
    if (!c)
      Refuse(std::string(names[i - 1]) + " ('" + v->name() + "') is not constant, and " + step.ToName() +
             " takes it as an attribute");
    attrs.push_back(IntsAttr(names[i - 1], *c));
  }
  if (ir::Value* steps = n->input(4)) {
    auto c = ConstantInts(steps);
    if (!c || std::any_of(c->begin(), c->end(), [](int64_t s) { return s != 1; })) {
      Refuse("steps other than 1 exist from opset 10 only");
    }
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* TopKUp10(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Value* k = ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_k", {n->GetInt("k", 0)});
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0), k}, n->outputs(), AttrsWithout(*n, {"k"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* TopKDown10(ConversionContext& ctx, ir::Node* n, const Step& step) {
  auto k = ConstantInts(n->input(1));
  if (!k || k->size() != 1) Refuse("K is not a constant, and " + step.ToName() + " takes k as an attribute");
  std::vector<ir::Attribute> attrs = n->attributes();
  attrs.push_back(IntAttr("k", (*k)[0]));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

}  // namespace

void RegisterSliceTopKAdapters(AdapterRegistry& r) {
  r.Add({"Slice", 10, "slice-inputs", SliceUp10, SliceDown10});
  r.Add({"TopK", 10, "topk-k", TopKUp10, TopKDown10});
}

}  // namespace ferry::convert
