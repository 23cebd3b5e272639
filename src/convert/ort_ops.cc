#include "convert/ort_ops.h"

#include <algorithm>
#include <string_view>

#include "ferry/error.h"
#include "ir/builder.h"
#include "ir/value_query.h"
#include "legalize/decompose_util.h"
#include "legalize/decomposition.h"
#include "semantics/fused_activation.h"

namespace ferry::convert {
namespace {

constexpr std::string_view kFerry = "ai.ferry";
constexpr const char* kMs = "com.microsoft";
using semantics::FusedActivation;
using Kind = semantics::FusedActivationKind;

// The activations com.microsoft::FusedConv runs (ONNX Runtime's MLAS activations), with their parameters.
bool FusedConvRuns(Kind k) {
  return k == Kind::kNone || k == Kind::kRelu || k == Kind::kTanh || k == Kind::kSigmoid || k == Kind::kLeakyRelu ||
         k == Kind::kClip || k == Kind::kHardSigmoid;
}

std::vector<ir::Attribute> AttrsExcept(const ir::Node& n, std::initializer_list<std::string_view> drop) {
  std::vector<ir::Attribute> out;
  for (const ir::Attribute& a : n.attributes()) {
    if (std::find(drop.begin(), drop.end(), a.name) == drop.end()) out.push_back(a);
  }
  return out;
}

// activation / activation_params as com.microsoft::FusedConv reads them: the parameters always written out (ONNX
// Runtime requires them for LeakyRelu, Clip and HardSigmoid).
void AddOrtActivation(std::vector<ir::Attribute>& attrs, const FusedActivation& act) {
  if (act.kind == Kind::kNone) return;
  const semantics::FusedActivationInfo& info = semantics::FusedActivationOf(act.kind);
  attrs.push_back(ir::StringAttr("activation", std::string(info.name)));
  if (info.params == 1) attrs.push_back(ir::FloatsAttr("activation_params", {act.alpha}));
  if (info.params == 2) attrs.push_back(ir::FloatsAttr("activation_params", {act.alpha, act.beta}));
}

int64_t DefaultOpset(const ir::Model& m) {
  auto it = m.opsets.find("");
  if (it == m.opsets.end()) it = m.opsets.find("ai.onnx");
  return it == m.opsets.end() ? 0 : it->second;
}

// Rewrites `node` in place of itself into `op` of `domain` with the same inputs and outputs.
ir::Node* Replace(ir::Model& model, ir::Graph& graph, ir::Node* node, const std::string& op, const std::string& domain,
                  std::vector<ir::Attribute> attrs) {
  const std::string name = node->name();
  std::vector<ir::Value*> inputs = node->inputs(), outputs = node->outputs();
  graph.RemoveNode(node);
  ir::Node* n = graph.AddNode(name, op, domain, std::move(inputs), std::move(outputs), std::move(attrs));
  if (domain == kMs) {
    model.opsets.emplace(kMs, 1);
    n->set_opset(1);
  } else {
    n->set_opset(DefaultOpset(model));
  }
  return n;
}

// Makes the original node's output 0 the value `r` the builder computed, then removes the node.
void Finish(ir::Graph& graph, legalize::Builder& b, ir::Node* node, ir::Value* r) {
  ir::Value* o = node->output(0);
  const std::string name = node->name();
  graph.RemoveNode(node);
  const std::vector<ir::Node*>& created = b.created();
  ir::Node* p = r->producer();
  if (p && std::find(created.begin(), created.end(), p) != created.end() && !ir::IsGraphOutput(graph, r)) {
    b.ReplaceCreated(p, ir::RebuildWithOutput(p, r, o));
    graph.RemoveValue(r);
  } else {
    b.AddNode(name + "/Identity", "Identity", {r}, {o});
  }
}

// The ops a builder made, in order: "MatMul, com.microsoft::BiasGelu".
std::string Ops(const legalize::Builder& b) {
  std::string out;
  for (const ir::Node* n : b.created()) out += (out.empty() ? "" : ", ") + n->qualified_op();
  return out;
}

ir::Value* MsNode(ir::Model& model, legalize::Builder& b, const std::string& op, std::vector<ir::Value*> inputs,
                  std::vector<ir::Attribute> attrs = {}) {
  ir::Value* y = b.AddValue(b.prefix() + op);
  b.AddNodeIn(model, kMs, 1, b.prefix() + op, op, std::move(inputs), {y}, std::move(attrs));
  return y;
}

// act(x + bias) (bias may be nullptr) in ONNX Runtime's ops where it has one for float: BiasGelu / Gelu, FastGelu
// (tanh Gelu, with its bias input), QuickGelu with alpha 1 (SiLU); the rest as standard ops.
ir::Value* OrtActivation(ir::Model& model, legalize::Builder& b, ir::Value* x, ir::Value* bias,
                         const FusedActivation& act, DataType t) {
  const bool f32 = t == DataType::kFloat;
  if (f32 && act.kind == Kind::kGelu) return bias ? MsNode(model, b, "BiasGelu", {x, bias}) : MsNode(model, b, "Gelu", {x});
  if (f32 && act.kind == Kind::kGeluTanh) {
    return bias ? MsNode(model, b, "FastGelu", {x, bias}) : MsNode(model, b, "FastGelu", {x});
  }
  if (bias) x = b.Add(x, bias);
  if (f32 && act.kind == Kind::kSilu) return MsNode(model, b, "QuickGelu", {x}, {ir::FloatAttr("alpha", 1.0f)});
  return legalize::BuildFusedActivation(b, x);  // reads the node's activation: act
}

// ---- one rewrite per ai.ferry op: the ops it wrote, or "" when it leaves the node to its decomposition --------------------------------------------

std::string FusedConvToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t opset) {
  if (ir::ElementType(node->input(0)) != DataType::kFloat) return "";
  if (!legalize::RefuseFusedActivation(*node, opset).empty()) return "";
  const FusedActivation act = semantics::FusedActivationFromNode(*node);
  std::vector<ir::Attribute> attrs = AttrsExcept(*node, {"activation", "activation_params"});
  if (FusedConvRuns(act.kind)) {
    AddOrtActivation(attrs, act);
    Replace(model, graph, node, "FusedConv", kMs, std::move(attrs));
    return "com.microsoft::FusedConv";
  }
  // FusedConv without the activation, then the activation as its own ops.
  legalize::Builder b(graph, *node, opset);
  b.set_prefix(node->name() + "/");
  ir::Value* conv = b.AddValue(b.prefix() + "FusedConv");
  b.AddNodeIn(model, kMs, 1, b.prefix() + "FusedConv", "FusedConv", node->inputs(), {conv}, std::move(attrs));
  Finish(graph, b, node, OrtActivation(model, b, conv, nullptr, act, DataType::kFloat));
  return "com.microsoft::FusedConv, " + Ops(b);
}

std::string FusedMatMulToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t opset) {
  const DataType t = ir::ElementType(node->input(0));
  if (!legalize::IsFloatType(t) || !legalize::RefuseFusedActivation(*node, opset).empty()) return "";
  const FusedActivation act = semantics::FusedActivationFromNode(*node);
  legalize::Builder b(graph, *node, opset);
  b.set_prefix(node->name() + "/");
  ir::Value* y = b.Op("MatMul", {node->input(0), node->input(1)});
  Finish(graph, b, node, OrtActivation(model, b, y, node->input(2), act, t));
  return Ops(b);
}

std::string GeluToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t) {
  const DataType t = ir::ElementType(node->input(0));
  if (t != DataType::kFloat && t != DataType::kFloat16) return "";
  const std::string approximate = node->GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return "";
  const std::string op = approximate == "tanh" ? "FastGelu" : "Gelu";
  Replace(model, graph, node, op, kMs, {});
  return "com.microsoft::" + op;
}

std::string LayerNormToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t opset) {
  if (opset < 1) return "";
  // ONNX's LayerNormalization from opset 17; below, ONNX Runtime registers the same op in the default domain.
  Replace(model, graph, node, "LayerNormalization", "", node->attributes());
  return opset >= 17 ? "LayerNormalization" : "LayerNormalization (ONNX Runtime's, opset " + std::to_string(opset) + ")";
}

std::string RmsNormToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t opset) {
  if (opset < 1) return "";
  const std::string op = opset >= 23 ? "RMSNormalization" : "SimplifiedLayerNormalization";
  Replace(model, graph, node, op, "", node->attributes());
  return op;
}

std::string SkipLayerNormToOrt(ir::Model& model, ir::Graph& graph, ir::Node* node, int64_t) {
  const ir::Value* x = node->input(0);
  const int64_t rank = ir::RankOrMinusOne(x);
  if (rank != 2 && rank != 3) return "";
  const int64_t axis = node->GetInt("axis", -1);
  if (axis != -1 && axis != rank - 1) return "";
  if (ir::RankOrMinusOne(node->input(2)) != 1) return "";
  if (node->input(3) && ir::RankOrMinusOne(node->input(3)) != 1) return "";
  const auto xd = ir::KnownDims(x), sd = ir::KnownDims(node->input(1));
  if (!xd || !sd || *xd != *sd) return "";  // ONNX Runtime's Skip: the input's shape
  for (const ir::Dim& d : *xd) {
    if (!d.is_static() && d.symbol.empty()) return "";  // unknown dims cannot be proven equal
  }
  const std::string name = node->name();
  std::vector<ir::Value*> inputs = {node->input(0), node->input(1), node->input(2), node->input(3)};
  if (!inputs[3]) inputs.pop_back();
  std::vector<ir::Value*> outputs = {node->output(0)};
  if (ir::Value* sum = node->output(1)) outputs.insert(outputs.end(), {nullptr, nullptr, sum});
  std::vector<ir::Attribute> attrs = {ir::FloatAttr("epsilon", node->GetFloat("epsilon", 1e-5f))};
  graph.RemoveNode(node);
  ir::Node* n = graph.AddNode(name, "SkipLayerNormalization", kMs, std::move(inputs), std::move(outputs),
                              std::move(attrs));
  model.opsets.emplace(kMs, 1);
  n->set_opset(1);
  return "com.microsoft::SkipLayerNormalization";
}

struct OrtRule {
  std::string_view op;
  std::string (*apply)(ir::Model&, ir::Graph&, ir::Node*, int64_t opset);
};

constexpr OrtRule kRules[] = {
    {"FusedConv", FusedConvToOrt},
    {"FusedMatMul", FusedMatMulToOrt},
    {"Gelu", GeluToOrt},
    {"LayerNormalization", LayerNormToOrt},
    {"RMSNormalization", RmsNormToOrt},
    {"SkipLayerNormalization", SkipLayerNormToOrt},
};

void ConvertGraph(ir::Model& model, ir::Graph& graph, OrtConversion& result, std::vector<std::string>& failed) {
  std::vector<ir::Node*> ferry_nodes;
  for (const auto& n : graph.nodes()) {
    for (ir::Graph* g : n->mutable_subgraphs()) ConvertGraph(model, *g, result, failed);
    if (n->domain() == kFerry) ferry_nodes.push_back(n.get());
  }
  const int64_t opset = DefaultOpset(model);
  bool changed = false;
  for (ir::Node* node : ferry_nodes) {
    const std::string described = node->Describe();
    const auto rule = std::find_if(std::begin(kRules), std::end(kRules),
                                   [&](const OrtRule& r) { return r.op == node->op_type(); });
    const std::string op = node->op_type();  // the rewrite removes the node
    const std::string wrote = rule != std::end(kRules) ? rule->apply(model, graph, node, opset) : "";
    if (!wrote.empty()) {
      ++result.mapped;
      result.applied.push_back(described + ": " + wrote);
      ++result.by_rewrite["ai.ferry::" + op + " -> " + wrote];
      changed = true;
      continue;
    }
    const legalize::Choice choice = legalize::ChooseDecomposition(*node, opset);
    if (!choice.decomposition) {
      failed.push_back(described + ": no ONNX Runtime op and no decomposition (" + choice.reason + ")");
      continue;
    }
    legalize::Decompose(model, graph, node, *choice.decomposition, opset);
    ++result.decomposed;
    result.applied.push_back(described + ": " + choice.decomposition->description);
    ++result.by_rewrite[choice.decomposition->description];
    changed = true;
  }
  if (changed) graph.TopologicalSort();
}

}  // namespace

OrtConversion ConvertToOrtOps(ir::Model& model) {
  OrtConversion result;
  std::vector<std::string> failed;
  // Decompositions may make ai.ferry nodes again (none do today); a second round would catch them.
  for (int round = 0; round < 2; ++round) {
    const int before = result.mapped + result.decomposed;
    ConvertGraph(model, *model.graph, result, failed);
    if (!failed.empty() || result.mapped + result.decomposed == before) break;
  }
  if (!failed.empty()) {
    std::string msg = model.Describe() + ": cannot write these nodes in ONNX Runtime's ops:";
    for (const std::string& f : failed) msg += "\n  " + f;
    throw InvalidModelError(msg);
  }
  if (model.opsets.count(kMs)) model.opsets[kMs] = std::max<int64_t>(model.opsets[kMs], 1);
  return result;
}

}  // namespace ferry::convert
