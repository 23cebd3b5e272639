#include "passes/fusion_util.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "passes/rewrite_util.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "semantics/fused_activation.h"

namespace ferry::passes {

bool IsFusableConv(const ir::Node& n, bool allow_z) {
  const ir::Value* x = n.input(0);
  if (!DeclaresFloat(x)) return false;
  if (n.domain().empty() && n.op_type() == "Conv") {
    // Conv-1's SAME_* padding differs from opset 11's (and FusedConv's) once a stride is > 1.
    const std::string pad = n.GetString("auto_pad", "NOTSET");
    return n.opset() >= 11 || (pad != "SAME_UPPER" && pad != "SAME_LOWER");
  }
  if (n.domain() == schemas::kFerryDomain && n.op_type() == "FusedConv") {
    return n.GetString("activation", "").empty() && (allow_z || n.input(3) == nullptr);
  }
  return false;
}

namespace {

// Clip's bounds: attributes before opset 11, constant inputs from 11 on (absent = unbounded).
bool ClipBounds(const ir::Graph& g, const ir::Node& clip, std::vector<float>* params) {
  // Absent bounds are the type's lowest and highest finite values, as in Clip (so Clip maps +-inf to them).
  float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
  if (clip.opset() < 11) {
    lo = clip.GetFloat("min", lo);
    hi = clip.GetFloat("max", hi);
  } else {
    for (size_t i = 1; i < 3; ++i) {
      const ir::Value* v = clip.input(i);
      if (!v) continue;
      const auto c = ir::ConstantFloatScalar(g, v);
      if (!c) return false;
      (i == 1 ? lo : hi) = static_cast<float>(*c);
    }
  }
  *params = {lo, hi};
  return true;
}

}  // namespace

std::vector<ir::Attribute> ActivationMatch::Attributes() const {
  return {StringAttr("activation", activation), FloatsAttr("activation_params", params)};
}

Pattern ActivationPattern(const Pattern& y) {
  auto gelu_mode = [](const ir::Node& n) {  // Gelu-20 and ai.ferry::Gelu alike
    const ir::Attribute* mode = n.attr("approximate");
    return !mode || (mode->type == ir::AttrType::kString && (mode->s == "none" || mode->s == "tanh"));
  };
  return OneOf({Op("Relu", {y}), Op("Sigmoid", {y}), Op("Tanh", {y}), Op("HardSwish", {y}), Op("LeakyRelu", {y}),
                Op("HardSigmoid", {y}), Op("Clip", {y, Optional(Const("act_min")), Optional(Const("act_max"))}),
                Op("Gelu", {y}).Where(gelu_mode),
                Op("Gelu", {y}).Domain(std::string(schemas::kFerryDomain)).Where(gelu_mode), Op("Mish", {y}),
                // ONNX Runtime's SiLU: QuickGelu(y) = y * sigmoid(alpha * y) with alpha 1.
                Op("QuickGelu", {y}).Domain(std::string(schemas::kMsDomain)).Where([](const ir::Node& n) {
                  return n.GetFloat("alpha", 1.702f) == 1.0f;
                }),
                Commutative("Mul", {y, Op("Sigmoid", {y}).As("act_sigmoid")}),  // SiLU: y * sigmoid(y)
                // Mish as exported before opset 18: y * tanh(softplus(y))
                Commutative("Mul", {y, Op("Tanh", {Op("Softplus", {y}).As("act_softplus")}).As("act_tanh")})});
}

std::optional<ActivationMatch> ActivationOf(const ir::Graph& g, const Match& m) {
  ir::Node* act = m.root();
  const std::string& op = act->op_type();
  ActivationMatch r{{act}, act->output(0), op, {}};
  if (ir::Node* sigmoid = m.node("act_sigmoid")) {
    r.nodes = {sigmoid, act};
    r.activation = "Silu";
  } else if (ir::Node* tanh = m.node("act_tanh")) {
    r.nodes = {m.node("act_softplus"), tanh, act};
    r.activation = "Mish";
  } else if (op == "QuickGelu") {
    r.activation = "Silu";
  } else if (op == "Gelu") {
    if (const ir::Attribute* mode = act->attr("approximate"); mode && mode->s == "tanh") r.activation = "GeluTanh";
  } else if (op == "LeakyRelu" || op == "HardSigmoid") {
    // The op's attributes are the activation table's parameters, with the same names and defaults.
    const semantics::FusedActivationInfo& info = *semantics::FindFusedActivation(op);
    for (size_t i = 0; i < info.params; ++i) {
      r.params.push_back(act->GetFloat(std::string(info.param_names[i]), info.defaults[i]));
    }
  } else if (op == "Clip" && !ClipBounds(g, *act, &r.params)) {
    return std::nullopt;
  }
  return r;
}

bool MatchActivation(const ir::Graph& g, ir::Value* y, ActivationMatch* m) {
  static const Pattern pattern = ActivationPattern(Any("y"));
  if (IsGraphOutput(g, y)) return false;
  Matcher matcher(g, nullptr);
  Match match;
  for (ir::Node* reader : y->consumers()) {
    if (!matcher.Try(pattern, *reader, &match) || match.value("y") != y) continue;
    const auto& nodes = match.nodes();
    const bool only = std::all_of(y->consumers().begin(), y->consumers().end(), [&](const ir::Node* c) {
      return std::find(nodes.begin(), nodes.end(), c) != nodes.end();
    });
    if (!only) continue;
    auto act = ActivationOf(g, match);
    if (act) *m = std::move(*act);
    return act.has_value();
  }
  return false;
}

ir::Node* ReplaceWithFused(ir::Model& model, ir::Graph& graph, const PassContext& ctx, const std::string& op,
                           ir::Node* anchor, const std::vector<ir::Node*>& absorbed, std::vector<ir::Value*> inputs,
                           ir::Value* output, std::vector<ir::Attribute> extra, bool keep_anchor_attributes) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : keep_anchor_attributes ? anchor->attributes() : std::vector<ir::Attribute>{}) {
    bool replaced = false;
    for (const ir::Attribute& e : extra) replaced = replaced || e.name == a.name;
    if (!replaced) attrs.push_back(a);
  }
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  const Backend* home = ctx.BackendFor(*anchor);
  if (!home) return nullptr;
  for (const ir::Node* n : absorbed) {
    if (ctx.Frozen(*n)) return nullptr;
  }
  if (!WouldRunOn(graph, ctx, home, std::string(schemas::kFerryDomain), op, 1, inputs, attrs)) return nullptr;
  const std::string name = anchor->name();
  for (ir::Node* n : absorbed) graph.RemoveNode(n);
  graph.RemoveNode(anchor);
  return AddFerryNode(model, graph, name, op, std::move(inputs), {output}, std::move(attrs));
}

}  // namespace ferry::passes
