// BlockedLayout (level 3): runs chains of convolutions, pools and elementwise ops in a backend's blocked channel
// layout (ai.ferry ops, schemas_ferry.cc) with reorders only where the chain meets a plain reader.
//
// For a backend that asks for a layout (Backend::activation_block: a channel block, or 0 for channels-last), in
// topological order:
//   Conv / FusedConv (2-D, float, constant weights, static channel count) => BlockedConv (X plain when it has
//                                                     fewer channels than a block b > 0 and is not blocked already)
//   MaxPool / AveragePool / Global{Average,Max}Pool on a blocked input => BlockedPool
//   Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, ai.ferry::Gelu and ONNX Runtime's one-input
//     QuickGelu, Gelu, FastGelu on a blocked input => the same op on the blocked tensor
//   Add, Sub, Mul with both inputs blocked and of the output's channel count => the same op on the blocked
//     tensors (numpy broadcasting over [N, C/b, H, W, b] is the broadcasting over [N, C, H, W])
//   Concat along the channels with an input blocked and every input's channel count a whole number of blocks
//     => Concat of the blocked tensors along their block axis (1; channels-last: along the last axis, any
//     counts): [N, C1/b, H, W, b] ++ [N, C2/b, H, W, b] is the blocked [N, (C1+C2)/b, H, W, b] (Inception's,
//     DenseNet's and SqueezeNet's branch merges)
//   BatchNormalization in inference mode on a blocked input, with constant per-channel parameters =>
//     ai.ferry::ScaleShift by S = scale / sqrt(var + epsilon) and T = bias - mean * S, as constants of the
//     blocked shape [1, C/b, 1, 1, b] ([C] channels-last) with 0 in the padding lanes (DenseNet's pre-activation
//     BN -> ReLU -> conv, which fold_batch_norm has no conv to fold into; within float re-association, as that
//     pass)
//   ai.ferry::ScaleShift (fuse_scale_shift) on a blocked input, with constant per-channel (or one-element) scale
//     and shift => the same by blocked constants of that shape
// Identity: each rewritten op computes, element for element, what the original computes (blocked addressing of
// the same values); the padding channels of a block b > 0 hold finite values no reader uses: the listed elementwise ops
// map 0 (what convolutions and reorders write there) to finite values, and Div, which would not, is not listed.
// A plain value the chain produces gets a ReorderFromBlocked where a plain reader or a graph output needs it; a
// plain value a chain reads gets one ReorderToBlocked. Each rewrite happens only when the new node runs on the
// backend that ran the old one.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "passes/cleanup_util.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"

namespace ferry::passes {
namespace {

bool IsUnary(const ir::Node& n) {
  static const std::unordered_set<std::string> ops = {"Relu",    "LeakyRelu",   "Clip",     "Sigmoid",
                                                      "Tanh",    "HardSigmoid", "HardSwish"};
  if (n.domain().empty()) return ops.count(n.op_type()) > 0;
  if (n.domain() == schemas::kFerryDomain) return n.op_type() == "Gelu";
  // ONNX Runtime's elementwise activations of one input (a FastGelu bias would broadcast along the last dim).
  if (n.domain() == schemas::kMsDomain) {
    const std::string& op = n.op_type();
    return (op == "QuickGelu" || op == "Gelu" || op == "FastGelu") && (n.num_inputs() == 1 || !n.input(1));
  }
  return false;
}
bool IsBinary(const ir::Node& n) {
  return n.domain().empty() && (n.op_type() == "Add" || n.op_type() == "Sub" || n.op_type() == "Mul");
}
bool IsPool(const ir::Node& n) {
  if (!n.domain().empty()) return false;
  const std::string& op = n.op_type();
  if (op == "MaxPool") return n.num_outputs() < 2 || n.output(1) == nullptr;
  return op == "AveragePool" || op == "GlobalAveragePool" || op == "GlobalMaxPool";
}
bool IsChannelConcat(const ir::Node& n) {
  if (!n.domain().empty() || n.op_type() != "Concat" || n.num_outputs() != 1) return false;
  const int64_t axis = n.GetInt("axis", 0);
  return axis == 1 || axis == -3;  // of a rank-4 output (BlockableDims checks the rank)
}
bool IsConv(const ir::Node& n) {
  if (n.domain() == schemas::kFerryDomain) return n.op_type() == "FusedConv";
  if (!n.domain().empty() || n.op_type() != "Conv") return false;
  const std::string pad = n.GetString("auto_pad", "NOTSET");
  return n.opset() >= 11 || (pad != "SAME_UPPER" && pad != "SAME_LOWER");
}

int64_t Blocks(int64_t channels, int64_t block) { return (channels + block - 1) / block; }

// A rank-4 tensor with a static channel count: what can be blocked (other dims may be symbolic).
std::optional<std::vector<ir::Dim>> BlockableDims(const ir::Value* v) {
  auto d = KnownDims(v);
  if (!d || d->size() != 4 || !(*d)[1].is_static() || !DeclaresFloat(v)) return std::nullopt;
  return d;
}

// [N, C, D...] -> [N, ceil(C/b), D..., b]; block 0 (channels-last): [N, D..., C].
ir::TypeInfo BlockedType(std::vector<ir::Dim> d, int64_t block) {
  const ir::Dim c = d[1];
  if (block > 0) {
    d[1] = ir::Dim::Static(Blocks(c.value, block));
    d.push_back(ir::Dim::Static(block));
  } else {
    d.erase(d.begin() + 1);
    d.push_back(c);
  }
  return ir::TypeInfo::Tensor(DataType::kFloat, std::move(d));
}

class Rewriter {
 public:
  Rewriter(ir::Model& model, const PassContext& ctx) : model_(model), g_(*model.graph), ctx_(ctx) {}

  bool Run() {
    std::vector<ir::Node*> order;
    for (const auto& n : g_.nodes()) order.push_back(n.get());
    for (ir::Node* n : order) {
      if (IsConv(*n)) {
        Conv(n);
      } else if (IsPool(*n)) {
        Pool(n);
      } else if (IsUnary(*n)) {
        Elementwise(n, 1);
      } else if (IsBinary(*n)) {
        Elementwise(n, 2);
      } else if (IsChannelConcat(*n)) {
        Concat(n);
      } else if (IsOp(n, "BatchNormalization")) {
        BatchNorm(n);
      } else if (n->domain() == schemas::kFerryDomain && n->op_type() == "ScaleShift") {
        ScaleShift(n);
      }
    }
    if (converted_.empty()) {
      for (auto& [plain, twin] : twins_) Undo(twin);  // reorders nobody reads
      return false;
    }
    for (ir::Value* plain : converted_) {  // plain readers and graph outputs of a rewritten value
      if (plain->consumers().empty() && !IsGraphOutput(g_, plain)) {
        g_.RemoveValue(plain);
        continue;
      }
      AddFerryNode(model_, g_, plain->name() + "_to_plain", "ReorderFromBlocked", {twins_.at(plain)}, {plain},
                   {IntAttr("block", block_.at(plain)), IntAttr("channels", KnownDims(plain)->at(1).value)});
    }
    g_.TopologicalSort();
    return true;
  }

 private:
  // The layout the backend running `n` wants (a block, 0 for channels-last), nullopt for none.
  std::optional<int> Block(const ir::Node& n) const {
    const Backend* home = ctx_.BackendFor(n);
    return home ? home->activation_block(ctx_.target) : std::nullopt;
  }

  // The blocked twin of a plain rank-4 value: the rewritten producer's output, or a new ReorderToBlocked.
  ir::Value* Twin(ir::Value* plain, int block) {
    auto it = twins_.find(plain);
    if (it != twins_.end()) return block_.at(plain) == block ? it->second : nullptr;
    const auto dims = BlockableDims(plain);
    if (!dims) return nullptr;
    ir::Value* twin = ir::Builder(g_).AddValue(plain->name() + "_blocked", BlockedType(*dims, block));
    AddFerryNode(model_, g_, plain->name() + "_to_blocked", "ReorderToBlocked", {plain}, {twin},
                 {IntAttr("block", block)});
    twins_[plain] = twin;
    block_[plain] = block;
    return twin;
  }
  bool IsBlocked(ir::Value* v) const { return v && twins_.count(v) > 0; }

  // Replaces `old` by `op` (domain `domain`) reading `inputs`, when the backend that runs `old` runs it too.
  // By value: `op` is often old->op_type(), which dies with `old`.
  bool Replace(ir::Node* old, std::string domain, std::string op, std::vector<ir::Value*> inputs,
               std::vector<ir::Attribute> attrs, int block) {
    ir::Value* y = old->output(0);
    const auto ydims = BlockableDims(y);
    if (!ydims) return false;
    const bool ferry = domain == schemas::kFerryDomain;  // else the op keeps its domain and opset
    if (!WouldRunOn(g_, ctx_, ctx_.BackendFor(*old), domain, op, ferry ? 1 : old->opset(), inputs, attrs)) {
      return false;
    }
    ir::Value* twin = ir::Builder(g_).AddValue(y->name() + "_blocked", BlockedType(*ydims, block));
    const std::string name = old->name();
    const int64_t opset = old->opset();
    g_.RemoveNode(old);
    ir::Node* n = ferry ? AddFerryNode(model_, g_, name, op, std::move(inputs), {twin}, std::move(attrs))
                        : g_.AddNode(name, op, domain, std::move(inputs), {twin}, std::move(attrs));
    if (!ferry) n->set_opset(opset);
    twins_[y] = twin;
    block_[y] = block;
    converted_.push_back(y);
    return true;
  }

  // A ReorderToBlocked made for a rewrite that did not happen.
  void Undo(ir::Value* twin) {
    if (!twin->consumers().empty()) return;
    ir::Node* reorder = twin->producer();
    if (!reorder || reorder->op_type() != "ReorderToBlocked") return;
    g_.RemoveNode(reorder);
    g_.RemoveValue(twin);
  }
  void Forget(ir::Value* plain) {
    auto it = twins_.find(plain);
    if (it == twins_.end() || it->second->producer() == nullptr ||
        it->second->producer()->op_type() != "ReorderToBlocked" || !it->second->consumers().empty()) {
      return;
    }
    Undo(it->second);
    twins_.erase(it);
    block_.erase(plain);
  }

  void Conv(ir::Node* n) {
    const auto layout = Block(*n);
    const auto xdims = BlockableDims(n->input(0));
    const Tensor* w = ConstantTensor(g_, n->input(1));  // weights packed once: constant only
    if (!layout || !xdims || !w || w->rank() != 4) return;
    const int block = *layout;
    // A plain input with fewer channels than a block (an RGB stem) is read as it is rather than padded.
    const bool plain_input = !IsBlocked(n->input(0)) && block > 0 && (*xdims)[1].value < block;
    ir::Value* x = plain_input ? n->input(0) : Twin(n->input(0), block);
    ir::Value* z = n->input(3);
    ir::Value* zb = z ? Twin(z, block) : nullptr;
    if (!x || (z && !zb)) {
      Forget(n->input(0));
      if (z) Forget(z);
      return;
    }
    std::vector<ir::Attribute> attrs = n->attributes();
    attrs.push_back(IntAttr("block", block));
    attrs.push_back(IntAttr("plain_input", plain_input ? 1 : 0));
    std::vector<ir::Value*> inputs{x, n->input(1), n->input(2)};
    if (zb) inputs.push_back(zb);
    ir::Value* x_plain = n->input(0);
    if (!Replace(n, std::string(schemas::kFerryDomain), "BlockedConv", inputs, std::move(attrs), block)) {
      Forget(x_plain);
      if (z) Forget(z);
    }
  }

  // MaxPool over a window that covers only padding is -inf: in a padding lane, where a convolution would then
  // multiply it by a zero weight, that is NaN. Such pools (a pad as large as the window) stay plain. With auto_pad
  // or ceil_mode the pads depend on X's size: then only when X's spatial dims are static, where BlockedPool's shape
  // predicate (asked through Replace) checks every window (SqueezeNet's ceil_mode pools).
  static bool WindowAlwaysReadsInput(const ir::Node& n) {
    if (n.op_type() != "MaxPool") return true;
    const std::vector<int64_t> k = n.GetInts("kernel_shape");
    const std::vector<int64_t> pads = n.GetInts("pads");
    const std::vector<int64_t> dil = n.GetInts("dilations");
    if (n.GetString("auto_pad", "NOTSET") != "NOTSET" || n.GetInt("ceil_mode", 0) != 0) {
      const ir::Value* x = n.input(0);
      if (!x || !x->type().is_tensor() || !x->type().shape || x->type().shape->size() < 3) return false;
      const auto& dims = *x->type().shape;
      if (!std::all_of(dims.begin() + 2, dims.end(), [](const ir::Dim& d) { return d.is_static(); })) return false;
    }
    for (size_t i = 0; i < pads.size() && !k.empty(); ++i) {
      const size_t d = i % k.size();
      const int64_t extent = (k[d] - 1) * (d < dil.size() ? dil[d] : 1) + 1;
      if (pads[i] >= extent) return false;
    }
    return true;
  }

  void Pool(ir::Node* n) {
    ir::Value* x = n->input(0);
    if (!IsBlocked(x) || !WindowAlwaysReadsInput(*n)) return;
    const auto layout = Block(*n);
    if (!layout || block_.at(x) != *layout) return;
    const int block = *layout;
    std::vector<ir::Attribute> attrs = n->attributes();
    attrs.push_back(StringAttr("mode", n->op_type()));
    attrs.push_back(IntAttr("block", block));
    Replace(n, std::string(schemas::kFerryDomain), "BlockedPool", {twins_.at(x)}, std::move(attrs), block);
  }

  void Elementwise(ir::Node* n, size_t arity) {
    const auto ydims = BlockableDims(n->output(0));
    if (!ydims) return;
    std::vector<ir::Value*> inputs(n->inputs().begin(), n->inputs().end());
    int block = -1;
    for (size_t i = 0; i < arity; ++i) {
      ir::Value* v = n->input(i);
      const auto d = BlockableDims(v);
      // Same channel count as the output: broadcasting along the channel dim does not survive blocking.
      if (!IsBlocked(v) || !d || (*d)[1].value != (*ydims)[1].value) return;
      if (block != -1 && block_.at(v) != block) return;
      block = static_cast<int>(block_.at(v));
      inputs[i] = twins_.at(v);
    }
    if (Block(*n) != std::optional<int>(block)) return;
    Replace(n, n->domain(), n->op_type(), std::move(inputs), n->attributes(), block);
  }

  // With no input blocked the plain Concat costs no reorder, so one must be; the plain ones get a
  // ReorderToBlocked (dropped again if the rewrite does not happen).
  void Concat(ir::Node* n) {
    const auto layout = Block(*n);
    if (!layout || n->inputs().empty()) return;
    const int block = *layout;
    bool any_blocked = false;
    for (ir::Value* v : n->inputs()) {
      const auto d = BlockableDims(v);
      if (!d || (block > 0 && (*d)[1].value % block != 0)) return;
      if (IsBlocked(v)) {
        if (block_.at(v) != block) return;
        any_blocked = true;
      }
    }
    if (!any_blocked) return;
    std::vector<ir::Value*> inputs, reordered;
    for (ir::Value* v : n->inputs()) {
      const bool was_blocked = IsBlocked(v);
      ir::Value* twin = Twin(v, block);
      if (!twin) {
        for (ir::Value* r : reordered) Forget(r);
        return;
      }
      if (!was_blocked) reordered.push_back(v);
      inputs.push_back(twin);
    }
    if (!Replace(n, "", "Concat", std::move(inputs), {IntAttr("axis", block > 0 ? 1 : 3)}, block)) {
      for (ir::Value* r : reordered) Forget(r);
    }
  }

  // A per-channel constant in the layout of a blocked tensor of `channels` channels.
  ir::Value* BlockedConstant(const std::string& base, const std::vector<float>& v, int block) {
    const int64_t channels = static_cast<int64_t>(v.size());
    Tensor t = block > 0 ? Tensor(DataType::kFloat, {1, Blocks(channels, block), 1, 1, block})
                         : Tensor(DataType::kFloat, {channels});
    std::fill(t.data<float>(), t.data<float>() + t.size(), 0.0f);  // the padding lanes
    std::copy(v.begin(), v.end(), t.data<float>());  // channel c sits at c in both layouts
    return g_.AddInitializer(UniqueValueName(g_, base), std::make_shared<const Tensor>(std::move(t)));
  }

  // The per-channel values of a ScaleShift parameter of a rank-4 X with `channels` channels: a constant float
  // whose dims, aligned to X's from the right, are all 1 but the channel dim (C or 1); nullopt otherwise.
  std::optional<std::vector<float>> PerChannel(const ir::Value* v, int64_t channels) const {
    const Tensor* t = ConstantTensor(g_, v);
    if (!t || t->dtype() != DataType::kFloat || t->rank() > 4) return std::nullopt;
    const Shape& s = t->shape();
    for (size_t d = 0; d < s.size(); ++d) {
      const bool channel_dim = s.size() - d == 3;
      if (s[d] != 1 && !(channel_dim && s[d] == channels)) return std::nullopt;
    }
    const float* p = t->data<float>();
    if (t->size() == 1) return std::vector<float>(static_cast<size_t>(channels), p[0]);
    return std::vector<float>(p, p + channels);
  }

  // X * scale + shift (and its activation) on a blocked X: ScaleShift by blocked per-channel constants.
  void ScaleShift(ir::Node* n) {
    ir::Value* x = n->input(0);
    const auto ydims = BlockableDims(n->output(0));
    const auto layout = Block(*n);
    if (!IsBlocked(x) || !ydims || !layout || block_.at(x) != *layout) return;
    const int64_t channels = (*ydims)[1].value;
    const auto scale = PerChannel(n->input(1), channels), shift = PerChannel(n->input(2), channels);
    if (!scale || !shift) return;
    const std::vector<ir::Value*> params{n->input(1), n->input(2)};
    if (ScaleShiftBlocked(n, *scale, *shift, n->attributes(), *layout)) RemoveUnreadInitializers(g_, params);
  }

  // An inference BatchNormalization on a blocked X: ScaleShift by its blocked per-channel affine (a backend without
  // ScaleShift keeps the BN plain).
  void BatchNorm(ir::Node* n) {
    ir::Value* x = n->input(0);
    if (n->num_inputs() != 5 || !IsBlocked(x) || !BatchNormInferenceMode(g_, *n)) return;
    const auto ydims = BlockableDims(n->output(0));
    const auto layout = Block(*n);
    if (!ydims || !layout || block_.at(x) != *layout) return;
    const auto affine = BatchNormAffine(g_, *n, (*ydims)[1].value);
    if (!affine) return;
    const std::vector<ir::Value*> params(n->inputs().begin() + 1, n->inputs().end());
    if (ScaleShiftBlocked(n, affine->scale, affine->shift, {}, *layout)) {
      RemoveUnreadInitializers(g_, params);  // the BN's, unless another node reads them
    }
  }

  // Replaces `n` (X its input 0, blocked) by ai.ferry::ScaleShift(X blocked, scale, shift) with `attrs`, the
  // constants laid out as the blocked tensor; false (nothing changed) when the backend has no such ScaleShift.
  bool ScaleShiftBlocked(ir::Node* n, const std::vector<float>& scale, const std::vector<float>& shift,
                         std::vector<ir::Attribute> attrs, int block) {
    const std::string name = n->name();
    ir::Value* s = BlockedConstant(name + "_scale_blocked", scale, block);
    ir::Value* t = BlockedConstant(name + "_shift_blocked", shift, block);
    if (Replace(n, std::string(schemas::kFerryDomain), "ScaleShift", {twins_.at(n->input(0)), s, t},
                std::move(attrs), block)) {
      return true;
    }
    g_.RemoveInitializer(s);
    g_.RemoveInitializer(t);
    return false;
  }

  ir::Model& model_;
  ir::Graph& g_;
  const PassContext& ctx_;
  std::unordered_map<ir::Value*, ir::Value*> twins_;  // plain value -> its blocked twin
  std::unordered_map<ir::Value*, int64_t> block_;     // plain value -> block of its twin
  std::vector<ir::Value*> converted_;                 // plain values whose producer now writes the twin
};

class BlockedLayout : public Pass {
 public:
  std::string_view name() const override { return "blocked_layout"; }
  int level() const override { return 3; }
  std::string_view summary() const override {
    return "Chains of convolutions, pools, elementwise ops and channel Concats => the same ops on the backend's "
           "blocked channel layout (ai.ferry::BlockedConv, BlockedPool, ReorderToBlocked/FromBlocked at the edges); "
           "an inference BatchNormalization or a per-channel ScaleShift on it => ScaleShift by blocked per-channel "
           "constants. Identity: a "
           "reorder is a permutation of elements, and these ops commute with it; exact, but for the "
           "BatchNormalization's re-association (as fold_batch_norm).";
  }
  bool Apply(ir::Model& model, const PassContext& ctx) const override { return Rewriter(model, ctx).Run(); }
};

}  // namespace

std::unique_ptr<Pass> MakeBlockedLayout() { return std::make_unique<BlockedLayout>(); }

}  // namespace ferry::passes
