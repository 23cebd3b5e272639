// UnblockNchwc (level 3): a file ONNX Runtime wrote at its level `all` holds its NCHWc layout for the machine it
// was written on (com.microsoft.nchwc ReorderInput, Conv, pools, Upsample, ReorderOutput; kernels/nchwc_layout.h).
// Ferry's own blocked layout (blocked_layout, later) would block the same convolutions, and more: the elementwise
// ops between them that ONNX Runtime leaves plain (a SiLU, a squeeze-and-excitation Mul), which cost a
// ReorderOutput and a ReorderInput each in ONNX Runtime's form. So the NCHWc region is written back as the plain
// graph it came from, and the later passes fuse and block it as they do the original model:
//
//   ReorderInput(X [N, C, H, W])          => X (channels_last: Transpose to NCHW)
//   Conv(X, W, B?, Sum?)                  => ai.ferry::FusedConv(X, W unblocked into a plain OIHW initializer of
//                                            the real channels, B, Sum) with the same attributes and activation
//   MaxPool, AveragePool, GlobalMaxPool,  => the ONNX pool with the same attributes
//   GlobalAveragePool
//   ReorderOutput(X, channels = C)        => X (channels_last: Transpose)
//   Upsample(X) by integer scales         => Resize (nearest: asymmetric + floor; linear: the same transformation)
//   any other NCHWc node (a form the      => the node itself between a ReorderInput and a ReorderOutput of its
//   rules above do not take)                 real channels
//   an op of another domain reading an    => the same op on the plain values (ONNX Runtime runs its elementwise
//   NCHWc tensor                             ops on NCHWc tensors: they compute the same on plain ones)
//
// Identity: every plain value holds the NCHWc value's real channels in plain order. ORT pads a tensor's C to a
// whole number of blocks inside its region with zero filters, zero bias and zero weights for the padded input
// channels, and names the real count where a tensor leaves (ReorderOutput's `channels`) or enters (ReorderInput's
// input); the counts are propagated through the ops that keep them (RealChannels), and each Conv keeps only the
// rows and columns of W of real channels (a set of values no edge names keeps all Cp channels). With target
// backends only, where the NCHWc nodes run on a backend that asks for a blocked layout
// (Backend::activation_block) and every replacement runs there too; every NCHWc value must have a known 4-D type
// with static channels (schemas' shape inference) and the counts must agree, else nothing changes and the NCHWc
// kernels run the file as written. A grouped (not depthwise) Conv whose channels are padded stays NCHWc.
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
      for (ir::Value* y : n->outputs()) {
        if (!y) continue;
        if (Channels(y) <= 0 || ir::IsGraphOutput(g_, y)) return false;
        blocked_.insert({y, nullptr});
      }
    }
    return RealChannels();
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
        if (reads_blocked) {
          blocked_[n->output(0)] = n->output(0);
          SetChannels(n->output(0), Real(n->output(0)));
        }
        continue;
      }
      const std::string& op = n->op_type();
      if (op == "ReorderInput" && ReorderInput(n)) continue;
      if (op == "ReorderOutput" && ReorderOutput(n)) continue;
      if (op == "Conv" && Conv(n)) continue;
      if ((op == "MaxPool" || op == "AveragePool" || op == "GlobalMaxPool" || op == "GlobalAveragePool") && Pool(n)) {
        continue;
      }
      if (op == "Upsample" && Upsample(n)) continue;
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
  // The real channel count of each NCHWc value, from the region's edges: ORT pads C to Cp = C rounded up to the
  // block inside its region (zero filters, zero bias, zero weights for the padded input channels), and states C
  // only where a tensor enters (ReorderInput's input) or leaves (ReorderOutput's `channels`). Values that must
  // have one count share a set (an elementwise op's blocked inputs and output, a pool's, a Conv's Sum and
  // output); a set no edge names keeps Cp. So the plain graph carries the real counts, with no Pad or Slice at the
  // edges (where blocked_layout's chains would stop), and each Conv reads the rows and columns of W it needs.
  // False on a contradiction (then nothing changes).
  const ir::Value* Find(const ir::Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v) return v;
    return it->second = Find(it->second);
  }
  bool Assign(const ir::Value* v, int64_t c) {
    const ir::Value* r = Find(v);
    auto [it, inserted] = real_.insert({r, c});
    return inserted || it->second == c;
  }
  bool Unite(const ir::Value* a, const ir::Value* b) {
    const ir::Value *ra = Find(a), *rb = Find(b);
    if (ra == rb) return true;
    parent_[ra] = rb;
    if (auto it = real_.find(ra); it != real_.end()) {
      const int64_t c = it->second;
      real_.erase(it);
      return Assign(rb, c);
    }
    return true;
  }
  bool RealChannels() {
    for (const auto& node : g_.nodes()) {
      const ir::Node* n = node.get();
      const bool nchwc = n->domain() == schemas::kMsNchwcDomain;
      const std::string& op = n->op_type();
      if (nchwc && op == "ReorderInput") {
        const int64_t c = ir::DimOrMinusOne(n->input(0), n->GetInt("channels_last", 0) ? 3 : 1);
        if (c <= 0 || !Assign(n->output(0), c)) return false;
      } else if (nchwc && op == "ReorderOutput") {
        if (IsBlocked(n->input(0)) && !Assign(n->input(0), n->GetInt("channels", 0))) return false;
      } else if (nchwc && op == "Conv") {
        if (n->input(3) && IsBlocked(n->input(3)) && !Unite(n->input(3), n->output(0))) return false;
      } else if (!nchwc && op == "Concat" && n->domain().empty()) {
        // ORT concatenates NCHWc tensors along the channels only when each is whole blocks: checked below.
        for (const ir::Value* v : n->inputs()) {
          if (v && IsBlocked(v)) whole_.push_back(v);
        }
      } else {
        // Pools, Upsample and the other domains' elementwise ops: every blocked input has the output's count.
        for (const ir::Value* v : n->inputs()) {
          if (v && IsBlocked(v) && n->output(0) && !Unite(v, n->output(0))) return false;
        }
      }
    }
    for (const ir::Value* v : whole_) {
      if (Real(v) != Channels(v)) return false;
    }
    return true;
  }
  int64_t Real(const ir::Value* v) {
    auto it = real_.find(Find(v));
    return it == real_.end() ? Channels(v) : it->second;
  }
  // v's type with `c` channels.
  void SetChannels(ir::Value* v, int64_t c) {
    ir::TypeInfo t = v->type();
    if (t.shape && t.shape->size() == 4) (*t.shape)[1] = ir::Dim::Static(c);
    v->set_type(t);
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
    SetChannels(plain, Real(y));
    blocked_[y] = plain;
    g_.RemoveNode(n);
  }

  bool ReorderInput(ir::Node* n) {
    ir::Value* x = n->input(0);
    const bool last = n->GetInt("channels_last", 0) != 0;
    if (ir::RankOrMinusOne(x) != 4) return false;
    const int64_t cp = Channels(n->output(0));
    const int64_t c = ir::DimOrMinusOne(x, last ? 3 : 1);
    if (c <= 0 || cp != NchwcPadded(c, block_) || Real(n->output(0)) != c) return false;
    ir::Builder b = Builder(n);
    ir::Value* p = x;
    if (last) {
      if (!Runs(n, "", "Transpose", {x}, {IntsAttr("perm", {0, 3, 1, 2})})) return false;
      p = b.Transpose(x, {0, 3, 1, 2});
    }
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
    if (c <= 0 || c > cp || Real(x) != c) return false;
    ir::Builder b = Builder(n);
    ir::Value* r = p;
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
    // A plain X (OIHWBo without depthwise) may be a region value already made plain (ReorderOutput's readers
    // read the plain value itself now); an NCHWc X is a region value.
    ir::Value* x_plain = IsBlocked(x) ? Plain(x) : x;
    if (layout.plain_input ? (IsBlocked(x) && x_plain != x) || Channels(x_plain) != w->shape()[1] : !IsBlocked(x)) {
      return false;
    }
    ir::Value* sum = n->input(3);
    if (sum && !IsBlocked(sum)) return false;
    // W in plain OIHW order, the rows of the real output channels and the columns of the real input ones (the
    // others are ORT's zero padding).
    const Shape& s = w->shape();
    const int64_t m = s[0], in = s[1], kernel = s[2] * s[3], group = n->GetInt("group", 1);
    const int64_t r_out = Real(n->output(0));
    const int64_t r_in = layout.plain_input ? in : Real(x);
    int64_t out_group = group, in_used = in;
    if (layout.depthwise) {
      if (r_in != r_out) return false;
      out_group = r_out;
    } else if (group == 1) {
      in_used = r_in;
    } else if (r_out != m || r_in != in * group) {
      return false;  // a grouped conv whose channels were padded: left in NCHWc form
    }
    if (r_out > m || in_used > in || (sum && Real(sum) != r_out)) return false;
    Tensor plain(DataType::kFloat, {r_out, in_used, s[2], s[3]});
    const float* src = w->data<float>();
    float* dst = plain.data<float>();
    for (int64_t o = 0; o < r_out; ++o) {
      for (int64_t i = 0; i < in_used; ++i) {
        for (int64_t k = 0; k < kernel; ++k) {
          dst[(o * in_used + i) * kernel + k] = src[NchwcFilterIndex(layout, block_, in, kernel, o, i, k)];
        }
      }
    }
    ir::Value* bias = n->input(2);
    if (bias && r_out < m) {
      const Tensor* bt = ConstantTensor(g_, bias);
      if (!bt || bt->dtype() != DataType::kFloat || bt->size() != m) return false;
      Tensor sliced(DataType::kFloat, {r_out});
      std::copy_n(bt->data<float>(), r_out, sliced.data<float>());
      bias = Builder(n).AddInitializer("B", std::move(sliced));
    }
    ir::Builder b = Builder(n);
    std::vector<ir::Value*> inputs = {x_plain, b.AddInitializer("W", std::move(plain)),
                                      bias, sum ? Plain(sum) : nullptr};
    while (!inputs.empty() && !inputs.back()) inputs.pop_back();
    std::vector<ir::Attribute> attrs;
    for (const ir::Attribute& a : n->attributes()) attrs.push_back(a.name == "group" ? IntAttr("group", out_group) : a);
    if (!Runs(n, std::string(schemas::kFerryDomain), "FusedConv", inputs, attrs)) {
      g_.RemoveInitializer(inputs[1]);
      if (bias != n->input(2)) g_.RemoveInitializer(bias);
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

  // Upsample by integer scales [1, 1, sh, sw] => Resize with those scales: nearest as asymmetric + floor (the
  // source pixel o / s), linear with the node's coordinate transformation (ONNX's linear Resize clamps a
  // negative half_pixel coordinate at 0, as ORT's Upsample does).
  bool Upsample(ir::Node* n) {
    ir::Value* x = n->input(0);
    const std::vector<int64_t> scales = n->GetInts("scales");
    const std::string mode = n->GetString("mode", "nearest");
    const std::string ctm = n->GetString("coordinate_transformation_mode", "asymmetric");
    if (!IsBlocked(x) || scales.size() != 4 || scales[0] != 1 || scales[1] != 1 || scales[2] < 1 || scales[3] < 1) {
      return false;
    }
    if (!(mode == "nearest" && ctm == "asymmetric") &&
        !(mode == "linear" && (ctm == "asymmetric" || ctm == "half_pixel" || ctm == "align_corners"))) {
      return false;
    }
    std::vector<ir::Attribute> attrs = {StringAttr("mode", mode), StringAttr("coordinate_transformation_mode", ctm)};
    if (mode == "nearest") attrs.push_back(StringAttr("nearest_mode", "floor"));
    ir::Builder b = Builder(n);
    ir::Value* roi = b.AddInitializer("roi", Tensor(DataType::kFloat, {0}));
    Tensor s(DataType::kFloat, {4});
    for (size_t i = 0; i < 4; ++i) s.data<float>()[i] = static_cast<float>(scales[i]);
    ir::Value* sc = b.AddInitializer("scales", std::move(s));
    if (!Runs(n, "", "Resize", {Plain(x), roi, sc}, attrs)) {
      g_.RemoveInitializer(roi);
      g_.RemoveInitializer(sc);
      return false;
    }
    ir::Value* y = b.AddValue(n->name() + "/plain");
    b.AddNode(n->name(), "Resize", {Plain(x), roi, sc}, {y}, std::move(attrs));
    Done(n, y);
    return true;
  }

  // The node as it is, on NCHWc tensors made from the plain ones and made plain again (all Cp channels).
  void Wrap(ir::Node* n) {
    ir::Builder b = Builder(n);
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      ir::Value* v = n->input(i);
      // ReorderInput's input is plain in ORT's file (it may be a region value's plain form now).
      if (!v || !IsBlocked(v) || n->op_type() == "ReorderInput") continue;
      ir::Value* again = b.AddValue(v->name() + "/nchwc", v->type());
      b.AddNodeIn(model_, kNchwc, 1, n->name() + "/ReorderInput", "ReorderInput", {Plain(v)}, {again});
      n->ReplaceInput(i, again);
    }
    for (ir::Value* y : n->outputs()) {
      if (!y || n->op_type() == "ReorderOutput") continue;
      ir::Value* p = b.AddValue(y->name() + "/plain", y->type());
      b.AddNodeIn(model_, kNchwc, 1, n->name() + "/ReorderOutput", "ReorderOutput", {y}, {p},
                  {IntAttr("channels", Real(y))});
      SetChannels(p, Real(y));
      blocked_[y] = p;
    }
  }

  ir::Model& model_;
  ir::Graph& g_;
  const PassContext& ctx_;
  int64_t block_;
  int64_t opset_;
  std::unordered_map<const ir::Value*, ir::Value*> blocked_;  // NCHWc value -> its plain equivalent
  std::unordered_map<const ir::Value*, const ir::Value*> parent_;  // RealChannels' sets
  std::unordered_map<const ir::Value*, int64_t> real_;             // a set's root -> its real channel count
  std::vector<const ir::Value*> whole_;                            // Concat inputs: no padding channels
};

class UnblockNchwc : public Pass {
 public:
  std::string_view name() const override { return "unblock_nchwc"; }
  int level() const override { return 3; }
  std::string_view summary() const override {
    return "A file ONNX Runtime wrote at level `all`: its com.microsoft.nchwc region (ReorderInput, Conv, pools, "
           "Upsample, ReorderOutput) => the plain graph (FusedConv with the weights of the real channels "
           "unblocked, ONNX pools, Resize), which blocked_layout then blocks with the ops between them. Identity: "
           "the same elements in plain order; ORT's padding channels meet only zero filters.";
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
