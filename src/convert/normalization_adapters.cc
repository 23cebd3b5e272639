// Normalizations: BatchNormalization's training mode (14), GroupNormalization's per-channel scale (21), and
// LayerNormalization (17) written out in older ops.
//   BatchNormalization-14: inputs are unchanged; the training outputs changed (9 had mean, var, saved_mean,
//     saved_var; 14 has running_mean and running_var with training_mode). Inference nodes (Y only,
//     training_mode 0) cross both ways; used training outputs do not.
//   GroupNormalization-21: scale and bias went from one value per group ([G]) to one per channel ([C]). A per-group
//     value repeated C/G times is the same affine transform, so constant scale/bias go up repeated and come down
//     when each group's values are equal (needs C).
//   LayerNormalization-17: below 17 it is its legalization decomposition (legalize/decompose_layer_normalization.cc),
//     the op's function body: Y = (X - Mean) / sqrt(ReduceMean((X - Mean)^2) + epsilon) * Scale + B over the axes
//     from `axis` to the last.
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
  auto dims = TypeDims(n->input(0));
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
    inputs[i] = ctx.Build(*n->owner()).AddInitializer(NodeBase(*n) + (i == 1 ? "_scale" : "_bias"), std::move(out));
  }
  ir::Node* r = ctx.Rebuild(n, n->op_type(), inputs, n->outputs(), n->attributes());
  GenericStep(*r, step);
  return r;
}

}  // namespace

void RegisterNormalizationAdapters(AdapterRegistry& r) {
  r.Add({"BatchNormalization", 14, "batch-norm-training", BatchNormUp14, BatchNormDown14});
  r.Add({"GroupNormalization", 21, "group-norm-scale", GroupNorm21, GroupNorm21});
  r.Add({"LayerNormalization", 17, "layer-norm-decompose", nullptr, DecomposeDown});
}

}  // namespace ferry::convert
