#include "passes/rewrite_util.h"

#include <cmath>
#include <optional>

#include "schemas/schema.h"

namespace ferry::passes {

bool SameShape(const ir::Value* a, const ir::Value* b) {
  const auto da = KnownDims(a), db = KnownDims(b);
  if (!da || !db || da->size() != db->size()) return false;
  for (size_t i = 0; i < da->size(); ++i) {
    const ir::Dim &x = (*da)[i], &y = (*db)[i];
    const bool same = (x.is_static() && y.is_static() && x.value == y.value) ||
                      (!x.is_static() && !y.is_static() && !x.symbol.empty() && x.symbol == y.symbol);
    if (!same) return false;
  }
  return true;
}

ir::Node* SoleConsumer(const ir::Graph& graph, const ir::Value* v) {
  if (!v || v->consumers().size() != 1 || IsGraphOutput(graph, v)) return nullptr;
  ir::Node* c = v->consumers()[0];
  return c->owner() == &graph ? c : nullptr;  // a reader inside a subgraph is not a rewrite candidate
}

std::optional<int64_t> IntAttrOr(const ir::Node& n, const char* name, int64_t def) {
  const ir::Attribute* a = n.attr(name);
  if (!a) return def;
  if (a->type != ir::AttrType::kInt) return std::nullopt;
  return a->i;
}

bool BatchNormInferenceMode(const ir::Graph& g, const ir::Node& bn) {
  bool stats_outputs = false;
  for (size_t i = 1; i < bn.num_outputs(); ++i) {
    const ir::Value* v = bn.output(i);
    if (!v) continue;
    if (!v->consumers().empty() || IsGraphOutput(g, v)) return false;
    stats_outputs = true;
  }
  if (bn.opset() >= 14) {
    const auto training = IntAttrOr(bn, "training_mode", 0);
    return training && *training == 0;
  }
  if (!stats_outputs) return true;
  const auto is_test = IntAttrOr(bn, "is_test", 0);
  return bn.opset() <= 6 && is_test && *is_test != 0;
}

std::optional<ChannelAffine> BatchNormAffine(const ir::Graph& g, const ir::Node& bn, int64_t channels) {
  if (bn.num_inputs() != 5) return std::nullopt;
  if (const ir::Attribute* spatial = bn.attr("spatial");
      spatial && spatial->type == ir::AttrType::kInt && spatial->i == 0) {
    return std::nullopt;
  }
  const Tensor* p[4];
  for (size_t i = 0; i < 4; ++i) {
    p[i] = ConstantTensor(g, bn.input(i + 1));
    if (!p[i] || p[i]->dtype() != DataType::kFloat || p[i]->size() != channels) return std::nullopt;
  }
  const ir::Attribute* eps = bn.attr("epsilon");
  if (eps && eps->type != ir::AttrType::kFloat) return std::nullopt;
  const double epsilon = static_cast<double>(static_cast<float>(eps ? eps->f : 1e-5f));
  ChannelAffine a;
  for (int64_t c = 0; c < channels; ++c) {
    const double s = p[0]->data<float>()[c] / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + epsilon);
    a.scale.push_back(static_cast<float>(s));
    a.shift.push_back(static_cast<float>(p[1]->data<float>()[c] - p[2]->data<float>()[c] * s));
  }
  return a;
}

ir::Node* AddFerryNode(ir::Model& model, ir::Graph& graph, const std::string& name, const std::string& op,
                       std::vector<ir::Value*> inputs, std::vector<ir::Value*> outputs,
                       std::vector<ir::Attribute> attributes) {
  return ir::Builder(graph).AddNodeIn(model, std::string(schemas::kFerryDomain), 1, name, op, std::move(inputs),
                                     std::move(outputs), std::move(attributes));
}

bool WouldRunOn(ir::Graph& graph, const PassContext& ctx, const Backend* home, const std::string& domain,
                const std::string& op, int64_t opset, const std::vector<ir::Value*>& inputs,
                const std::vector<ir::Attribute>& attributes) {
  if (!home) return false;
  ir::Builder b(graph);
  ir::Value* out = b.AddValue("probe_output");
  ir::Node* probe = graph.AddNode(b.NodeName("probe"), op, domain, inputs, {out}, attributes);  // imports nothing
  probe->set_opset(opset);
  const bool same = ctx.BackendFor(*probe) == home;
  graph.RemoveNode(probe);
  graph.RemoveValue(out);
  return same;
}

}  // namespace ferry::passes
