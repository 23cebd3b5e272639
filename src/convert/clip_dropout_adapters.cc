// Clip (11) and Dropout (10, 12): attributes that became inputs.
//   Clip-11: min/max(attributes, float, default -+FLT_MAX) == min/max(inputs, scalars of the data's type; absent
//     means the type's lowest/highest). For float and float16 the defaults coincide; for double an absent old
//     bound is FLT_MAX, which goes up as an explicit input, and an absent new bound has no old spelling.
//   Dropout-12: ratio(attribute) == ratio(input, constant); training_mode(input) absent or false is the inference
//     behaviour (an identity, whatever the ratio) of every Dropout; seed only matters in training. Going down a
//     training_mode that may be true cannot be expressed; a ratio that is not a constant is dropped.
//   Dropout-10: the mask output became bool (it was the data's type): a node whose mask is used cannot cross.
#include <cfloat>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* ClipUp11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Graph& g = *n->owner();
  const DataType dt = TensorElementType(n->input(0));
  std::vector<ir::Value*> inputs = {n->input(0), nullptr, nullptr};
  const char* names[2] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    const ir::Attribute* a = n->attr(names[i]);
    if (!a && dt != DataType::kDouble) continue;
    const double v = a ? a->f : (i == 0 ? -FLT_MAX : FLT_MAX);
    ir::Value* c = dt == DataType::kUndefined ? nullptr : ctx.Build(g).AddScalar(NodeBase(*n) + "_" + names[i], dt, v);
    if (!c) Refuse(std::string(names[i]) + " needs the input's element type, which is unknown");
    inputs[static_cast<size_t>(i) + 1] = c;
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), TrimInputs(inputs), n->outputs(), AttrsWithout(*n, {"min", "max"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* ClipDown11(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"min", "max"});
  const char* names[2] = {"min", "max"};
  for (size_t i = 1; i < 3; ++i) {
    ir::Value* v = n->input(i);
    if (!v) {
      if (TensorElementType(n->input(0)) == DataType::kDouble) {
        Refuse(std::string("without ") + names[i - 1] + " a double input is not clamped, while " + step.ToName() +
               " clamps at FLT_MAX");
      }
      continue;
    }
    auto c = ConstantFloats(v);
    if (!c || c->size() != 1) {
      Refuse(std::string(names[i - 1]) + " ('" + v->name() + "') is not a constant float scalar, which " +
             step.ToName() + " takes as an attribute");
    }
    attrs.push_back(FloatAttr(names[i - 1], static_cast<float>((*c)[0])));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* DropoutUp12(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Value*> inputs = {n->input(0)};
  if (const ir::Attribute* a = n->attr("ratio")) {
    inputs.push_back(ctx.Build(*n->owner()).AddInitializer(NodeBase(*n) + "_ratio",
                                        Tensor::FromVector(DataType::kFloat, Shape{}, std::vector<float>{a->f})));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), AttrsWithout(*n, {"ratio"}));
  GenericStep(*r, step);
  return r;
}

ir::Node* DropoutDown12(ConversionContext& ctx, ir::Node* n, const Step& step) {
  std::vector<ir::Attribute> attrs = AttrsWithout(*n, {"seed"});
  if (ir::Value* t = n->input(2)) {
    auto c = ConstantValue(t);
    if (!c || c->dtype() != DataType::kBool || c->size() != 1 || c->data<bool>()[0]) {
      Refuse("training_mode ('" + t->name() + "') may be true, and " + step.ToName() + " has no training mode");
    }
  }
  if (ir::Value* ratio = n->input(1)) {
    // Outside training Dropout is an identity whatever the ratio: a ratio that is not a constant is dropped.
    auto c = ConstantFloats(ratio);
    if (c && c->size() == 1) attrs.push_back(FloatAttr("ratio", static_cast<float>((*c)[0])));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), {n->input(0)}, n->outputs(), attrs);
  GenericStep(*r, step);
  return r;
}

ir::Node* DropoutMask10(ConversionContext& ctx, ir::Node* n, const Step& step) {
  ir::Value* mask = n->output(1);
  if (IsUsed(mask)) {
    Refuse("its mask output is used, and the mask's type changed at opset 10 (bool from 10, the data's type before)");
  }
  if (mask) {
    n = ctx.Rebuild(n, n->op_type(), n->inputs(), {n->output(0)}, n->attributes());
    mask->owner()->RemoveValue(mask);
  }
  GenericStep(*n, step);
  return n;
}

}  // namespace

void RegisterClipDropoutAdapters(AdapterRegistry& r) {
  r.Add({"Clip", 11, "clip-inputs", ClipUp11, ClipDown11});
  r.Add({"Dropout", 12, "dropout-inputs", DropoutUp12, DropoutDown12});
  r.Add({"Dropout", 10, "dropout-mask", DropoutMask10, DropoutMask10});
}

}  // namespace ferry::convert
