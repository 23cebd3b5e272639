// AdoptOrtOps (level 1): ONNX Runtime's ops that mean exactly what one of Ferry's own ops means are rewritten into
// that op, so that the passes after it treat a file ONNX Runtime wrote (its `optimized_model_filepath`, level
// `extended`) as they treat the model it came from: Conv fusions, blocked layouts, MatMul + bias + activation
// fusions and Add + LayerNorm fusions see Ferry's ops. Each rewrite is the same computation, operand for operand:
//
//   com.microsoft::FusedConv(X, W, B?, Z?)      => ai.ferry::FusedConv (the same attributes; ORT's activations
//                                                  Relu, Tanh, Sigmoid, LeakyRelu, Clip, HardSigmoid are Ferry's)
//   com.microsoft::Gelu(X)                      => ai.ferry::Gelu (approximate "none")
//   com.microsoft::FastGelu(X)                  => ai.ferry::Gelu (approximate "tanh": ORT's formula is Gelu-20's)
//   com.microsoft::BiasGelu(A, B), FastGelu(A, B)   => Add(A, B) then ai.ferry::Gelu, only where A is a MatMul's
//                                                  output read by this node alone and B a 1-D constant: the
//                                                  MatMul + Add + Gelu then fuse into one FusedMatMul
//   LayerNormalization below opset 17           => ai.ferry::LayerNormalization (ONNX Runtime's default-domain
//                                                  registration computes ONNX's LayerNormalization-17)
//   com.microsoft::FusedMatMul with transBatchA / transBatchB (its kernel copies such an operand into order on
//   every run)                                  => Transpose(s) (perm [1, .., r-2, 0, r-1]; the last two dims for
//                                                  transA / transB), MatMul, Mul by alpha (when not 1): the
//                                                  exporter's form, which fuse_attention and fuse_matmul fuse
//
// With target backends only, and only where the new node runs on the backend that ran the old one (WouldRunOn);
// the portable mode leaves every node as it is (ai.ferry is not standard ONNX).
#include <string>
#include <utility>
#include <vector>

#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "semantics/fused_activation.h"

namespace ferry::passes {
namespace {

const std::string kFerry(schemas::kFerryDomain);
const std::string kMs(schemas::kMsDomain);

int64_t DefaultOpset(const ir::Model& model) {
  const auto it = model.opsets.find("");
  return it == model.opsets.end() ? 0 : it->second;
}

bool IsMs(const ir::Node& n, const char* op) { return n.domain() == kMs && n.op_type() == op; }

// Replaces `node` by ai.ferry::`op` with these inputs and attributes and the node's outputs, when that node runs
// where `node` runs.
bool ToFerry(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* node, const std::string& op,
             std::vector<ir::Value*> inputs, std::vector<ir::Attribute> attrs) {
  const Backend* home = ctx.BackendFor(*node);
  if (!home || !WouldRunOn(g, ctx, home, kFerry, op, 1, inputs, attrs)) return false;
  const std::string name = node->name();
  std::vector<ir::Value*> outputs = node->outputs();
  g.RemoveNode(node);
  AddFerryNode(model, g, name, op, std::move(inputs), std::move(outputs), std::move(attrs));
  return true;
}

bool AdoptFusedConv(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* n) {
  const std::string act = n->GetString("activation", "");
  if (!semantics::FusedActivationError(act, n->GetFloats("activation_params")).empty()) return false;
  return ToFerry(model, g, ctx, n, "FusedConv", n->inputs(), n->attributes());
}

bool AdoptGelu(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* n, bool tanh) {
  return ToFerry(model, g, ctx, n, "Gelu", {n->input(0)}, {StringAttr("approximate", tanh ? "tanh" : "none")});
}

// BiasGelu(A, B) / FastGelu(A, B) after a MatMul: Add + Gelu, for fuse_matmul to take with the MatMul.
bool AdoptBiasGelu(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* n, bool tanh) {
  ir::Value* a = n->input(0);
  ir::Value* b = n->input(1);
  const ir::Node* mm = a ? a->producer() : nullptr;
  if (!IsOp(mm, "MatMul") || SoleConsumer(g, a) != n || ir::IsGraphOutput(g, a)) return false;
  const Tensor* bias = ConstantTensor(g, b);
  if (!bias || bias->shape().size() != 1 || !IsFloatTensor(a)) return false;
  const Backend* home = ctx.BackendFor(*n);
  const int64_t opset = DefaultOpset(model);
  const std::vector<ir::Attribute> gelu_attrs = {StringAttr("approximate", tanh ? "tanh" : "none")};
  if (!home || opset < 7 || !WouldRunOn(g, ctx, home, "", "Add", opset, {a, b}, {}) ||
      !WouldRunOn(g, ctx, home, kFerry, "Gelu", 1, {a}, gelu_attrs)) {
    return false;
  }
  const std::string name = n->name();
  ir::Value* y = n->output(0);
  g.RemoveNode(n);
  ir::Value* sum = g.AddValue(UniqueValueName(g, name + "_biased"), a->type());
  ir::Builder(g, opset).AddNode(name + "_add", "Add", {a, b}, {sum}, {});
  AddFerryNode(model, g, name, "Gelu", {sum}, {y}, gelu_attrs);
  return true;
}

// The operand of a FusedMatMul as ONNX ops: Transpose(v) moving dim 0 past the batch dims (transBatch), then
// Transpose swapping the last two dims (trans); each typed with its dims.
ir::Value* Operand(ir::Builder& b, ir::Value* v, bool trans_batch, bool trans) {
  auto dims = *ir::KnownDims(v);
  const int64_t r = static_cast<int64_t>(dims.size());
  auto transpose = [&](std::vector<int64_t> perm) {
    std::vector<ir::Dim> out;
    for (int64_t p : perm) out.push_back(dims[static_cast<size_t>(p)]);
    ir::Value* y = b.Transpose(v, perm);
    ir::TypeInfo t = v->type();
    t.shape = out;
    y->set_type(t);
    dims = out;
    v = y;
  };
  std::vector<int64_t> perm(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) perm[static_cast<size_t>(i)] = i;
  if (trans_batch) {
    std::vector<int64_t> p;
    for (int64_t i = 1; i < r - 1; ++i) p.push_back(i);
    p.push_back(0);
    p.push_back(r - 1);
    transpose(p);
  }
  if (trans) {
    std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
    transpose(perm);
  }
  return v;
}

bool AdoptBatchTransposedMatMul(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* n) {
  if (!n->GetInt("transBatchA", 0) && !n->GetInt("transBatchB", 0)) return false;
  ir::Value* a = n->input(0);
  ir::Value* bv = n->input(1);
  ir::Value* y = n->output(0);
  const int64_t ra = ir::RankOrMinusOne(a), rb = ir::RankOrMinusOne(bv);
  if (ra < 3 || ra != rb || !IsFloatTensor(a) || !IsFloatTensor(bv) || ir::RankOrMinusOne(y) < 0) return false;
  const Backend* home = ctx.BackendFor(*n);
  const int64_t opset = DefaultOpset(model);
  if (!home || opset < 7 || !WouldRunOn(g, ctx, home, "", "MatMul", opset, {a, bv}, {}) ||
      !WouldRunOn(g, ctx, home, "", "Transpose", opset, {a}, {}) ||
      !WouldRunOn(g, ctx, home, "", "Mul", opset, {a, a}, {})) {
    return false;
  }
  ir::Builder b(g, opset);
  b.set_prefix(n->name() + "/");
  ir::Value* a2 = Operand(b, a, n->GetInt("transBatchA", 0) != 0, n->GetInt("transA", 0) != 0);
  ir::Value* b2 = Operand(b, bv, n->GetInt("transBatchB", 0) != 0, n->GetInt("transB", 0) != 0);
  const float alpha = n->GetFloat("alpha", 1.0f);
  const ir::TypeInfo type = y->type();
  g.RemoveNode(n);
  if (alpha == 1.0f) {
    b.AddNode("MatMul", "MatMul", {a2, b2}, {y});
  } else {
    ir::Value* p = b.AddValue("MatMul", type);
    b.AddNode("MatMul", "MatMul", {a2, b2}, {p});
    b.AddNode("Mul", "Mul", {p, b.Scalar(alpha, DataType::kFloat)}, {y});
  }
  return true;
}

bool AdoptLayerNorm(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* n) {
  return ToFerry(model, g, ctx, n, "LayerNormalization", n->inputs(), n->attributes());
}

class AdoptOrtOps : public Pass {
 public:
  std::string_view name() const override { return "adopt_ort_ops"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "ONNX Runtime's ops that are one of Ferry's own ops => that op: com.microsoft FusedConv, Gelu, FastGelu "
           "=> ai.ferry FusedConv, Gelu; BiasGelu / FastGelu with a bias after a MatMul => Add + ai.ferry::Gelu "
           "(for fuse_matmul); LayerNormalization below opset 17 (ONNX Runtime's registration) => "
           "ai.ferry::LayerNormalization; FusedMatMul with transBatch => Transpose, MatMul, Mul (for "
           "fuse_attention). Identity: the same computation; with target backends only.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (ctx.backends.empty()) return false;
    return ApplyTo(model, *model.graph, ctx);
  }

 private:
  static bool ApplyTo(ir::Model& model, ir::Graph& g, const PassContext& ctx) {
    bool changed = false;
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) nodes.push_back(n.get());
    for (ir::Node* n : nodes) {
      for (ir::Graph* sub : n->mutable_subgraphs()) changed |= ApplyTo(model, *sub, ctx);
      if (ctx.Frozen(*n)) continue;
      if (IsMs(*n, "FusedConv")) {
        changed |= AdoptFusedConv(model, g, ctx, n);
      } else if (IsMs(*n, "Gelu") && n->num_inputs() == 1) {
        changed |= AdoptGelu(model, g, ctx, n, false);
      } else if (IsMs(*n, "FastGelu") && (n->num_inputs() == 1 || !n->input(1))) {
        changed |= AdoptGelu(model, g, ctx, n, true);
      } else if ((IsMs(*n, "BiasGelu") || IsMs(*n, "FastGelu")) && n->num_inputs() == 2) {
        changed |= AdoptBiasGelu(model, g, ctx, n, n->op_type() == "FastGelu");
      } else if (IsMs(*n, "FusedMatMul") || IsMs(*n, "TransposeMatMul")) {
        changed |= AdoptBatchTransposedMatMul(model, g, ctx, n);
      } else if (n->domain().empty() && n->op_type() == "LayerNormalization" && n->opset() < 17) {
        changed |= AdoptLayerNorm(model, g, ctx, n);
      }
    }
    if (changed) g.TopologicalSort();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAdoptOrtOps() { return std::make_unique<AdoptOrtOps>(); }

}  // namespace ferry::passes
