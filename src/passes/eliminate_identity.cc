// EliminateIdentity (level 1): removes nodes that compute their input unchanged, so their readers read the input:
//   - Identity;
//   - Dropout in inference: every opset before 12 (Ferry runs them as inference, as ONNX Runtime does), and
//     opset 12+ without a training_mode input or with a constant false one (ratio is then irrelevant). Only when
//     the mask output is absent or unread: a read mask keeps the node (it is rare, and replacing it needs a
//     static shape for an all-true constant);
//   - Cast to the dtype its input already has (opset 19's `saturate` is then irrelevant), CastLike to its own type;
//   - Reshape, Flatten, Squeeze, Unsqueeze whose output shape equals the input shape, all dims static;
//   - Pad by nothing: every pad 0 (the attribute before opset 11, a constant input from 11), in any mode (the
//     PyTorch exporter writes one before each AvgPool2d);
// and shortens chains: Reshape(R(x), s) => Reshape(x, s) for R a Reshape, Flatten, Squeeze or Unsqueeze read
// only by that Reshape, when the constant shape s has no 0 entry (or allowzero=1).
// Identities: Identity(x) = x; Dropout(x) = x in inference; Cast(x, to=dtype(x)) = x; a reshape to the input's
// own shape is x; Pad(x, 0...) = x; a Reshape's result depends on its input's elements in row-major order and its
// element count only, which a reshaping R does not change (a 0 entry in s would copy a dim of R's output:
// excluded). Exact.
// When the removed node's output is a graph output, the input's producer is rebuilt to write that name; when the
// input is graph-visible itself (a graph input or output, an initializer), the node stays: it joins two names.
// Readers inside subgraphs (outer-scope captures) are redirected too.
#include <algorithm>
#include <span>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"

namespace ferry::passes {
namespace {

bool IsOnnx(const ir::Node& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

bool IsReshaping(const ir::Node& n) {
  const std::string& op = n.op_type();
  return IsOnnx(n) && (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze");
}

// Both values have one shape with every dim static.
bool SameStaticShape(const ir::Value* a, const ir::Value* b) {
  const auto da = KnownDims(a), db = KnownDims(b);
  if (!da || !db || *da != *db) return false;
  for (const ir::Dim& d : *da) {
    if (!d.is_static()) return false;
  }
  return true;
}

// True when Dropout `n` runs as inference: before opset 12 always, from 12 unless training_mode is given and not a
// constant false.
bool IsInferenceDropout(const ir::Graph& g, const ir::Node& n) {
  if (n.opset() < 12) return true;
  const ir::Value* training = n.input(2);
  if (!training) return true;
  const Tensor* t = ConstantTensor(g, training);
  return t && t->dtype() == DataType::kBool && t->size() == 1 && !t->data<bool>()[0];
}

// True when Pad `n` adds nothing: every pad 0 (`paddings` at opset 1, `pads` up to 10, the pads input from 11).
bool PadsNothing(const ir::Graph& g, const ir::Node& n) {
  auto zeros = [](std::span<const int64_t> v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](int64_t p) { return p == 0; });
  };
  if (n.opset() < 11) {
    const ir::Attribute* pads = n.attr(n.opset() < 2 ? "paddings" : "pads");
    return pads && pads->type == ir::AttrType::kInts && zeros(pads->ints);
  }
  const Tensor* t = ConstantTensor(g, n.input(1));
  return t && t->dtype() == DataType::kInt64 && zeros(std::span(t->data<int64_t>(), static_cast<size_t>(t->size())));
}

// Whether `n`'s first output equals its first input.
bool ComputesItsInput(const ir::Graph& g, const ir::Node& n) {
  if (!IsOnnx(n) || !n.input(0) || !n.output(0)) return false;
  const std::string& op = n.op_type();
  if (op == "Identity") return true;
  if (op == "Dropout") return IsInferenceDropout(g, n);
  if (op == "Cast") {
    const ir::Attribute* to = n.attr("to");
    const DataType in = ir::ElementType(n.input(0));
    return to && to->type == ir::AttrType::kInt && in != DataType::kUndefined && static_cast<int64_t>(in) == to->i;
  }
  if (op == "CastLike") {
    const DataType in = ir::ElementType(n.input(0));
    return in != DataType::kUndefined && in == ir::ElementType(n.input(1));
  }
  if (IsReshaping(n)) return SameStaticShape(n.input(0), n.output(0));
  if (op == "Pad") return PadsNothing(g, n);
  return false;
}

// Reshape(R(x), s) => Reshape(x, s). Returns true when it rewrote.
bool ShortenChain(ir::Graph& g, const PassContext& ctx, ir::Node* outer) {
  if (!IsOnnx(*outer) || outer->op_type() != "Reshape" || outer->opset() < 5 || ctx.Frozen(*outer)) return false;
  ir::Value* mid = outer->input(0);
  ir::Node* inner = mid ? mid->producer() : nullptr;
  if (!inner || inner->owner() != &g || !IsReshaping(*inner) || ctx.Frozen(*inner) || !inner->input(0) ||
      inner->output(0) != mid || SoleConsumer(g, mid) != outer || outer->input(1) == mid) {
    return false;
  }
  for (size_t i = 1; i < inner->num_outputs(); ++i) {
    if (inner->output(i)) return false;
  }
  const Tensor* s = ConstantTensor(g, outer->input(1));
  if (!s || s->dtype() != DataType::kInt64) return false;
  const ir::Attribute* allowzero = outer->attr("allowzero");
  if (allowzero && allowzero->type != ir::AttrType::kInt) return false;
  if (!allowzero || allowzero->i == 0) {
    for (int64_t i = 0; i < s->size(); ++i) {
      if (s->data<int64_t>()[i] == 0) return false;
    }
  }
  outer->ReplaceInput(0, inner->input(0));
  if (IsRead(g, mid)) {  // a subgraph output names it
    outer->ReplaceInput(0, mid);
    return false;
  }
  const std::vector<ir::Value*> inner_inputs = inner->inputs();
  g.RemoveNode(inner);
  g.RemoveValue(mid);
  RemoveUnreadInitializers(g, inner_inputs);
  return true;
}

class EliminateIdentity : public Pass {
 public:
  std::string_view name() const override { return "eliminate_identity"; }
  int level() const override { return 1; }
  std::string_view summary() const override {
    return "Removes Identity, inference Dropout, Cast to the input's own dtype and reshapes to the input's own "
           "static shape, Pad by zeros; Reshape(Reshape(x, s1), s2) => Reshape(x, s2). Identity: each computes its "
           "input; exact.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    ir::Graph& g = *model.graph;
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      bool renamed = false;
      std::vector<ir::Node*> nodes;
      for (const auto& n : g.nodes()) nodes.push_back(n.get());
      for (ir::Node* n : nodes) {
        if (ctx.Frozen(*n)) continue;
        if (ShortenChain(g, ctx, n)) again = true;
        if (!ComputesItsInput(g, *n)) continue;
        bool removable = CanForward(g, ctx, n->output(0), n->input(0));
        for (size_t i = 1; i < n->num_outputs(); ++i) {
          if (n->output(i) && IsRead(g, n->output(i))) removable = false;  // a Dropout mask
        }
        if (!removable) continue;
        ir::Value* x = n->input(0);
        ir::Value* y = n->output(0);
        std::vector<ir::Value*> ins = n->inputs();
        const std::vector<ir::Value*> outs = n->outputs();
        g.RemoveNode(n);
        for (size_t i = 1; i < outs.size(); ++i) {
          if (outs[i]) g.RemoveValue(outs[i]);
        }
        const bool moved = Forward(g, y, x);  // when moved, x is gone (y took its place)
        if (moved) std::replace(ins.begin(), ins.end(), x, static_cast<ir::Value*>(nullptr));
        RemoveUnreadInitializers(g, ins);
        renamed = renamed || moved;
        again = true;
      }
      if (renamed) g.TopologicalSort();
      changed = changed || again;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEliminateIdentity() { return std::make_unique<EliminateIdentity>(); }

}  // namespace ferry::passes
