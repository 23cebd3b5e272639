// Activations added in later opsets, written out in older ops going down (their ONNX function bodies):
//   HardSwish-14: x * HardSigmoid(x, alpha = 1/6, beta = 0.5).
//   Mish-18:      x * Tanh(Softplus(x)).
//   Gelu-20:      approximate 'none': 0.5 * x * (1 + Erf(x / sqrt(2)));
//                 approximate 'tanh': 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
//   Swish-24:     x * Sigmoid(alpha * x).
// Equal up to float rounding of the separate steps.
#include <cmath>

#include "convert/adapter.h"

namespace ferry::convert {
namespace {

struct Builder {
  ConversionContext& ctx;
  ir::Graph& g;
  std::string base;
  DataType dtype;

  ir::Value* Op(const std::string& op, std::vector<ir::Value*> in, std::vector<ir::Attribute> attrs = {},
                ir::Value* out = nullptr) {
    if (!out) out = ctx.NewValue(g, base + "_" + op);
    ctx.AddNode(g, base + "_" + op, op, std::move(in), {out}, std::move(attrs), 13);
    return out;
  }
  ir::Value* Const(const std::string& name, double v) {
    ir::Value* c = ctx.ScalarConstant(g, base + "_" + name, dtype, v);
    if (!c) Refuse("writing it out in older ops needs the input's element type, which is unknown");
    return c;
  }
};

Builder Start(ConversionContext& ctx, ir::Node* n, bool needs_type) {
  const DataType dt = ElemType(n->input(0));
  if (needs_type && !IsFloatingPoint(dt)) {
    Refuse("writing it out in older ops needs the input's float element type, which is " +
           std::string(dt == DataType::kUndefined ? "unknown" : DataTypeName(dt)));
  }
  return Builder{ctx, *n->owner(), NodeBase(*n), dt};
}

ir::Node* HardSwishDown(ConversionContext& ctx, ir::Node* n, const Step&) {
  Builder b = Start(ctx, n, false);
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  ctx.Remove(n);
  ir::Value* hs = b.Op("HardSigmoid", {x}, {FloatAttr("alpha", 1.0f / 6), FloatAttr("beta", 0.5f)});
  b.Op("Mul", {x, hs}, {}, y);
  return nullptr;
}

ir::Node* MishDown(ConversionContext& ctx, ir::Node* n, const Step&) {
  Builder b = Start(ctx, n, false);
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  ctx.Remove(n);
  b.Op("Mul", {x, b.Op("Tanh", {b.Op("Softplus", {x})})}, {}, y);
  return nullptr;
}

ir::Node* GeluDown(ConversionContext& ctx, ir::Node* n, const Step&) {
  const std::string approx = n->GetString("approximate", "none");
  if (approx != "none" && approx != "tanh") Refuse("approximate '" + approx + "' is unknown");
  Builder b = Start(ctx, n, true);
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  ir::Value* half = b.Const("half", 0.5);
  ir::Value* one = b.Const("one", 1.0);
  ir::Value* inner = nullptr;
  if (approx == "none") {
    inner = b.Op("Erf", {b.Op("Mul", {x, b.Const("rsqrt2", 1.0 / std::sqrt(2.0))})});
  } else {
    ir::Value* cube = b.Op("Mul", {b.Op("Mul", {x, x}), x});
    ir::Value* poly = b.Op("Add", {x, b.Op("Mul", {cube, b.Const("coef", 0.044715)})});
    inner = b.Op("Tanh", {b.Op("Mul", {poly, b.Const("sqrt2pi", std::sqrt(2.0 / M_PI))})});
  }
  ctx.Remove(n);
  b.Op("Mul", {b.Op("Mul", {x, half}), b.Op("Add", {inner, one})}, {}, y);
  return nullptr;
}

ir::Node* SwishDown(ConversionContext& ctx, ir::Node* n, const Step&) {
  const float alpha = n->GetFloat("alpha", 1.0f);
  Builder b = Start(ctx, n, alpha != 1.0f);
  ir::Value* x = n->input(0);
  ir::Value* y = n->output(0);
  ir::Value* ax = alpha == 1.0f ? x : b.Op("Mul", {x, b.Const("alpha", alpha)});
  ctx.Remove(n);
  b.Op("Mul", {x, b.Op("Sigmoid", {ax})}, {}, y);
  return nullptr;
}

}  // namespace

void RegisterActivationAdapters(AdapterRegistry& r) {
  r.Add({"HardSwish", 14, "activation-decompose", nullptr, HardSwishDown});
  r.Add({"Mish", 18, "activation-decompose", nullptr, MishDown});
  r.Add({"Gelu", 20, "activation-decompose", nullptr, GeluDown});
  r.Add({"Swish", 24, "activation-decompose", nullptr, SwishDown});
}

}  // namespace ferry::convert
