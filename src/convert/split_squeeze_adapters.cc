// Split, Squeeze, Unsqueeze: attributes that became inputs at 13, and Split's num_outputs at 18.
//   Split-13: split(attribute) == split(input, constant); no split means equal parts in both.
//   Split-18: num_outputs = N == N equal parts (13 without split) when the axis divides evenly; otherwise 18 makes
//     the last part smaller, which 13 says with an explicit split of ceil(d/N) parts (needs the axis' size).
//     Going up, a Split without split gets num_outputs = its output count (18 requires one of the two).
//   Squeeze-13 / Unsqueeze-13: axes(attribute) == axes(input, constant); Squeeze without axes drops every size-1
//     dim in both. Going down the axes input must be constant.
#include "convert/adapter.h"

namespace ferry::convert {
namespace {

// Attribute `name` (ints) -> constant input at index 1.
ir::Node* IntsAttrToInput(ConversionContext& ctx, ir::Node* n, const Step& step, const char* name) {
  std::vector<ir::Value*> inputs = {n->input(0)};
  if (const ir::Attribute* a = n->attr(name)) {
    inputs.push_back(ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_" + name, a->ints));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {name}));
  GenericStep(*r, step);
  return r;
}

// Constant input at index 1 -> attribute `name` (ints).
ir::Node* InputToIntsAttr(ConversionContext& ctx, ir::Node* n, const Step& step, const char* name) {
  std::vector<ir::Attribute> attrs = n->attributes();
  if (ir::Value* v = n->input(1)) {
    auto c = ConstantInts(v);
    if (!c) {
      Refuse(std::string("its ") + name + " input ('" + v->name() + "') is not constant, and " + step.ToName() +
             " takes " + name + " only as an attribute");
    }
    SetAttr(attrs, IntsAttr(name, *c));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* SplitUp13(ConversionContext& ctx, ir::Node* n, const Step& s) { return IntsAttrToInput(ctx, n, s, "split"); }
ir::Node* SplitDown13(ConversionContext& ctx, ir::Node* n, const Step& s) {
  return InputToIntsAttr(ctx, n, s, "split");
}
ir::Node* AxesUp13(ConversionContext& ctx, ir::Node* n, const Step& s) { return IntsAttrToInput(ctx, n, s, "axes"); }
ir::Node* AxesDown13(ConversionContext& ctx, ir::Node* n, const Step& s) { return InputToIntsAttr(ctx, n, s, "axes"); }

ir::Node* SplitUp18(ConversionContext&, ir::Node* n, const Step& step) {
  if (!n->input(1) && !n->has_attr("num_outputs")) {
    n->mutable_attributes().push_back(IntAttr("num_outputs", static_cast<int64_t>(n->num_outputs())));
  }
  GenericStep(*n, step);
  return n;
}

ir::Node* SplitDown18(ConversionContext& ctx, ir::Node* n, const Step& step) {
  const ir::Attribute* num = n->attr("num_outputs");
  if (!num) {
    GenericStep(*n, step);
    return n;
  }
  const int64_t parts = num->i;
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"num_outputs"});
  std::vector<ir::Value*> inputs = {n->input(0)};
  if (n->input(1)) {
    inputs.push_back(n->input(1));  // split given too: num_outputs says nothing more
  } else {
    const auto dims = TypeDims(n->input(0));
    const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : 0;
    if (!dims) Refuse("num_outputs over an input of unknown rank");
    const ir::Dim& d = (*dims)[static_cast<size_t>(NormalizeAxis(n->GetInt("axis", 0), rank, "axis"))];
    if (parts <= 0) Refuse("num_outputs " + std::to_string(parts) + " is not positive");
    if (!d.is_static()) {
      Refuse("num_outputs " + std::to_string(parts) + " over an axis of unknown size: " + step.ToName() +
             " splits evenly only, and an uneven split needs the sizes");
    }
    if (d.value % parts != 0) {
      const int64_t chunk = (d.value + parts - 1) / parts;
      std::vector<int64_t> sizes(static_cast<size_t>(parts), chunk);
      sizes.back() = d.value - chunk * (parts - 1);
      if (sizes.back() < 0)
        Refuse("num_outputs " + std::to_string(parts) + " does not fit an axis of size " + std::to_string(d.value));
      inputs.push_back(ctx.Build(*n->owner()).AddInt64s(NodeBase(*n) + "_split", sizes));
    }
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

}  // namespace

void RegisterSplitSqueezeAdapters(AdapterRegistry& r) {
  r.Add({"Split", 13, "split-input", SplitUp13, SplitDown13});
  r.Add({"Split", 18, "split-num-outputs", SplitUp18, SplitDown18});
  r.Add({"Squeeze", 13, "squeeze-axes", AxesUp13, AxesDown13});
  r.Add({"Unsqueeze", 13, "squeeze-axes", AxesUp13, AxesDown13});
}

}  // namespace ferry::convert
