// UnblockNchwc (level 3): a file ONNX Runtime wrote at its level `all` holds its NCHWc layout for the machine it
// was written on (com.microsoft.nchwc ReorderInput, Conv, pools, Upsample, ReorderOutput; kernels/nchwc_layout.h).
// Ferry's own blocked layout (blocked_layout, later) would block the same convolutions, and more: the elementwise
// ops between them that ONNX Runtime leaves plain (a SiLU, a squeeze-and-excitation Mul), which cost a
// ReorderOutput and a ReorderInput each in ONNX Runtime's form. So the NCHWc region is written back as the plain
// graph it came from, and the later passes fuse and block it as they do the original model:
//
//   ReorderInput(X [N, C, H, W])          => X, with its channels padded by zeros to Cp (Pad) when C < Cp
//                                            (channels_last: Transpose to NCHW first)
//   Conv(X, W, B?, Sum?)                  => ai.ferry::FusedConv(X, W unblocked into a plain OIHW initializer, B,
//                                            Sum) with the same attributes and activation
//   MaxPool, AveragePool, GlobalMaxPool,  => the ONNX pool with the same attributes
//   GlobalAveragePool
//   ReorderOutput(X, channels = C)        => X (Slice to C channels when C < Cp; channels_last: Transpose)
//   any other NCHWc node (Upsample, a     => the node itself between a ReorderInput and a ReorderOutput of all
//   form the rules above do not take)        Cp channels
//   an op of another domain reading an    => the same op on the plain values (ONNX Runtime runs its elementwise
//   NCHWc tensor                             ops on NCHWc tensors: they compute the same on plain ones)
//
// Identity: every plain value holds the NCHWc value's elements in plain order, padding channels included (Cp
// channels): ONNX Runtime pads a convolution's filters and bias with zeros, so the padding channels never reach
// a real one, and ReorderOutput's Slice drops them, as ReorderOutput does. With target backends only, where the
// NCHWc nodes run on a backend that asks for a blocked layout (Backend::activation_block) and every replacement
// runs there too; every NCHWc value must have a known 4-D type with static channels (schemas' shape inference),
// and no reorder at the region's edge may pad or slice the channels of a tensor larger than one pixel (see
// PadsChannels), else nothing changes and the NCHWc kernels run the file as written.
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/error.h"
#include "kernels/nchwc_layout.h"
#include "passes/pass_list.h"
#include "passes/rewrite_util.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "semantics/fused_activation.h"

namespace ferry::passes {
namespace {

const std::string kNchwc(schemas::kMsNchwcDomain);

int64_t DefaultOpset(const ir::Model& model) {
  const auto it = model.opsets.find("");
  return it == model.opsets.end() ? 0 : it->second;
}

// The static channel count (dim 1) of a rank-4 value, or -1.
int64_t Channels(const ir::Value* v) { return ir::RankOrMinusOne(v) == 4 ? ir::DimOrMinusOne(v, 1) : -1; }

class Unblocker {
 public:
  Unblocker(ir::Model& model, ir::Graph& g, const PassContext& ctx, int64_t block)
      : model_(model), g_(g), ctx_(ctx), block_(block), opset_(DefaultOpset(model)) {}

  // False (and the graph untouched) when a value in NCHWc layout lacks a known 4-D type with static channels or
  // is a graph output. NCHWc values: the outputs of the NCHWc nodes but ReorderOutput, and of the nodes reading
  // one (ONNX Runtime runs elementwise ops on NCHWc tensors: an activation, a residual Add, an SE block's Mul).
  bool Applicable() {
    for (const auto& node : g_.nodes()) {
      const ir::Node* n = node.get();
      const bool nchwc = n->domain() == schemas::kMsNchwcDomain;
      bool reads_blocked = false;
      for (const ir::Value* v : n->inputs()) reads_blocked = reads_blocked || (v && IsBlocked(v));
      if (!(nchwc ? n->op_type() != "ReorderOutput" : reads_blocked)) continue;
      if (!nchwc && n->num_outputs() != 1) return false;
      if (nchwc && PadsChannels(*n)) return false;
      for (ir::Value* y : n->outputs()) {
        if (!y) continue;
        if (Channels(y) <= 0 || ir::IsGraphOutput(g_, y)) return false;
        blocked_.insert({y, nullptr});
      }
    }
    return true;
  }

  void Run() {
    std::vector<ir::Node*> nodes;
    for (const auto& n : g_.nodes()) nodes.push_back(n.get());
    for (ir::Node* n : nodes) {
      if (n->domain() != schemas::kMsNchwcDomain) {
        // An elementwise op on NCHWc tensors computes the same on the plain ones: its output is plain now.
        bool reads_blocked = false;
        for (size_t i = 0; i < n->num_inputs(); ++i) {
          ir::Value* v = n->input(i);
          if (!v || !IsBlocked(v)) continue;
          n->ReplaceInput(i, Plain(v));
          reads_blocked = true;
        }
        if (reads_blocked) blocked_[n->output(0)] = n->output(0);
        continue;
      }
      const std::string& op = n->op_type();
      if (op == "ReorderInput" && ReorderInput(n)) continue;
      if (op == "ReorderOutput" && ReorderOutput(n)) continue;
      if (op == "Conv" && Conv(n)) continue;
      if ((op == "MaxPool" || op == "AveragePool" || op == "GlobalMaxPool" || op == "GlobalAveragePool") && Pool(n)) {
        continue;
      }
      Wrap(n);
    }
    // The NCHWc values the rewrites left unproduced and unread.
    for (const auto& [v, plain] : blocked_) {
      ir::Value* value = const_cast<ir::Value*>(v);
      if (value != plain && !value->producer() && value->consumers().empty() && !ir::IsGraphOutput(g_, value)) {
        g_.RemoveValue(value);
      }
    }
    g_.TopologicalSort();
  }

 private:
  // A reorder at the region's edge whose channel count is not a whole number of blocks, on a tensor with more
  // than one pixel: the plain graph would Pad (ReorderInput) or Slice (ReorderOutput) the channels there, and
  // blocked_layout's chains would stop at each such node (ShuffleNet's 58-, 116-channel stages: measured slower
  // than the NCHWc kernels). A squeeze-and-excitation block's [N, C, 1, 1] costs nothing.
  bool PadsChannels(const ir::Node& n) const {
    const bool in = n.op_type() == "ReorderInput", out = n.op_type() == "ReorderOutput";
    if (!in && !out) return false;
    const ir::Value* plain = in ? n.input(0) : n.output(0);
    const bool last = n.GetInt("channels_last", 0) != 0;
    const int64_t c = in ? ir::DimOrMinusOne(plain, last ? 3 : 1) : n.GetInt("channels", 0);
    if (c > 0 && c % block_ == 0) return false;
    const int64_t h = ir::DimOrMinusOne(plain, last ? 1 : 2), w = ir::DimOrMinusOne(plain, last ? 2 : 3);
    return !(h == 1 && w == 1);
  }

  bool IsBlocked(const ir::Value* v) const { return blocked_.count(v) > 0; }
  ir::Value* Plain(const ir::Value* v) const { return blocked_.at(v); }

  ir::Builder Builder(const ir::Node* n) {
    ir::Builder b(g_, opset_);
    b.set_prefix(n->name() + "/");
    return b;
  }

  bool Runs(const ir::Node* n, const std::string& domain, const std::string& op, const std::vector<ir::Value*>& in,
            const std::vector<ir::Attribute>& attrs) {
    return WouldRunOn(g_, ctx_, ctx_.BackendFor(*n), domain, op, domain.empty() ? opset_ : 1, in, attrs);
  }

  // The node's output 0 is now `plain` (typed as the NCHWc value it replaces); the node is removed.
  void Done(ir::Node* n, ir::Value* plain) {
    ir::Value* y = n->output(0);
    plain->set_type(y->type());
    blocked_[y] = plain;
    g_.RemoveNode(n);
  }

  bool ReorderInput(ir::Node* n) {
    ir::Value* x = n->input(0);
    const bool last = n->GetInt("channels_last", 0) != 0;
    if (ir::RankOrMinusOne(x) != 4) return false;
    const int64_t cp = Channels(n->output(0));
    const int64_t c = ir::DimOrMinusOne(x, last ? 3 : 1);
    if (c <= 0 || cp != NchwcPadded(c, block_)) return false;
    ir::Builder b = Builder(n);
    ir::Value* p = x;
    if (last) {
      if (!Runs(n, "", "Transpose", {x}, {IntsAttr("perm", {0, 3, 1, 2})})) return false;
      p = b.Transpose(x, {0, 3, 1, 2});
    }
    if (c < cp) p = b.Op("Pad", {p, b.Int64s({0, 0, 0, 0, 0, cp - c, 0, 0})});
    if (p == x) {  // the NCHWc value is X itself
      blocked_[n->output(0)] = x;
      g_.RemoveNode(n);
      return true;
    }
    Done(n, p);
    return true;
  }

  bool ReorderOutput(ir::Node* n) {
    ir::Value* x = n->input(0);
    if (!IsBlocked(x)) return false;
    ir::Value* p = Plain(x);
    const int64_t cp = Channels(x), c = n->GetInt("channels", 0);
    const bool last = n->GetInt("channels_last", 0) != 0;
    if (c <= 0 || c > cp) return false;
    ir::Builder b = Builder(n);
    ir::Value* r = p;
    if (c < cp) r = b.Slice(r, 0, c, 1);
    if (last) r = b.Transpose(r, {0, 2, 3, 1});
    ir::Value* y = n->output(0);
    g_.RemoveNode(n);
    if (r != p) {
      ir::RebuildWithOutput(r->producer(), r, y);
      g_.RemoveValue(r);
    } else if (ir::IsGraphOutput(g_, y)) {
      b.AddNode(y->name() + "/Identity", "Identity", {p}, {y});
    } else {
      ir::ReplaceAllUses(g_, y, p);  // no Identity: it would stand between blocked_layout's chains
      g_.RemoveValue(y);
    }
    return true;
  }

  bool Conv(ir::Node* n) {
    ir::Value* x = n->input(0);
    const Tensor* w = ConstantTensor(g_, n->input(1));
    if (!w || w->dtype() != DataType::kFloat || w->shape().size() != 4) return false;
    if (!semantics::FusedActivationError(n->GetString("activation", ""), n->GetFloats("activation_params")).empty()) {
      return false;
    }
    NchwcConvLayout layout;
    if (!NchwcConvLayoutOf(w->shape(), n->GetInt("group", 1), block_, &layout).empty()) return false;
    if (layout.plain_input == IsBlocked(x)) return false;  // a plain X is what OIHWBo without depthwise means
    ir::Value* sum = n->input(3);
    if (sum && !IsBlocked(sum)) return false;
    // W in plain OIHW order.
    const Shape& s = w->shape();
    const int64_t m = s[0], in = s[1], kernel = s[2] * s[3];
    Tensor plain(DataType::kFloat, s);
    const float* src = w->data<float>();
    float* dst = plain.data<float>();
    for (int64_t o = 0; o < m; ++o) {
      for (int64_t i = 0; i < in; ++i) {
        for (int64_t k = 0; k < kernel; ++k) {
          dst[(o * in + i) * kernel + k] = src[NchwcFilterIndex(layout, block_, in, kernel, o, i, k)];
        }
      }
    }
    ir::Builder b = Builder(n);
    std::vector<ir::Value*> inputs = {layout.plain_input ? x : Plain(x), b.AddInitializer("W", std::move(plain)),
                                      n->input(2), sum ? Plain(sum) : nullptr};
    while (!inputs.empty() && !inputs.back()) inputs.pop_back();
    std::vector<ir::Attribute> attrs = n->attributes();
    if (!Runs(n, std::string(schemas::kFerryDomain), "FusedConv", inputs, attrs)) {
      g_.RemoveInitializer(inputs[1]);
      return false;
    }
    ir::Value* y = b.AddValue(n->name() + "/plain");
    AddFerryNode(model_, g_, n->name(), "FusedConv", std::move(inputs), {y}, std::move(attrs));
    Done(n, y);
    return true;
  }

  bool Pool(ir::Node* n) {
    ir::Value* x = n->input(0);
    if (!IsBlocked(x) || n->num_outputs() != 1) return false;
    const std::string& op = n->op_type();
    if (op == "AveragePool" && n->has_attr("dilations") && opset_ < 19) return false;
    if (op == "MaxPool" && n->GetInt("storage_order", 0) != 0) return false;
    std::vector<ir::Attribute> attrs = n->attributes();
    if (!Runs(n, "", op, {Plain(x)}, attrs)) return false;
    ir::Builder b = Builder(n);
    ir::Value* y = b.AddValue(n->name() + "/plain");
    b.AddNode(n->name(), op, {Plain(x)}, {y}, std::move(attrs));
    Done(n, y);
    return true;
  }

  // The node as it is, on NCHWc tensors made from the plain ones and made plain again (all Cp channels).
  void Wrap(ir::Node* n) {
    ir::Builder b = Builder(n);
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      ir::Value* v = n->input(i);
      if (!v || !IsBlocked(v)) continue;
      ir::Value* again = b.AddValue(v->name() + "/nchwc", v->type());
      b.AddNodeIn(model_, kNchwc, 1, n->name() + "/ReorderInput", "ReorderInput", {Plain(v)}, {again});
      n->ReplaceInput(i, again);
    }
    for (ir::Value* y : n->outputs()) {
      if (!y || n->op_type() == "ReorderOutput") continue;
      ir::Value* p = b.AddValue(y->name() + "/plain", y->type());
      b.AddNodeIn(model_, kNchwc, 1, n->name() + "/ReorderOutput", "ReorderOutput", {y}, {p},
                  {IntAttr("channels", Channels(y))});
      blocked_[y] = p;
    }
  }

  ir::Model& model_;
  ir::Graph& g_;
  const PassContext& ctx_;
  int64_t block_;
  int64_t opset_;
  std::unordered_map<const ir::Value*, ir::Value*> blocked_;  // NCHWc value -> its plain equivalent
};

class UnblockNchwc : public Pass {
 public:
  std::string_view name() const override { return "unblock_nchwc"; }
  int level() const override { return 3; }
  std::string_view summary() const override {
    return "A file ONNX Runtime wrote at level `all`: its com.microsoft.nchwc region (ReorderInput, Conv, pools, "
           "ReorderOutput) => the plain graph (Pad / Slice of the padding channels, FusedConv with the weights "
           "unblocked, ONNX pools), which blocked_layout then blocks with the ops between them. Identity: the same "
           "elements in plain order; the padding channels meet only zero filters.";
  }

  bool Apply(ir::Model& model, const PassContext& ctx) const override {
    if (ctx.backends.empty() || DefaultOpset(model) < 11) return false;
    ir::Graph& g = *model.graph;
    std::vector<ir::Node*> nodes;
    for (const auto& n : g.nodes()) {
      if (n->domain() == schemas::kMsNchwcDomain) nodes.push_back(n.get());
    }
    if (nodes.empty()) return false;
    int64_t block = 0;
    for (const ir::Node* n : nodes) {
      if (ctx.Frozen(*n)) return false;
      const Backend* home = ctx.BackendFor(*n);
      if (!home || !home->activation_block(ctx.target)) return false;
      try {
        block = NchwcBlockSizeFor(*n);
      } catch (const Error&) {
        return false;  // a bad FERRY_NCHWC_BLOCK: the kernels say so
      }
    }
    Unblocker u(model, g, ctx, block);
    if (!u.Applicable()) return false;
    u.Run();
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeUnblockNchwc() { return std::make_unique<UnblockNchwc>(); }

}  // namespace ferry::passes
