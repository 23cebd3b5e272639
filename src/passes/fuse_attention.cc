// FuseAttention (level 2): the core of a transformer's attention as exporters write it,
//   P = Softmax([Add(] [Mul|Div(] MatMul(Q', Kt) [, c)] [, mask)], axis = last);  Y = MatMul(P, V)
// with Q' = Q or Mul(Q, c) / Div(Q, c), and Kt either Transpose(K') swapping the last two axes (then K' = K or K
// scaled the same way, read directly: k_transposed = 0) or any other value [..., Dh, Sk], itself maybe scaled
// (k_transposed = 1: the PyTorch export's Transpose(K, perm = [1, 2, 0]) stays a node of its own)
//   =>  Y = ai.ferry::Attention(Q, K, V, mask) {scale = the product of the factors c (1 / c for Div)}.
// Identity: Softmax(s * (Q Kᵀ) + mask) V with s the product of the constant scalar factors: scaling Q, K or the
// scores by a scalar commutes with the matrix product, so the scaled scores equal the unfused ones up to float
// re-association; the leading dims broadcast in Attention as in the MatMuls and the Add it replaces (schemas_ferry.cc).
// Also a FusedMatMul(Q, Kt, C) without activation (what fuse_matmul makes of a constant [Sk] mask added right
// after the product) as the scores, C as the mask; and ONNX Runtime's com.microsoft::FusedMatMul(Q, K) (its
// files at level `extended`) with the scale as `alpha`, K itself when transB = 1, and no transA / transBatch.
// Only for float; a scale factor is a float constant of one element whose rank does not exceed the tensor's (so
// the product keeps its shape) and whose factor is finite and nonzero; the ranks of Q, K, V and the mask must be
// known and the mask's last two dims provably 1 or Sq / Sk (static or the same symbol), so that the Add does not
// broadcast the scores themselves; the Softmax normalizes the last axis (opset 13 on: axis -1 or rank - 1; below:
// axis = rank - 1, where the 2-D coercion is the row softmax); each intermediate has no other reader (and is no
// graph output); and every replaced node runs on one backend, where the fused node would run too.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

// What one attention core is made of, gathered before anything is rewritten.
struct Match {
  std::vector<ir::Node*> nodes;  // every node replaced, the QK product first
  ir::Value *q = nullptr, *k = nullptr, *v = nullptr, *mask = nullptr;
  bool k_transposed = true;
  float scale = 1.0f;
  // The largest rank of a scale constant applied to Q, to K, and to the scores (-1: none): it must not exceed the
  // rank of what it scales.
  int64_t q_scale_rank = -1, k_scale_rank = -1, s_scale_rank = -1;
};

// `y` = Mul(x, c), Mul(c, x) or Div(x, c) with c a float constant of one element, y read only by `reader`:
// returns x, multiplies m->scale by the factor (1 / c for Div), records the node and raises *rank to c's rank.
ir::Value* PeelScale(const ir::Graph& g, ir::Value* y, const ir::Node* reader, Match* m, int64_t* rank) {
  ir::Node* n = y ? y->producer() : nullptr;
  const bool mul = IsOp(n, "Mul"), div = IsOp(n, "Div");
  // Before opset 7, Mul and Div broadcast by their `broadcast` / `axis` attributes: left alone.
  if ((!mul && !div) || n->owner() != &g || n->opset() < 7 || n->num_inputs() != 2 || !DeclaresFloat(y) ||
      SoleConsumer(g, y) != reader) {
    return nullptr;
  }
  for (size_t side = 0; side < 2; ++side) {
    if (div && side == 0) continue;  // Div(c, x) is no scaling of x
    ir::Value* c = n->input(side);
    ir::Value* x = n->input(1 - side);
    const Tensor* t = ConstantTensor(g, c);
    if (!x || x == c || !t || t->dtype() != DataType::kFloat || t->size() != 1) continue;
    const float value = t->data<float>()[0];
    const float factor = div ? 1.0f / value : value;
    if (!std::isfinite(value) || !std::isfinite(factor) || factor == 0.0f) return nullptr;
    m->scale *= factor;
    m->nodes.push_back(n);
    *rank = std::max<int64_t>(*rank, t->rank());
    return x;
  }
  return nullptr;
}

// Transpose(x) -> y swapping the last two axes of x (rank known), y read only by `reader`: returns x.
ir::Value* PeelSwap(const ir::Graph& g, ir::Value* y, const ir::Node* reader, Match* m) {
  ir::Node* n = y ? y->producer() : nullptr;
  if (!IsOp(n, "Transpose") || n->owner() != &g || SoleConsumer(g, y) != reader || !n->input(0)) return nullptr;
  const auto dims = KnownDims(n->input(0));
  if (!dims || dims->size() < 2) return nullptr;
  const int64_t r = static_cast<int64_t>(dims->size());
  std::vector<int64_t> swap(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) swap[static_cast<size_t>(i)] = i;
  std::swap(swap[static_cast<size_t>(r - 2)], swap[static_cast<size_t>(r - 1)]);
  std::vector<int64_t> perm = n->GetInts("perm");
  if (perm.empty() && r == 2) perm = {1, 0};  // no perm: all axes reversed
  if (perm != swap) return nullptr;
  m->nodes.push_back(n);
  return n->input(0);
}

// The scores value `s` read only by `reader`: [Mul|Div(] MatMul(Q', Kt) [, c)], or FusedMatMul(Q, Kt, C) with no
// activation when `allow_bias` (then C is the mask). Fills m's Q, K, scale and nodes (the product first).
bool MatchScores(const ir::Graph& g, ir::Value* s, const ir::Node* reader, bool allow_bias, Match* out) {
  Match m = *out;
  std::vector<ir::Node*> scaled;  // a scale on the scores, recorded after the product
  if (ir::Value* x = PeelScale(g, s, reader, &m, &m.s_scale_rank)) {
    scaled.push_back(m.nodes.back());
    m.nodes.pop_back();
    reader = scaled.back();
    s = x;
    allow_bias = false;  // a mask C would be scaled too
  }
  ir::Node* mm = s ? s->producer() : nullptr;
  bool ms_trans_b = false;  // a com.microsoft::FusedMatMul reading K itself (transB)
  if (!mm || mm->owner() != &g || SoleConsumer(g, s) != reader || mm->num_outputs() != 1) return false;
  if (mm->domain() == schemas::kFerryDomain && mm->op_type() == "FusedMatMul") {
    if (!allow_bias || mm->num_inputs() != 3 || !mm->input(2) || !mm->GetString("activation", "").empty()) {
      return false;
    }
    m.mask = mm->input(2);
  } else if (mm->domain() == schemas::kMsDomain && mm->op_type() == "FusedMatMul") {
    // ONNX Runtime's MatMul with the scale folded in (alpha) and maybe Kᵀ (transB); no batch transposes.
    if (mm->num_inputs() != 2 || mm->GetInt("transA", 0) || mm->GetInt("transBatchA", 0) ||
        mm->GetInt("transBatchB", 0) || ir::RankOrMinusOne(mm->input(0)) < 2 ||
        ir::RankOrMinusOne(mm->input(1)) < 2) {
      return false;
    }
    const float alpha = mm->GetFloat("alpha", 1.0f);
    if (!std::isfinite(alpha) || alpha == 0.0f) return false;
    m.scale *= alpha;
    ms_trans_b = mm->GetInt("transB", 0) != 0;
  } else if (!IsOp(mm, "MatMul") || mm->num_inputs() != 2) {
    return false;
  }
  m.nodes.push_back(mm);
  m.nodes.insert(m.nodes.end(), scaled.begin(), scaled.end());
  m.q = mm->input(0);
  if (ir::Value* x = PeelScale(g, m.q, mm, &m, &m.q_scale_rank)) m.q = x;
  m.k = mm->input(1);
  const ir::Node* k_reader = mm;
  if (ir::Value* x = PeelScale(g, m.k, k_reader, &m, &m.k_scale_rank)) {
    m.k = x;
    k_reader = m.nodes.back();
  }
  if (ms_trans_b) {
    m.k_transposed = false;
  } else if (ir::Value* x = PeelSwap(g, m.k, k_reader, &m)) {
    m.k = x;
    m.k_transposed = false;
    if (ir::Value* y = PeelScale(g, m.k, m.nodes.back(), &m, &m.k_scale_rank)) m.k = y;
  }
  if (!m.q || !m.k) return false;
  *out = std::move(m);
  return true;
}

// Equal as a static value or as the same symbol.
bool SameDim(const ir::Dim& a, const ir::Dim& b) {
  return (a.is_static() && b.is_static() && a.value == b.value) ||
         (!a.is_static() && !b.is_static() && !a.symbol.empty() && a.symbol == b.symbol);
}
bool OneOr(const ir::Dim& d, const ir::Dim& want) { return (d.is_static() && d.value == 1) || SameDim(d, want); }

// The attention core whose Softmax is `sm`, or false.
bool MatchAttention(const ir::Graph& g, ir::Node* sm, Match* m) {
  ir::Value* p = sm->output(0);
  ir::Value* s = sm->input(0);
  if (!IsOp(sm, "Softmax") || sm->owner() != &g || sm->num_outputs() != 1 || !DeclaresFloat(s) || !DeclaresFloat(p)) {
    return false;
  }
  ir::Node* mm2 = SoleConsumer(g, p);
  if (!IsOp(mm2, "MatMul") || mm2->num_inputs() != 2 || mm2->input(0) != p || mm2->input(1) == p ||
      !DeclaresFloat(mm2->input(1)) || !DeclaresFloat(mm2->output(0))) {
    return false;
  }
  m->v = mm2->input(1);
  ir::Node* add = s->producer();
  bool found = false;
  if (IsOp(add, "Add") && add->owner() == &g && add->opset() >= 7 && add->num_inputs() == 2 &&
      SoleConsumer(g, s) == sm) {
    for (size_t side = 0; side < 2 && !found; ++side) {
      ir::Value* scores = add->input(side);
      ir::Value* mask = add->input(1 - side);
      if (!scores || !mask || scores == mask || !DeclaresFloat(mask)) continue;
      if (MatchScores(g, scores, add, false, m)) {
        m->mask = mask;
        m->nodes.push_back(add);
        found = true;
      }
    }
  }
  if (!found && !MatchScores(g, s, sm, true, m)) return false;
  m->nodes.push_back(sm);
  m->nodes.push_back(mm2);
  if (!DeclaresFloat(m->q) || !DeclaresFloat(m->k) || !DeclaresFloat(m->nodes.front()->output(0))) return false;
  if (!std::isfinite(m->scale) || m->scale == 0.0f) return false;  // factors whose product over- or underflows

  // Shapes: known ranks >= 2 for Q, K, V; the scale constants keep their operand's shape; the mask broadcasts
  // into the scores without growing their last two dims; the Softmax normalizes the last axis.
  const auto q = KnownDims(m->q), k = KnownDims(m->k), v = KnownDims(m->v);
  if (!q || !k || !v || q->size() < 2 || k->size() < 2 || v->size() < 2) return false;
  const int64_t qr = static_cast<int64_t>(q->size()), kr = static_cast<int64_t>(k->size());
  int64_t rank = std::max(qr, kr);  // the scores'
  if (m->q_scale_rank > qr || m->k_scale_rank > kr || m->s_scale_rank > rank) return false;
  if (m->mask) {
    const auto md = KnownDims(m->mask);
    if (!md) return false;
    const ir::Dim& sq = (*q)[q->size() - 2];
    const ir::Dim& sk = m->k_transposed ? k->back() : (*k)[k->size() - 2];
    if (!md->empty() && !OneOr(md->back(), sk)) return false;
    if (md->size() >= 2 && !OneOr((*md)[md->size() - 2], sq)) return false;
    rank = std::max(rank, static_cast<int64_t>(md->size()));
  }
  int64_t axis = sm->GetInt("axis", sm->opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

class FuseAttention : public Pass {
 public:
  std::string_view name() const override { return "fuse_attention"; }
  int level() const override { return 2; }
  std::string_view summary() const override {
    return "Softmax([scale *] MatMul(Q, Kᵀ) [+ mask]) -> MatMul(·, V), the scale a constant scalar Mul/Div on Q, K "
           "or the scores, => ai.ferry::Attention(Q, K, V, mask) {scale, k_transposed}. Identity: a scalar factor "
           "commutes with the matrix product; exact up to float re-association.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> softmaxes;
    for (const auto& n : g.nodes()) {
      if (IsOp(n.get(), "Softmax")) softmaxes.push_back(n.get());
    }
    bool changed = false;
    for (ir::Node* sm : softmaxes) changed = Fuse(model, g, ctx, sm) || changed;
    if (changed) g.TopologicalSort();
    return changed;
  }

 private:
  static bool Fuse(ir::Model& model, ir::Graph& g, const PassContext& ctx, ir::Node* sm) {
    Match m;
    if (!MatchAttention(g, sm, &m)) return false;
    // Every replaced node runs where the QK product runs (frozen nodes run nowhere here), and so would the fused
    // node: placement would not move work between backends.
    ir::Node* anchor = m.nodes.front();
    const Backend* home = ctx.BackendFor(*anchor);
    if (!home) return false;
    for (const ir::Node* n : m.nodes) {
      if (ctx.BackendFor(*n) != home) return false;
    }
    std::vector<ir::Value*> inputs{m.q, m.k, m.v};
    if (m.mask) inputs.push_back(m.mask);
    const std::vector<ir::Attribute> attrs{FloatAttr("scale", m.scale), IntAttr("k_transposed", m.k_transposed)};
    const std::string domain(schemas::kFerryDomain);
    if (!WouldRunOn(g, ctx, home, domain, "Attention", 1, inputs, attrs)) return false;
    ir::Value* y = m.nodes.back()->output(0);
    std::vector<ir::Value*> dead;  // the intermediates, unread once the nodes are gone
    for (const ir::Node* n : m.nodes) {
      for (ir::Value* o : n->outputs()) {
        if (o && o != y) dead.push_back(o);
      }
    }
    const std::string name = anchor->name();
    for (ir::Node* n : m.nodes) g.RemoveNode(n);
    AddFerryNode(model, g, name, "Attention", inputs, {y}, attrs);
    for (ir::Value* v : dead) g.RemoveValue(v);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeFuseAttention() { return std::make_unique<FuseAttention>(); }

}  // namespace ferry::passes
