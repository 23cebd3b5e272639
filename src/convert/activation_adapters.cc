// Activations added in later opsets, written out in older ops going down:
//   HardSwish-14, Mish-18, Gelu-20: their legalization decompositions (legalize/decompose_<op>.cc), the ops'
//     definitions composed of primitives.
//   Swish-24:     x * Sigmoid(alpha * x), its ONNX function body.
// Equal up to float rounding of the separate steps.
#include "convert/adapter.h"

namespace ferry::convert {
namespace {

ir::Node* SwishDown(ConversionContext& ctx, ir::Node* n, const Step&) {
  const float alpha = n->GetFloat("alpha", 1.0f);
  const DataType dt = TensorElementType(n->input(0));
  if (alpha != 1.0f && !IsFloatingPoint(dt)) {
    Refuse("writing it out in older ops needs the input's float element type, which is " +
           std::string(dt == DataType::kUndefined ? "unknown" : DataTypeName(dt)));
  }
  // Helpers at opset 13, their outputs typed by the context from the schemas (the input's type may be unknown).
  ir::Builder b = ctx.Build(*n->owner(), 13);
  const std::string base = NodeBase(*n) + "_";
  auto op = [&](const std::string& type, std::vector<ir::Value*> in, ir::Value* out = nullptr) {
    if (!out) out = b.AddValue(base + type);
    b.AddNode(base + type, type, std::move(in), {out});
    return out;
  };
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  ir::Value* ax = x;
  if (alpha != 1.0f) {
    ir::Value* a = b.AddScalar(base + "alpha", dt, alpha);
    if (!a) Refuse("writing it out in older ops needs the input's element type, which is unknown");
    ax = op("Mul", {x, a});
  }
  ctx.Remove(n);
  op("Mul", {x, op("Sigmoid", {ax})}, y);
  return nullptr;
}

}  // namespace

void RegisterActivationAdapters(AdapterRegistry& r) {
  r.Add({"HardSwish", 14, "activation-decompose", nullptr, DecomposeDown});
  r.Add({"Mish", 18, "activation-decompose", nullptr, DecomposeDown});
  r.Add({"Gelu", 20, "activation-decompose", nullptr, DecomposeDown});
  r.Add({"Swish", 24, "activation-decompose", nullptr, SwishDown});
}

}  // namespace ferry::convert
