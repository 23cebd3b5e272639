#include "passes/conv_fusion_util.h"

#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {

bool IsFusableConv(const ir::Node& n, bool allow_z) {
  const ir::Value* x = n.input(0);
  if (!x || x->type().elem_type != DataType::kFloat) return false;
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

bool ReplaceWithFusedConv(ir::Model& model, ir::Graph& graph, const PassContext& ctx, ir::Node* conv,
                          const std::vector<ir::Node*>& absorbed, std::vector<ir::Value*> inputs,
                          ir::Value* output, std::vector<ir::Attribute> extra) {
  std::vector<ir::Attribute> attrs;
  for (const ir::Attribute& a : conv->attributes()) {
    bool replaced = false;
    for (const ir::Attribute& e : extra) replaced = replaced || e.name == a.name;
    if (!replaced) attrs.push_back(a);
  }
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  const Backend* home = ctx.BackendFor(*conv);
  if (!home) return false;
  for (const ir::Node* n : absorbed) {
    if (ctx.Frozen(*n)) return false;
  }
  if (!WouldRunOn(graph, ctx, home, std::string(schemas::kFerryDomain), "FusedConv", 1, inputs, attrs)) return false;
  const std::string name = conv->name();
  for (ir::Node* n : absorbed) graph.RemoveNode(n);
  graph.RemoveNode(conv);
  AddFerryNode(model, graph, name, "FusedConv", std::move(inputs), {output}, std::move(attrs));
  return true;
}

}  // namespace ferry::passes
