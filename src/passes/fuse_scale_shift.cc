// FuseScaleShift (level 2): elementwise affine maps by constants, and the activation after them, as one
// ai.ferry::ScaleShift (schemas_ferry.cc), so a backend makes one pass over the tensor instead of two or three:
//   Mul(X, S) -> Add(·, T), S and T constant float tensors that broadcast to X's shape without growing it, either
//     operand order of each => ScaleShift(X, S, T)
//   BatchNormalization in inference mode with constant per-channel parameters (one the conv fusions could not
//     fold: DenseNet's and pre-activation ResNets' BN -> ReLU before a conv), followed by an activation =>
//     ScaleShift(X, S, T) {activation}, S = scale / sqrt(var + epsilon) and T = bias - mean * S of shape
//     [C, 1, ...] (rewrite_util.h: BatchNormAffine); a BatchNormalization alone stays (its kernels are one pass)
//   ScaleShift without an activation, followed by one (fusion_util.h: ActivationPattern) => ScaleShift
//     {activation}
// Identity: ScaleShift's definition, act(X * S + T) with each operation rounded as the op it replaces; the
// BatchNormalization's re-association into S and T is exact up to float rounding, as fold_batch_norm's. Each
// rewrite only where ScaleShift runs on the backend that ran the first node it replaces (ReplaceWithFused). It
// runs after the normalization and attention fusions, whose patterns hold Mul and Add of constants, and before
// blocked_layout, which runs a per-channel ScaleShift on the blocked layout.
#include <string>
#include <vector>

#include "passes/cleanup_util.h"
#include "passes/fusion_util.h"
#include "passes/pass_list.h"
#include "passes/pattern.h"
#include "passes/rewrite_util.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

const std::string kFerry(schemas::kFerryDomain);

// A constant float `p` that broadcasts to `x`'s dims without growing them (x's dims may be symbolic where p's
// are 1).
bool BroadcastsInto(const ir::Graph& g, const ir::Value* p, const ir::Value* x) {
  const Tensor* t = ConstantTensor(g, p);
  const auto xd = KnownDims(x);
  if (!t || t->dtype() != DataType::kFloat || !xd || !IsFloatTensor(x)) return false;
  if (static_cast<size_t>(t->rank()) > xd->size()) return false;
  const Shape& s = t->shape();
  for (size_t d = 0; d < s.size(); ++d) {
    const ir::Dim& xdim = (*xd)[xd->size() - s.size() + d];
    if (s[d] != 1 && !(xdim.is_static() && xdim.value == s[d])) return false;
  }
  return true;
}

bool RewriteMulAdd(const Match& m, ir::Model& model, const PassContext& ctx) {
  ir::Graph& g = *model.graph;
  ir::Value* x = m.value("x");
  ir::Value* s = m.value("s");
  ir::Value* t = m.value("t");
  if (!BroadcastsInto(g, s, x) || !BroadcastsInto(g, t, x)) return false;
  ir::Node* add = m.root();
  return ReplaceWithFused(model, g, ctx, "ScaleShift", m.node("mul"), {add}, {x, s, t}, add->output(0), {}, false) !=
         nullptr;
}

// A per-channel constant of X's rank: [C, 1, ...] (rank - 1 dims; [C] for a rank-2 X).
ir::Value* ChannelConstant(ir::Graph& g, const std::string& base, const std::vector<float>& v, size_t rank) {
  Shape shape(rank - 1, 1);
  shape[0] = static_cast<int64_t>(v.size());
  Tensor t(DataType::kFloat, shape);
  std::copy(v.begin(), v.end(), t.data<float>());
  return g.AddInitializer(UniqueValueName(g, base), std::make_shared<const Tensor>(std::move(t)));
}

bool RewriteBatchNorm(const Match& m, ir::Model& model, const PassContext& ctx) {
  ir::Graph& g = *model.graph;
  ir::Node* bn = m.node("bn");
  const auto act = ActivationOf(g, m);
  ir::Value* x = bn->input(0);
  const auto xd = KnownDims(x);
  if (!act || !xd || xd->size() < 2 || !(*xd)[1].is_static() || !IsFloatTensor(x) || !BatchNormInferenceMode(g, *bn)) {
    return false;
  }
  const auto affine = BatchNormAffine(g, *bn, (*xd)[1].value);
  if (!affine) return false;
  ir::Value* s = ChannelConstant(g, bn->name() + "_scale", affine->scale, xd->size());
  ir::Value* t = ChannelConstant(g, bn->name() + "_shift", affine->shift, xd->size());
  const std::vector<ir::Value*> params(bn->inputs().begin() + 1, bn->inputs().end());
  if (!ReplaceWithFused(model, g, ctx, "ScaleShift", bn, act->nodes, {x, s, t}, act->output, act->Attributes(),
                        false)) {
    g.RemoveInitializer(s);
    g.RemoveInitializer(t);
    return false;
  }
  RemoveUnreadInitializers(g, params);  // the BN's, unless another node reads them
  return true;
}

bool HasNoActivation(const ir::Node& n) { return n.GetString("activation", "").empty(); }

bool RewriteActivation(const Match& m, ir::Model& model, const PassContext& ctx) {
  const auto act = ActivationOf(*model.graph, m);
  ir::Node* ss = m.node("ss");
  if (!act) return false;
  std::vector<ir::Value*> inputs(ss->inputs().begin(), ss->inputs().end());
  return ReplaceWithFused(model, *model.graph, ctx, "ScaleShift", ss, act->nodes, std::move(inputs), act->output,
                          act->Attributes()) != nullptr;
}

const std::vector<Rule>& Rules() {
  static const std::vector<Rule> rules = [] {
    const Pattern mul = Commutative("Mul", {Any("x"), Const("s")}).As("mul");
    const Pattern bn = Op("BatchNormalization").As("bn");
    const Pattern ss = Op("ScaleShift").Domain(kFerry).Where(HasNoActivation).As("ss");
    return std::vector<Rule>{
        {"batch_norm_activation", ActivationPattern(bn),
         "act(BatchNormalization(X)) = ScaleShift(X, S, T) {act}, S = scale / sqrt(var + eps), T = B - mean * S",
         RewriteBatchNorm},
        {"scale_shift_activation", ActivationPattern(ss), "act(ScaleShift(X, S, T)) = ScaleShift(X, S, T) {act}",
         RewriteActivation},
        {"mul_add", Commutative("Add", {mul, Const("t")}), "X * S + T = ScaleShift(X, S, T)", RewriteMulAdd},
    };
  }();
  return rules;
}

class FuseScaleShift : public Pass {
 public:
  std::string_view name() const override { return "fuse_scale_shift"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Mul and Add by constants that broadcast to X (X * S + T), and an inference BatchNormalization "
           "followed by an activation => ai.ferry::ScaleShift(X, S, T), with the activation after it fused in. "
           "Identity: ScaleShift's definition, each operation rounded as the op it replaces; the "
           "BatchNormalization's re-association into S and T as fold_batch_norm's.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override { return ApplyRules(model, ctx, Rules()); }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseScaleShift() { return std::make_unique<FuseScaleShift>(); }

}  // namespace ferry::passes
