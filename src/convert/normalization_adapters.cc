// Normalizations: BatchNormalization's training mode (14), GroupNormalization's per-channel scale (21), and
// LayerNormalization (17) written out in older ops.
//   BatchNormalization-14: inputs are unchanged; the training outputs changed (9 had mean, var, saved_mean,
//     saved_var; 14 has running_mean and running_var with training_mode). Inference nodes (Y only,
//     training_mode 0) cross both ways; used training outputs do not.
//   GroupNormalization-21: scale and bias went from one value per group ([G]) to one per channel ([C]). A per-group
//     value repeated C/G times is the same affine transform, so constant scale/bias go up repeated and come down
//     when each group's values are equal (needs C).
//   LayerNormalization-17: below 17 it is its ONNX function body: with U the stash type (float when
//     stash_type = 1) and A the axes from `axis` to the last, Mean = ReduceMean_A(X:U), D = X - Mean,
//     InvStdDev = 1 / sqrt(ReduceMean_A(D * D) + epsilon), Y = (D * InvStdDev):T * Scale + B.
#include <cstring>
#include <numeric>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

// Drops optional outputs from `first` on when nothing uses them; refuses when something does.
ir::Node* DropTrainingOutputs(ConversionContext& ctx, ir::Node* n, size_t first, const std::string& why) {
  std::vector<ir::Value*> dropped;
  for (size_t i = first; i < n->num_outputs(); ++i) {
    if (IsUsed(n->output(i))) Refuse("its output '" + n->output(i)->name() + "' is used: " + why);
    if (n->output(i)) dropped.push_back(n->output(i));
  }
  if (dropped.empty()) return n;
  std::vector<ir::Value*> outputs(n->outputs().begin(), n->outputs().begin() + static_cast<std::ptrdiff_t>(first));
  ir::Node* r = ctx.Rebuild(n, n->op_type(), n->inputs(), outputs, n->attributes());
  for (ir::Value* v : dropped) v->owner()->RemoveValue(v);
  return r;
}

ir::Node* BatchNormUp14(ConversionContext& ctx, ir::Node* n, const Step& step) {
  n = DropTrainingOutputs(ctx, n, 1, "BatchNormalization's training outputs changed meaning at opset 14");
  GenericStep(*n, step);
  return n;
}

ir::Node* BatchNormDown14(ConversionContext& ctx, ir::Node* n, const Step& step) {
  if (n->GetInt("training_mode", 0) != 0) Refuse("training_mode=1 has no " + step.ToName() + " equivalent");
  n->mutable_attributes() = AttrsWithout(*n, {"training_mode"});
  n = DropTrainingOutputs(ctx, n, 1, "BatchNormalization's training outputs changed meaning at opset 14");
  GenericStep(*n, step);
  return n;
}

// GroupNormalization: scale/bias per group <-> per channel.
ir::Node* GroupNorm21(ConversionContext& ctx, ir::Node* n, const Step& step) {
  const int64_t groups = n->GetInt("num_groups", 0);
  auto dims = KnownRank(n->input(0)) ? n->input(0)->type().shape : std::nullopt;
  if (!dims || dims->size() < 2 || !(*dims)[1].is_static() || groups <= 0 || (*dims)[1].value % groups != 0) {
    Refuse("scale and bias change from per-group to per-channel at opset 21, which needs the channel count");
  }
  const int64_t c = (*dims)[1].value, per = c / groups;
  std::vector<ir::Value*> inputs = n->inputs();
  for (size_t i = 1; i < 3 && i < inputs.size(); ++i) {
    auto t = ConstantValue(inputs[i]);
    const int64_t want = step.up ? groups : c;
    if (!t || t->size() != want || DataTypeBits(t->dtype()) % 8 != 0 || t->dtype() == DataType::kString) {
      Refuse(std::string(i == 1 ? "scale" : "bias") + " is not a constant of " + std::to_string(want) +
             " values, which the change from per-group to per-channel at opset 21 needs");
    }
    const size_t es = static_cast<size_t>(DataTypeBits(t->dtype()) / 8);
    const auto* src = static_cast<const uint8_t*>(t->raw_data());
    Tensor out(t->dtype(), Shape{step.up ? c : groups});
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t k = 0; k < per; ++k) {
        const size_t ch = static_cast<size_t>(g * per + k);
        if (step.up) {
          std::memcpy(dst + ch * es, src + static_cast<size_t>(g) * es, es);
        } else if (std::memcmp(src + ch * es, src + static_cast<size_t>(g * per) * es, es) != 0) {
          Refuse(std::string(i == 1 ? "scale" : "bias") + " differs within group " + std::to_string(g) + ", and " +
                 step.ToName() + " takes one value per group");
        }
      }
      if (!step.up) std::memcpy(dst + static_cast<size_t>(g) * es, src + static_cast<size_t>(g * per) * es, es);
    }
    inputs[i] = ctx.TensorConstant(*n->owner(), NodeBase(*n) + (i == 1 ? "_scale" : "_bias"), std::move(out));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

ir::Node* LayerNormDown17(ConversionContext& ctx, ir::Node* n, const Step&) {
  ir::Graph& g = *n->owner();
  ir::Value* x = n->input(0);
  ir::Value* scale = n->input(1);
  ir::Value* bias = n->input(2);
  const DataType t = ElemType(x);
  if (t != DataType::kFloat && t != DataType::kDouble && t != DataType::kFloat16 && t != DataType::kBFloat16) {
    Refuse("writing it out in older ops needs the input's element type (a float type), which is " +
           std::string(t == DataType::kUndefined ? "unknown" : DataTypeName(t)));
  }
  const DataType u = n->GetInt("stash_type", 1) == 1 ? DataType::kFloat : t;
  const int64_t axis = n->GetInt("axis", -1);
  std::vector<int64_t> axes;
  if (axis < 0) {
    for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  } else {
    auto rank = KnownRank(x);
    if (!rank) Refuse("axis " + std::to_string(axis) + " of an input of unknown rank");
    for (int64_t a = axis; a < *rank; ++a) axes.push_back(a);
  }
  const float eps = n->GetFloat("epsilon", 1e-5f);
  const std::string b = NodeBase(*n);
  ir::Value* y = n->output(0);
  ir::Value* mean_out = n->output(1);
  ir::Value* inv_out = n->output(2);
  ctx.Remove(n);

  auto val = [&](const std::string& suffix) { return ctx.NewValue(g, b + "_" + suffix); };
  auto node = [&](const std::string& suffix, const std::string& op, std::vector<ir::Value*> in, ir::Value* out,
                  std::vector<ir::Attribute> attrs = {}) {
    ctx.AddNode(g, b + "_" + suffix, op, std::move(in), {out}, std::move(attrs), 13);
    return out;
  };
  ir::Value* xu = u == t ? x : node("cast", "Cast", {x}, val("x_stash"), {IntAttr("to", static_cast<int64_t>(u))});
  ir::Value* mean = node("mean", "ReduceMean", {xu}, mean_out ? mean_out : val("mean"), {IntsAttr("axes", axes)});
  ir::Value* d = node("sub", "Sub", {xu, mean}, val("centered"));
  ir::Value* dd = node("square", "Mul", {d, d}, val("squared"));
  ir::Value* var = node("var", "ReduceMean", {dd}, val("var"), {IntsAttr("axes", axes)});
  ir::Value* var_eps = node("add_eps", "Add", {var, ctx.ScalarConstant(g, b + "_epsilon", u, eps)}, val("var_eps"));
  ir::Value* std_dev = node("sqrt", "Sqrt", {var_eps}, val("std"));
  ir::Value* inv = node("reciprocal", "Reciprocal", {std_dev}, inv_out ? inv_out : val("inv_std"));
  ir::Value* normalized = node("normalize", "Mul", {d, inv}, val("normalized"));
  if (u != t)
    normalized = node("cast_back", "Cast", {normalized}, val("normalized_t"), {IntAttr("to", static_cast<int64_t>(t))});
  if (!y) return nullptr;
  if (bias) {
    ir::Value* scaled = node("scale", "Mul", {normalized, scale}, val("scaled"));
    node("bias", "Add", {scaled, bias}, y);
  } else {
    node("scale", "Mul", {normalized, scale}, y);
  }
  return nullptr;
}

}  // namespace

void RegisterNormalizationAdapters(AdapterRegistry& r) {
  r.Add({"BatchNormalization", 14, "batch-norm-training", BatchNormUp14, BatchNormDown14});
  r.Add({"GroupNormalization", 21, "group-norm-scale", GroupNorm21, GroupNorm21});
  r.Add({"LayerNormalization", 17, "layer-norm-decompose", nullptr, LayerNormDown17});
}

}  // namespace ferry::convert
