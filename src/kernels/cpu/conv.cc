// Conv, and the optimizer's ai.ferry FusedConv and BlockedConv, on oneDNN (convolution_forward, float32, 1-D to
// 3-D): one kernel class for the three. Geometry — auto_pad, pads, strides, dilations, kernel_shape, group — is
// resolved exactly as the ref kernel does (semantics::ResolveConv) and handed to oneDNN as explicit pads and
// (dilation - 1). Constant weights are reordered once into the layout the primitive prefers (one packed copy per
// layout, shared by every signature). Prepare checks the inputs, declares Y and builds the primitive for its input
// signature and the session's thread count (oneDNN fixes a primitive's parallel split at creation), kept as the
// signature's state with the scratch slots it needs (the workspace); creation builds it already, packing the
// weights, when shapes are static but for the batch, and Prepare takes that one when its signature matches.
//
// FusedConv: Y = act(Conv(X, W, B) + Z) as oneDNN post-ops: `sum` (Z, copied into the dst the primitive writes
// first) then the activation's eltwise post-ops (fused_activation.h), except SiLU, which is a pass of Ferry's
// over Y after the primitive (activation_pass.h: oneDNN 2.6's swish post-op is the slower).
// BlockedConv: the same on Ferry's blocked layout (blocked_layout.h): the primitive is created with exactly the
// blocked src (plain nchw with plain_input = 1) and dst formats, so no activation is reordered; weights `any`,
// packed once. Z is copied into Y with zeros in its padding channels: oneDNN takes a dst's padding to be zero and
// re-zeroes it after the post-ops only for activations that do not keep 0 at 0 (with Relu it would leave
// relu(Z's padding) there; the schema wants zeros, and a reader's zero weights need them finite). Its predicate
// refuses what oneDNN would run on its slow reference implementation — the optimizer asks it what to block: by
// rule from W and the attributes (blocks 8/16: 1-D/3-D depthwise; grouped convs other than depthwise unless
// C/group and M/group are multiples of the block; plain_input with C >= block; a blocked X with C < block under a
// spatial or strided kernel; channels-last: plain_input), and, when X's spatial dims are static, by creating the
// primitive descriptor and reading its implementation name (measured: e.g. block 8 with a 5x5 kernel dilated by
// 2 or more is oneDNN's ref:any on nChw8c, unless brgconv takes it: see "brgconv"). Channels-last (block 0) runs
// oneDNN's nwc / nhwc / ndhwc.
// com.microsoft.nchwc Conv (ONNX Runtime's NCHWc layout, kernels/nchwc_layout.h): BlockedConv with ORT's tensors.
// X and Y are 4-D [N, Cp, H, W] stored nChw{b}c (b the machine's NCHWc block), which is exactly Ferry's blocked
// layout of that logical shape, so the primitive reads and writes them in place with no reorder; X is plain NCHW
// (plain_input) when the conv is ungrouped with C < b. W, always an initializer there, is in ORT's blocked layout
// (OIHWBo or OIHWBiBo): unpacked once at creation to ONNX's [M, C/group, kh, kw] (ref's NchwcFilterToPlain), then
// packed like any constant W (the unpacked copy is freed with the rest once packed; the model's own W is never
// read). M is a multiple of b (the transformer pads W with zero filters), so Y has no padding channels. Sum is Z.
//
// Activation layout of Conv and FusedConv: plain NCHW src/dst (oneDNN's GEMM path) for group-1 pointwise stride-1
// unpadded convolutions with at least 256 output positions, where it beats reordering the activations to the
// blocked layout oneDNN picks and back; blocked (format_tag::any, reordered per call) otherwise — the reorders pay
// for themselves on every spatial kernel and strided 1x1, and from 14x14 planes down — and blocked also when an
// activation is fused, because oneDNN 2.6's GEMM convolution applies an eltwise post-op several times slower than
// the convolution itself (figures: docs/performance.md, "Kernel design measurements", conv.cc).
//
// Winograd: 2-D 3x3 stride-1 undilated ungrouped convolutions with constant weights and at least 32 input and output
// channels run oneDNN's Winograd kernels (jit_fp32_wino_2x3 / jit_wino_4x3, AVX-512 only, nChw16c activations
// reordered to and from whatever layout Ferry's tensors have) where oneDNN has one; else the direct convolution.
// Winograd beats the direct convolution on ResNet-50's 3x3 layers at batch 1 and 8, the reorders included, from 32
// channels up (at 16 it is slower: hence the bound). Small planes (layer4's 7x7 at batch 1) gain too, for more
// session-creation time and memory to pack their weights: a trade made for speed, so every candidate runs Winograd
// when oneDNN has a kernel for it (figures: docs/performance.md, "Kernel design measurements", conv.cc).
// Winograd reassociates the sums differently from the direct convolution (results differ by float rounding:
// docs/performance.md), and its packed weights are 16/9 of the plain ones (4x4 tiles for 3x3 taps). On AVX2
// hosts (nChw8c), where oneDNN has none, such a BlockedConv runs Ferry's own Winograd kernel instead
// (winograd_conv.cc, registered before this one: its predicates say which layers it takes).
//
// Winograd scratchpad: oneDNN 2.6's jit_wino_4x3 asks a scratchpad of about 36 floats per (input, output channel)
// pair beside its packed weights: 167 MiB for FCN-ResNet50's 2048->512 head at 28x28, a third of the model's peak
// RSS. Past kWinogradScratchBudget (64 MiB), a batch-1 plan runs the convolution in parts over the output channels
// (M halved until the scratchpad fits, at least 32 channels a part, whole channel blocks), each its own Winograd
// primitive on the whole of X writing a contiguous slice of Y: that head in 4 parts asks 57 MiB and takes ~10%
// longer (~79 against ~72 ms at 1 thread), still half the direct convolution's ~140 ms
// (bench/conv_impls.cc prints each implementation's time and scratchpad).
//
// brgconv: an ungrouped convolution with a spatial kernel and constant weights whose X and Y are channel-blocked
// (BlockedConv with block 8 or 16, X not plain) runs oneDNN's brgconv kernel on channels-last (nhwc), with reorders
// from and to the blocked tensors, when oneDNN offers brgconv for it; else oneDNN's direct kernel on the blocked
// layout: brgconv with its reorders beats the direct kernel on ResNet-50's stride-2 3x3 layers at batch 1 and 8.
// Not for plain_input (the stem convolution of 3 channels): reordering its large output costs the CNNs more than
// brgconv gains. 1x1 convolutions stay on oneDNN's jit_1x1 on the blocked layout: brgconv_1x1 is no faster per
// layer, not worth two reorders. Making the whole model channels-last instead (Backend::activation_block 0) was
// faster at batch 1 but slower at batch 8 (the Winograd layers, nChw16c only, then reorder large planes)
// (figures: docs/performance.md, "Kernel design measurements", conv.cc).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/activation_pass.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_common.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/kernel_def.h"
#include "kernels/nchwc_layout.h"
#include "kernels/ref/nchwc.h"
#include "kernels/registry.h"
#include "schemas/op_origin.h"
#include "schemas/schema.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

using dnnl::memory;

// See the measurements at the top of the file.
bool PreferPlainActivations(const semantics::ConvShape& cs, const FusedActivation& act) {
  if (cs.group != 1 || act.kind != FusedActivation::Kind::kNone) return false;
  for (size_t d = 0; d < cs.g.rank(); ++d) {
    if (cs.g.kernel[d] != 1 || cs.g.strides[d] != 1 || cs.g.pad_begin[d] != 0 || cs.g.pad_end[d] != 0) return false;
  }
  return cs.g.out_size() >= 256;
}

enum class ConvOp { kConv, kFusedConv, kBlockedConv, kNchwcConv };

// What a node asks of the kernel, read once.
struct ConvConfig {
  semantics::WindowAttrs attrs;
  int64_t group = 1;
  bool has_bias = false, has_z = false;
  FusedActivation act;
  ActivationPass act_pass;  // act as a pass over Y after the primitive, not a post-op (activation_pass.h)
  bool blocked = false;  // BlockedConv: Z and Y (and X unless plain_input) in the blocked layout of `block`
  int64_t block = 0;     // 8, 16, or 0: channels-last
  bool plain_input = false;
  // com.microsoft.nchwc Conv: blocked X, Z and Y are 4-D [N, Cp, H, W] (nChw{block}c); W in ORT's blocked layout.
  bool nchwc = false;
  NchwcConvLayout nchwc_layout;

  bool blocked_x() const { return blocked && !plain_input; }

  static ConvConfig FromNode(const ir::Node& node, ConvOp op) {
    ConvConfig c;
    c.attrs = semantics::WindowAttrs::FromNode(node);
    c.group = node.GetInt("group", 1);
    if (c.group < 1) throw InvalidModelError(node.Describe() + ": group must be >= 1, got " + std::to_string(c.group));
    c.has_bias = node.input(2) != nullptr;
    if (op == ConvOp::kConv) return c;
    c.has_z = node.input(3) != nullptr;
    if (const std::string reason = FusedActivation::Parse(node, &c.act); !reason.empty()) {
      throw UnsupportedError(node.Describe() + ": " + reason);
    }
    c.act_pass = ActivationPass::For(c.act);
    if (op == ConvOp::kBlockedConv) {
      c.blocked = true;
      c.block = node.GetInt("block", -1);
      c.plain_input = node.GetInt("plain_input", 0) != 0;
      if (const std::string reason = BlockReason(node.op_type(), c.block); !reason.empty()) {
        throw UnsupportedError(node.Describe() + ": " + reason);
      }
    }
    if (op == ConvOp::kNchwcConv) {
      c.blocked = c.nchwc = true;
      c.block = NchwcBlockSizeFor(node);
      const auto w = StaticShape(node, 1);
      if (!w) {
        throw UnsupportedError(node.Describe() + ": W has no static shape (ORT's NCHWc transformer writes an " +
                               "initializer): the cpu kernel unpacks it at creation");
      }
      if (const std::string why = NchwcConvLayoutOf(*w, c.group, c.block, &c.nchwc_layout); !why.empty()) {
        throw InvalidModelError(node.Describe() + ": W has shape " + ShapeToString(*w) + ": " + why);
      }
      c.plain_input = c.nchwc_layout.plain_input;
    }
    return c;
  }

  // X's logical shape [N, C, spatial...]: X itself, or for a blocked X ([N, ceil(C/b), spatial..., b], or
  // [N, spatial..., C] channels-last) with C = W[1] * group; nullopt when a blocked X does not match W.
  std::optional<Shape> LogicalX(const Shape& x, const Shape& w) const {
    if (nchwc) {  // [N, C, H, W] itself, blocked unless plain_input (C = W[1] * group, a multiple of the block)
      if (x.size() != 4 || w.size() != 4 || x[1] != w[1] * group || (!plain_input && x[1] % block != 0)) {
        return std::nullopt;
      }
      return x;
    }
    if (!blocked_x()) return x;
    if (w.size() < 3 || static_cast<int64_t>(x.size()) != BlockedRank(static_cast<int64_t>(w.size()), block)) {
      return std::nullopt;
    }
    const int64_t channels = w[1] * group;
    if (block > 0 ? x.back() != block || x[1] != (channels + block - 1) / block : x.back() != channels) {
      return std::nullopt;
    }
    return LogicalShape(x, channels, block);
  }
};

// A convolution primitive descriptor and the descs of Ferry's tensors it reads and writes.
struct ConvPd {
  dnnl::convolution_forward::primitive_desc pd;
  memory::desc src_user, weights_user, dst_user;
};

// The static shape of input i of `node`, with a symbolic first (batch) dim taken as 1; nullopt when the rank or
// any other dim is unknown.
std::optional<Shape> StaticShapeButBatch(const ir::Node& node, size_t i) {
  if (auto s = StaticShape(node, i)) return s;
  const ir::Value* v = node.input(i);
  if (!v || !v->type().is_tensor() || !v->type().shape || v->type().shape->empty()) return std::nullopt;
  Shape s{1};
  const auto& dims = *v->type().shape;
  for (size_t d = 1; d < dims.size(); ++d) {
    if (!dims[d].is_static()) return std::nullopt;
    s.push_back(dims[d].value);
  }
  return s;
}

// See "Winograd" at the top of the file: 2-D, 3x3, stride 1, undilated, ungrouped, at least 32 input and output
// channels, constant weights (packed once into oneDNN's Winograd-domain layout).
bool WinogradCandidate(const ConvConfig& c, const semantics::ConvShape& cs, const Shape& w, bool constant_weights) {
  const semantics::WindowGeometry& g = cs.g;
  if (!constant_weights || c.group != 1 || g.rank() != 2 || w.size() != 4) return false;
  for (size_t d = 0; d < 2; ++d) {
    if (g.kernel[d] != 3 || g.strides[d] != 1 || g.dilations[d] != 1) return false;
  }
  return w[0] >= 32 && w[1] >= 32;
}

// See "brgconv" at the top of the file: an ungrouped convolution with a spatial kernel and constant weights, from
// and to a channel-blocked layout.
bool BrgconvCandidate(const ConvConfig& c, const semantics::ConvShape& cs, bool constant_weights) {
  if (!constant_weights || !c.blocked || c.block == 0 || c.plain_input || c.group != 1) return false;
  return std::any_of(cs.g.kernel.begin(), cs.g.kernel.end(), [](int64_t k) { return k > 1; });
}

// Creates the primitive descriptor for logical X `x`, W `w` (throws dnnl::error when oneDNN cannot). With
// `constant_weights`, a Winograd candidate gets oneDNN's Winograd convolution when oneDNN has one for it on this
// machine (AVX-512), and the direct one otherwise.
ConvPd MakeConvPd(const ConvConfig& c, const Shape& x, const Shape& w, const semantics::ConvShape& cs,
                  bool constant_weights) {
  const semantics::WindowGeometry& g = cs.g;
  // oneDNN's grouped weights are [g, M/g, C/g, k...]: the same buffer as ONNX's [M, C/g, k...].
  memory::dims wdims(w.begin(), w.end());
  if (c.group > 1) {
    wdims[0] = cs.out_channels / c.group;
    wdims.insert(wdims.begin(), c.group);
  }
  memory::dims strides(g.strides.begin(), g.strides.end()), dilates, pad_l(g.pad_begin.begin(), g.pad_begin.end()),
      pad_r(g.pad_end.begin(), g.pad_end.end());
  for (int64_t d : g.dilations) dilates.push_back(d - 1);

  memory::desc src_user, dst_user, src, dst;
  if (!c.blocked) {
    src_user = PlainDesc(x, DataType::kFloat);
    dst_user = PlainDesc(cs.y_shape, DataType::kFloat);
    const bool plain = PreferPlainActivations(cs, c.act);
    src = plain ? src_user : memory::desc(Dims(x), memory::data_type::f32, memory::format_tag::any);
    dst = plain ? dst_user : memory::desc(Dims(cs.y_shape), memory::data_type::f32, memory::format_tag::any);
  } else {
    src_user = c.plain_input ? PlainDesc(x, DataType::kFloat) : BlockedDesc(x, c.block);
    dst_user = BlockedDesc(cs.y_shape, c.block);
    src = src_user;
    dst = dst_user;
  }
  const memory::desc weights(wdims, memory::data_type::f32, memory::format_tag::any);
  dnnl::primitive_attr attr = ScratchpadAttr();
  const bool act_post_op = c.act.kind != FusedActivation::Kind::kNone && !c.act_pass;
  if (c.has_z || act_post_op) {
    dnnl::post_ops ops;
    if (c.has_z) ops.append_sum(1.0f);
    if (act_post_op) c.act.AppendTo(ops);
    attr.set_post_ops(ops);
  }
  using cf = dnnl::convolution_forward;
  const auto make = [&](dnnl::algorithm alg, const memory::desc& s, const memory::desc& d) {
    const auto kind = dnnl::prop_kind::forward_inference;
    const cf::desc desc =
        c.has_bias ? cf::desc(kind, alg, s, weights,
                              memory::desc({cs.out_channels}, memory::data_type::f32, memory::format_tag::x), d,
                              strides, dilates, pad_l, pad_r)
                   : cf::desc(kind, alg, s, weights, d, strides, dilates, pad_l, pad_r);
    return cf::primitive_desc(desc, attr, Engine());
  };
  const memory::desc weights_user = PlainDesc(Shape(wdims.begin(), wdims.end()), DataType::kFloat);
  if (WinogradCandidate(c, cs, w, constant_weights)) {
    // oneDNN's Winograd kernels read and write nChw16c only: other layouts are reordered around them.
    const auto f32 = memory::data_type::f32;
    const auto blocked16 = memory::format_tag::nChw16c;
    try {
      return {make(dnnl::algorithm::convolution_winograd, memory::desc(Dims(x), f32, blocked16),
                   memory::desc(Dims(cs.y_shape), f32, blocked16)),
              src_user, weights_user, dst_user};
    } catch (const dnnl::error&) {
      // No Winograd kernel for this machine, geometry or post-op: the direct convolution below.
    }
  }
  if (BrgconvCandidate(c, cs, constant_weights)) {
    try {
      auto pd = make(dnnl::algorithm::convolution_direct, BlockedDesc(x, 0), BlockedDesc(cs.y_shape, 0));
      if (std::strncmp(pd.impl_info_str(), "brgconv", 7) == 0) return {std::move(pd), src_user, weights_user, dst_user};
    } catch (const dnnl::error&) {
      // No channels-last kernel for this geometry or post-op: the direct convolution on the blocked layout below.
    }
  }
  return {make(dnnl::algorithm::convolution_direct, src, dst), src_user, weights_user, dst_user};
}

// See "Winograd scratchpad" at the top of the file.
constexpr size_t kWinogradScratchBudget = size_t{64} << 20;

bool IsWinograd(const dnnl::primitive_desc& pd) { return std::strstr(pd.impl_info_str(), "wino") != nullptr; }

// How many output-channel parts a convolution whose primitive descriptor is `p` runs in: 1 unless it is a batch-1
// Winograd convolution whose scratchpad exceeds the budget and whose Y splits into contiguous slices of whole
// channel blocks; then the fewest parts (halving M, at least 32 channels a part, each still Winograd) whose
// scratchpad fits, or the most there can be when none does.
int WinogradParts(const ConvConfig& c, const ConvPd& p, const Shape& x, const Shape& w) {
  if (!IsWinograd(p.pd) || p.pd.scratchpad_desc().get_size() <= kWinogradScratchBudget || x[0] != 1) return 1;
  if (c.blocked && c.block == 0) return 1;  // channels-last: a channel slice of Y is not contiguous
  const int64_t unit = std::max<int64_t>(16, c.blocked ? c.block : 1);
  int best = 1;
  for (int parts = 2; w[0] % (parts * unit) == 0 && w[0] / parts >= 32; parts *= 2) {
    Shape part_w = w;
    part_w[0] = w[0] / parts;
    try {
      const semantics::ConvShape cs = semantics::ResolveConv(c.attrs, c.group, x, part_w, "");
      const ConvPd part = MakeConvPd(c, x, part_w, cs, true);
      if (!IsWinograd(part.pd)) break;
      best = parts;
      if (part.pd.scratchpad_desc().get_size() <= kWinogradScratchBudget) break;
    } catch (const Error&) {
      break;
    } catch (const dnnl::error&) {
      break;
    }
  }
  return best;
}

// A com.microsoft.nchwc Conv's W, ORT's blocked layout unpacked to ONNX's [M, C/group, kh, kw] (the copy the
// kernel packs from); null for a W that is not float32 4-D (Prepare refuses it, naming W).
std::shared_ptr<const Tensor> NchwcPlainWeights(const ir::Node& node, const ConvConfig& c) {
  const std::shared_ptr<const Tensor> w = ConstantInput(node, 1);
  if (!w) {
    throw UnsupportedError(node.Describe() + ": W is not a constant initializer (ORT's NCHWc transformer writes " +
                           "one): the cpu kernel unpacks it at creation");
  }
  if (w->dtype() != DataType::kFloat || w->shape().size() != 4) return nullptr;  // Prepare refuses it, naming W
  const std::vector<float> plain = ref::NchwcFilterToPlain(w->data<float>(), w->shape(), c.nchwc_layout, c.block);
  return std::make_shared<const Tensor>(Tensor::FromVector(DataType::kFloat, w->shape(), plain));
}

// What Prepare resolves for one input signature: Y's geometry and the primitive Compute runs.
struct ConvState {
  semantics::ConvShape cs;  // logical geometry (Y's logical shape is cs.y_shape)
  Shape y_shape;            // Y as Ferry stores it: cs.y_shape, or its blocked form for BlockedConv
  bool padded = false;      // a blocked Y with padding channels (oneDNN's sum needs them zero in Z's copy)
  int threads = 1;          // what the plan was built for and runs with
  // Null when Y is empty, or when no tap reads X (no input channels or an empty input plane: Y = act(B + Z)).
  std::shared_ptr<const ConvPlan> plan;
};

class ConvKernel : public OpKernel {
 public:
  ConvKernel(const ir::Node& node, ConvOp op, const KernelOptions& options)
      : cfg_(ConvConfig::FromNode(node, op)),
        what_(node.Describe()),
        weights_(cfg_.nchwc ? NchwcPlainWeights(node, cfg_) : ConstantInput(node, 1)),
        constant_(weights_ != nullptr) {
    packed_.ShareAs(ConstantInput(node, 1));  // other nodes reading this initializer share its packed copies
    // Static shapes, or static but for a symbolic batch (planned for batch 1): build the primitive and pack the
    // weights now, for the session's thread count, so that the first run does not pay for them (oneDNN takes ~90 ms
    // to transform 512x512x3x3 weights for Winograd); Prepare takes this plan when its signature matches, and the
    // packed weights for any signature whose primitive wants the same layout. A shape error is Prepare's to report,
    // naming the model and the input at fault.
    const auto x = StaticShapeButBatch(node, 0), w = StaticShape(node, 1);
    if (!x || !w || ShapeElementCount(*x) == 0 || ShapeElementCount(*w) == 0) return;
    const auto logical = cfg_.LogicalX(*x, *w);
    if (!logical || logical->size() < 3 || logical->size() > 5) return;
    try {
      const semantics::ConvShape cs = semantics::ResolveConv(cfg_.attrs, cfg_.group, *logical, *w, what_);
      ScopedOmpThreads scope(options.threads);
      created_ = Build(*logical, *w, cs);
      created_x_ = *logical;
      created_w_ = *w;
      created_threads_ = options.threads;
      created_only_ = StaticShape(node, 0).has_value();
    } catch (const InvalidArgumentError&) {  // Prepare reports it, with the inputs it is given
    }
  }

  int64_t held_bytes() const override {
    return packed_.bytes() + (cfg_.nchwc && weights_ ? static_cast<int64_t>(weights_->nbytes()) : 0);
  }

  // The session frees a constant W once every kernel reading it holds its own copy (docs/memory.md, "Freeing
  // weights once packed"). Possible when the plan built at creation holds W packed in a layout oneDNN can reorder
  // back to the plain one: a later plan that wants another layout packs from W unpacked from that copy
  // (UnpackedWeights). The Winograd domain is a one-way transform: W is released then only when X's shape is fully
  // static (the session checks its inputs' static dims and runs with its own thread count, so the created plan is
  // the only one it asks for). From then on Compute ignores its W input.
  bool ReleaseConstantInput(size_t k) override {
    if (k != 1) return false;
    const bool released = ReleasePackedWeights();
    return released || cfg_.nchwc;  // nchwc: the model's W (ORT's layout) is never read, weights_ is a copy
  }

 private:
  // ReleaseConstantInput's rule for weights_ (above).
  bool ReleasePackedWeights() {
    if (!weights_ || !created_) return false;
    std::vector<const ConvPlan*> plans{created_.get()};
    if (!created_->parts.empty()) {  // only Winograd runs in parts
      if (!created_only_) return false;
      plans.clear();
      for (const ConvPlan::Part& part : created_->parts) plans.push_back(part.plan.get());
    }
    for (const ConvPlan* plan : plans) {
      if (!plan->packed_weights) return false;
      try {
        dnnl::reorder::primitive_desc unpack(Engine(), plan->weights_md, Engine(), plan->weights_user);
      } catch (const dnnl::error&) {
        if (!created_only_) return false;  // no reorder back to the plain layout: keep the initializer
        one_way_ = true;
      }
    }
    if (!created_->parts.empty()) one_way_ = true;
    weights_.reset();
    return true;
  }

 public:
  // Every check of the inputs, Y's shape, the primitive for these shapes and the scratch slots it runs with.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& w = ctx.tensor_input(1);
    const InputSpec* bias = ctx.has_input(2) ? &ctx.tensor_input(2) : nullptr;
    const InputSpec* z = cfg_.has_z && ctx.has_input(3) ? &ctx.tensor_input(3) : nullptr;
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat || w.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X and W must be float32 on this kernel, got " + ctx.InputString(0) +
                                 " and " + ctx.InputString(1));
    }
    if (cfg_.nchwc) {  // ORT's 4-D tensors: the messages name the NCHWc block
      ref::CheckNchwcTensor(ctx, 0, "X", 0);
      ref::CheckNchwcTensor(ctx, 1, "W", 0);
      ref::CheckNchwcConvInput(ctx, cfg_.nchwc_layout, cfg_.group, cfg_.block);
    }
    const std::optional<Shape> logical = cfg_.LogicalX(x.shape, w.shape);
    if (!logical) {
      throw InvalidArgumentError(what + ": " + ctx.InputString(0) + ", expected W[1] * group = " +
                                 std::to_string(w.shape.size() >= 2 ? w.shape[1] * cfg_.group : 0) + " channels " +
                                 (cfg_.block > 0 ? "blocked by " + std::to_string(cfg_.block) +
                                                       " ([N, ceil(C/block), spatial..., block])"
                                                 : std::string("channels-last ([N, spatial..., C])")) +
                                 " for " + ctx.InputString(1));
    }
    ConvState s;
    try {
      s.cs = semantics::ResolveConv(cfg_.attrs, cfg_.group, *logical, w.shape, what);
    } catch (const InvalidArgumentError& e) {  // the geometry does not fit these inputs: name them
      throw InvalidArgumentError(std::string(e.what()) + " (" + ctx.InputString(0) + ", " + ctx.InputString(1) + ")");
    }
    if (bias && (bias->shape.size() != 1 || bias->shape[0] != s.cs.out_channels || bias->dtype != x.dtype)) {
      throw InvalidArgumentError(what + ": bias B is " + ctx.InputString(2) + ", expected float32[" +
                                 std::to_string(s.cs.out_channels) + "] (X's type, one value per output channel)");
    }
    if (bias == nullptr && cfg_.has_bias) throw InvalidArgumentError(what + ": bias B is declared but not given");
    if (logical->size() > 5) {
      throw UnsupportedError(what + ": X has logical rank " + std::to_string(logical->size()) + " (" +
                             ctx.InputString(0) + "); the cpu kernel runs 1-D to 3-D convolutions (rank 3 to 5)");
    }
    s.y_shape = cfg_.blocked && !cfg_.nchwc ? BlockedShape(s.cs.y_shape, cfg_.block) : s.cs.y_shape;
    if (cfg_.has_z) {
      if (!z) throw InvalidArgumentError(what + ": input Z is declared but not given");
      if (z->dtype != DataType::kFloat || z->shape != s.y_shape) {
        throw InvalidArgumentError(what + ": input Z is " + ctx.InputString(3) + ", expected Y's float32" +
                                   ShapeToString(s.y_shape));
      }
    }
    ctx.SetOutput(0, x.dtype, s.y_shape);
    // Y accumulates onto Z in Z's own buffer when Z dies here (a residual sum), unless blocked padding lanes would
    // need zeroing first.
    s.padded = cfg_.blocked && cfg_.block > 0 && s.cs.out_channels % cfg_.block != 0;
    if (z && !s.padded) ctx.output(0).in_place_of = 3;
    s.threads = ctx.threads();
    if (ShapeElementCount(s.y_shape) > 0 && ShapeElementCount(x.shape) > 0 && ShapeElementCount(w.shape) > 0) {
      s.plan = PlanFor(*logical, w.shape, s.cs, s.threads);
      AddConvWorkspace(*s.plan, ctx.workspace());
    }
    ctx.EmplaceState(std::move(s));
  }

  void Compute(KernelContext& ctx) const override {
    const ConvState& p = ctx.state<ConvState>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& w = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const Tensor* z = cfg_.has_z ? ctx.input(3) : nullptr;
    Tensor* reused = z && !p.padded ? ctx.ReuseInput(3, 0, DataType::kFloat, p.y_shape) : nullptr;
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);  // every element written below
    if (y.size() == 0) return;
    const float* b = bias ? bias->data<float>() : nullptr;
    const float* zp = reused ? y.data<float>() : z ? z->data<float>() : nullptr;
    if (!p.plan) {  // no input channels or an empty input plane: every tap reads zeros
      FillWithoutTaps(b, zp, p.cs, y.data<float>());
      return;
    }
    if (zp && p.padded) {  // Z into Y with the zero padding oneDNN's sum expects
      CopyZeroingPadding(zp, y.data<float>(), p.y_shape, p.cs.out_channels, ctx.threads());
      zp = y.data<float>();
    }
    RunConvPlan(*p.plan, x.raw_data(), w.raw_data(), b, y.raw_data(), p.threads, what_, zp);
    if (cfg_.act_pass) cfg_.act_pass.Run(y.data<float>(), y.size(), p.threads);
  }

 private:
  // Y where no tap reads X: act(bias + Z), zeros in the padding channels of a blocked Y.
  void FillWithoutTaps(const float* bias, const float* z, const semantics::ConvShape& cs, float* y) const {
    const int64_t plane = cs.g.out_size(), channels = cs.out_channels;
    // Y holds `blocks` groups of `lanes` interleaved planes: plain 1, blocked b, channels-last every channel.
    const int64_t lanes = !cfg_.blocked ? 1 : cfg_.block > 0 ? cfg_.block : std::max<int64_t>(channels, 1);
    const int64_t blocks = (channels + lanes - 1) / lanes;
    for (int64_t n = 0; n < cs.batch; ++n) {
      for (int64_t cb = 0; cb < blocks; ++cb) {
        for (int64_t i = 0; i < plane; ++i) {
          for (int64_t lane = 0; lane < lanes; ++lane) {
            const int64_t m = cb * lanes + lane;
            const int64_t at = ((n * blocks + cb) * plane + i) * lanes + lane;
            if (m >= channels) {
              y[at] = 0.0f;
              continue;
            }
            y[at] = cfg_.act.Apply((bias ? bias[m] : 0.0f) + (z ? z[at] : 0.0f));
          }
        }
      }
    }
  }

  // The plan for logical X `x`, W `w` and `threads`: the one built at creation when it is for these, else a new
  // one, built for `threads` (oneDNN fixes a primitive's parallel split when it is created).
  std::shared_ptr<const ConvPlan> PlanFor(const Shape& x, const Shape& w, const semantics::ConvShape& cs,
                                          int threads) const {
    if (created_ && created_threads_ == threads && created_x_ == x && created_w_ == w) return created_;
    ScopedOmpThreads scope(threads);
    return Build(x, w, cs);
  }

  // Call under ScopedOmpThreads for the thread count the plan will run with.
  std::shared_ptr<ConvPlan> Build(const Shape& x, const Shape& w, const semantics::ConvShape& cs) const {
    auto plan = std::make_shared<ConvPlan>();
    plan->bias = cfg_.has_bias;
    plan->sum = cfg_.has_z;
    try {
      const ConvPd p = MakeConvPd(cfg_, x, w, cs, constant_);
      if (const int parts = constant_ ? WinogradParts(cfg_, p, x, w) : 1; parts > 1) {
        BuildParts(*plan, x, w, parts, p.weights_user);
        return plan;
      }
      plan->src_user = p.src_user;
      plan->weights_user = p.weights_user;
      plan->dst_user = p.dst_user;
      // W itself, or once released, W unpacked for a layout not packed yet (alive until it is packed).
      std::optional<Tensor> unpacked;
      const Tensor* constant = weights_.get();
      if (constant_ && !constant && p.pd.weights_desc() != created_->weights_md) {
        if (one_way_) {
          throw InvalidArgumentError(what_ + ": X has shape " + ShapeToString(x) + ", but the model declares " +
                                     ShapeToString(created_x_) + ", the only shape its weights, released once " +
                                     "packed for Winograd (a one-way transform), can serve");
        }
        unpacked = UnpackedWeights(p.weights_user);
        constant = &*unpacked;
      }
      // A released W whose layout is the created plan's: packed_ returns that copy without reading `constant`.
      const Tensor released = Tensor::Wrap(DataType::kFloat, created_w_, nullptr, nullptr);
      if (constant_ && !constant) constant = &released;
      FinishConvPlan(*plan, p.pd, dnnl::convolution_forward(p.pd), constant, &packed_, what_);
    } catch (const dnnl::error& e) {
      throw InternalError(what_ + ": oneDNN could not create the convolution: " + e.what());
    }
    return plan;
  }

  // `plan` as `parts` plans over consecutive slices of M (batch 1: each part's Y and Z a contiguous slice), each
  // packing its rows of W (a submemory of `weights_user`, W's plain desc). See "Winograd scratchpad".
  void BuildParts(ConvPlan& plan, const Shape& x, const Shape& w, int parts,
                  const dnnl::memory::desc& weights_user) const {
    if (!weights_) {
      throw InvalidArgumentError(what_ + ": X has shape " + ShapeToString(x) + ", but the model declares " +
                                 ShapeToString(created_x_) + ", the only shape its released weights can serve");
    }
    Shape part_w = w;
    part_w[0] = w[0] / parts;
    const semantics::ConvShape cs = semantics::ResolveConv(cfg_.attrs, cfg_.group, x, part_w, what_);
    int64_t plane = 1;
    for (size_t d = 2; d < cs.y_shape.size(); ++d) plane *= cs.y_shape[d];
    memory::dims rows(part_w.begin(), part_w.end()), offsets(part_w.size(), 0);
    for (int j = 0; j < parts; ++j) {
      auto part = std::make_shared<ConvPlan>();
      part->bias = plan.bias;
      part->sum = plan.sum;
      const ConvPd p = MakeConvPd(cfg_, x, part_w, cs, true);
      part->src_user = p.src_user;
      offsets[0] = j * part_w[0];
      part->weights_user = weights_user.submemory_desc(rows, offsets);
      part->dst_user = p.dst_user;
      FinishConvPlan(*part, p.pd, dnnl::convolution_forward(p.pd), weights_.get(), &packed_, what_);
      plan.parts.push_back({std::move(part), offsets[0], offsets[0] * plane});
    }
  }

  // W in its plain layout `user` (created_w_ as ONNX lays it out), reordered back from the created plan's packed
  // copy. For a released W only; the packed copy is only read, so plans may be built on several threads at once.
  Tensor UnpackedWeights(const dnnl::memory::desc& user) const {
    Tensor w = Tensor::Uninitialized(DataType::kFloat, created_w_);
    dnnl::memory to(user, Engine(), w.raw_data());
    dnnl::memory from = *created_->packed_weights;
    WithStream(1, what_ + ": unpacking its released weights",
               [&](dnnl::stream& s) { dnnl::reorder(from, to).execute(s, from, to); });
    return w;
  }

  ConvConfig cfg_;
  std::string what_;
  std::shared_ptr<const Tensor> weights_;  // constant W (packed into each plan), or null; null too once released
  bool constant_ = false;                  // W is a constant (held in weights_, or released and packed in created_)
  mutable PackedWeights packed_;           // internally locked: Prepare may run for two signatures at once
  // The plan built at creation (static shapes but for the batch), for logical X created_x_, W created_w_ and
  // created_threads_ threads; null when none was.
  std::shared_ptr<const ConvPlan> created_;
  Shape created_x_, created_w_;
  int created_threads_ = 0;
  bool created_only_ = false;  // X's shape is fully static: created_ is the only plan a session asks for
  bool one_way_ = false;       // W was released packed in a layout with no reorder back (the Winograd domain)
};

std::string ConvPredicate(const ir::Node& node) {
  // Conv-1 defines SAME_* as "output size = input size", which differs from opset 11's ceil(input / stride) once a
  // stride is > 1; at stride 1 both agree.
  const std::string pad = node.GetString("auto_pad", "NOTSET");
  if (node.opset() < 11 && (pad == "SAME_UPPER" || pad == "SAME_LOWER")) {
    for (int64_t s : node.GetInts("strides")) {
      if (s > 1) return "Conv-1: auto_pad=" + pad + " with strides > 1 is not implemented on cpu (opset < 11)";
    }
  }
  return "";
}

std::string ConvShapePredicate(const ir::Node& node) {
  int64_t rank = KnownRank(node, 0);
  if (rank < 0) rank = KnownRank(node, 1);
  if (rank > 5) {
    return node.op_type() + ": " + std::to_string(rank - 2) + "-D convolution (X of rank " + std::to_string(rank) +
           ") is not implemented on cpu (1-D to 3-D only)";
  }
  return "";
}

std::string FusedConvPredicate(const ir::Node& node) {
  FusedActivation act;
  return FusedActivation::Parse(node, &act);
}

// The rules oneDNN 2.6's jit convolutions follow on blocked tensors (checked on AVX-512 and with 8-blocks), from W
// alone: what they do not cover runs on oneDNN's reference implementation.
std::string BlockedConvPredicate(const ir::Node& node) {
  const int64_t block = node.GetInt("block", 0);
  if (std::string reason = BlockReason(node.op_type(), block); !reason.empty()) return reason;
  FusedActivation act;
  if (std::string reason = FusedActivation::Parse(node, &act); !reason.empty()) return reason;
  const auto w = StaticShape(node, 1);
  const int64_t group = node.GetInt("group", 1);
  if (!w || w->size() < 3 || group < 1) return "";
  const int64_t cg = (*w)[1], m = (*w)[0], channels = cg * group;
  const bool depthwise = group > 1 && group == channels && group == m;
  const std::string slow = " would run on oneDNN's slow reference implementation; not blocked on cpu";
  const bool plain_input = node.GetInt("plain_input", 0) != 0;
  if (block == 0) {  // channels-last: oneDNN's brgconv / jit kernels take every grouping, but not a plain X
    return plain_input ? "BlockedConv: plain_input with channels-last (block 0)" + slow : "";
  }
  if (depthwise && w->size() != 4) {
    return "BlockedConv: a " + std::to_string(w->size() - 2) + "-D depthwise convolution" + slow + " (2-D only)";
  }
  if (group > 1 && !depthwise && (cg % block != 0 || (m / group) % block != 0)) {
    return "BlockedConv: a grouped convolution with C/group = " + std::to_string(cg) + " and M/group = " +
           std::to_string(m / group) + " (not multiples of the block " + std::to_string(block) + ")" + slow;
  }
  if (plain_input && channels >= block) {
    return "BlockedConv: plain_input with C = " + std::to_string(channels) + " >= block " + std::to_string(block) +
           slow;
  }
  const bool pointwise = std::all_of(w->begin() + 2, w->end(), [](int64_t k) { return k == 1; });
  const std::vector<int64_t> strides = node.GetInts("strides");
  const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; });
  if (!plain_input && group == 1 && channels < block && (!pointwise || strided)) {
    return "BlockedConv: a blocked X with C = " + std::to_string(channels) + " < block " + std::to_string(block) +
           " and a spatial or strided kernel (plain_input = 1 is the fast form)" + slow;
  }
  return "";
}

// 1-D to 3-D; and when W and X's spatial dims are static (N and X's channel dims may be symbolic), the primitive
// oneDNN would create must not be its reference implementation.
std::string BlockedConvShapePredicate(const ir::Node& node) {
  const int64_t rank = KnownRank(node, 1);  // W's rank is the logical rank
  if (rank >= 0 && (rank < 3 || rank > 5)) {
    return "BlockedConv: a convolution with W of rank " + std::to_string(rank) +
           " is not implemented on cpu (1-D to 3-D only)";
  }
  const auto w = StaticShape(node, 1);
  const ir::Value* xv = node.input(0);
  if (!w || !xv || !xv->type().is_tensor() || !xv->type().shape) return "";
  Shape x;
  for (const ir::Dim& d : *xv->type().shape) x.push_back(d.is_static() ? d.value : -1);
  try {
    const ConvConfig cfg = ConvConfig::FromNode(node, ConvOp::kBlockedConv);
    // N, and X's channel dims (given by W), need not be static.
    if (x.size() < 3 || w->size() < 3) return "";
    if (x[0] < 0) x[0] = 1;
    const int64_t channels = (*w)[1] * cfg.group;
    if (!cfg.blocked_x() || cfg.block > 0) {
      if (x[1] < 0) x[1] = cfg.blocked_x() ? (channels + cfg.block - 1) / cfg.block : channels;
      if (cfg.blocked_x() && x.back() < 0) x.back() = cfg.block;
    } else if (x.back() < 0) {
      x.back() = channels;
    }
    if (std::any_of(x.begin(), x.end(), [](int64_t d) { return d < 0; }) || ShapeElementCount(*w) == 0) return "";
    const auto logical = cfg.LogicalX(x, *w);
    if (!logical || ShapeElementCount(*logical) == 0) return "";  // left for Prepare to report
    const semantics::ConvShape cs = semantics::ResolveConv(cfg.attrs, cfg.group, *logical, *w, node.Describe());
    const ConvPd p = MakeConvPd(cfg, *logical, *w, cs, ConstantInput(node, 1) != nullptr);
    const std::string impl = p.pd.impl_info_str();
    if (impl.find("ref") != std::string::npos) {
      return "BlockedConv: oneDNN would run this convolution (X " + ShapeToString(*logical) + ", W " +
             ShapeToString(*w) + ", group " + std::to_string(cfg.group) + ") on its slow reference implementation (" +
             impl + "); not blocked on cpu";
    }
  } catch (const InvalidArgumentError&) {
    return "";  // left for Prepare to report
  } catch (const UnsupportedError&) {
    return "";  // the predicate names it
  } catch (const dnnl::error& e) {
    return std::string("BlockedConv: oneDNN cannot create this convolution on cpu: ") + e.what();
  }
  return "";
}

// com.microsoft.nchwc Conv: a constant W ORT's transformer could have written (nchwc_layout.h) and an activation the
// cpu kernels run; anything else goes to ref, whose Prepare names what is wrong.
std::string NchwcConvPredicate(const ir::Node& node) {
  FusedActivation act;
  if (std::string reason = FusedActivation::Parse(node, &act); !reason.empty()) return reason;
  // An initializer no feed overrides: ConstantInput, or (`ferry check`, which does not load the weights) a typed
  // value no node produces.
  const ir::Value* wv = node.input(1);
  const bool constant = wv && (wv->is_initializer() || !wv->producer()) && wv->owner() &&
                        std::find(wv->owner()->inputs().begin(), wv->owner()->inputs().end(), wv) ==
                            wv->owner()->inputs().end();
  const auto w = StaticShape(node, 1);
  if (!w || !constant) {
    return "com.microsoft.nchwc Conv: W is not a constant initializer; the cpu kernel unpacks ORT's blocked W at "
           "creation";
  }
  int64_t block = 0;
  try {
    block = NchwcBlockSize();
  } catch (const Error& e) {
    return e.what();
  }
  NchwcConvLayout layout;
  if (std::string why = NchwcConvLayoutOf(*w, node.GetInt("group", 1), block, &layout); !why.empty()) {
    return "com.microsoft.nchwc Conv: W has shape " + ShapeToString(*w) + ": " + why;
  }
  return "";
}

std::unique_ptr<OpKernel> MakeConv(const ir::Node& node, const KernelOptions& options) {
  return std::make_unique<ConvKernel>(node, ConvOp::kConv, options);
}
std::unique_ptr<OpKernel> MakeFusedConv(const ir::Node& node, const KernelOptions& options) {
  return std::make_unique<ConvKernel>(node, ConvOp::kFusedConv, options);
}
std::unique_ptr<OpKernel> MakeBlockedConv(const ir::Node& node, const KernelOptions& options) {
  return std::make_unique<ConvKernel>(node, ConvOp::kBlockedConv, options);
}
std::unique_ptr<OpKernel> MakeNchwcConv(const ir::Node& node, const KernelOptions& options) {
  return std::make_unique<ConvKernel>(node, ConvOp::kNchwcConv, options);
}

}  // namespace

void RegisterConvKernels(KernelRegistry& r) {
  r.Add({.op = "Conv",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeConv,
         .predicate = ConvPredicate,
         .shape_predicate = ConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_conv__onednn.1",
         .constraints = "float32; 1-D to 3-D; opsets 1-10: no auto_pad=SAME_* with strides > 1",
         .library = "oneDNN"});
}

void RegisterFusedConvKernels(KernelRegistry& r) {
  const std::string domain(schemas::kFerryDomain);
  r.Add({.op = "FusedConv",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeFusedConv,
         .predicate = FusedConvPredicate,
         .shape_predicate = ConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_fused_conv__onednn.1",
         .constraints = "float32; 1-D to 3-D; activation Clip only with min <= max",
         .library = "oneDNN"});
  // com.microsoft::FusedConv (ONNX Runtime's conv + activation fusion): the same attributes and definition, ONNX
  // Runtime's activation names rows of the same table (semantics/fused_activation.h).
  r.Add({.op = "FusedConv",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeFusedConv,
         .predicate = FusedConvPredicate,
         .shape_predicate = ConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_ms_fused_conv__onednn.1",
         .constraints = "float32; 1-D to 3-D; activation Clip only with min <= max",
         .library = "oneDNN"});
  r.Add({.op = "BlockedConv",
         .domain = domain,
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeBlockedConv,
         .predicate = BlockedConvPredicate,
         .shape_predicate = BlockedConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_blocked_conv__onednn.1",
         .constraints = "float32; 1-D to 3-D; block 8, 16 or 0 (channels-last); only what oneDNN runs with a jit "
                        "kernel: blocks 8/16 group only 2-D depthwise or with C/group, M/group multiples of the "
                        "block, plain_input only with C < block; channels-last no plain_input",
         .library = "oneDNN"});
}

// --- com.microsoft.nchwc, group "nchwc" ---
void RegisterNchwcConvKernels(KernelRegistry& r) {
  r.Add({.op = "Conv",
         .domain = std::string(schemas::kMsNchwcDomain),
         .since = 1,
         .types = {{"T", {DataType::kFloat}}},
         .create = MakeNchwcConv,
         .predicate = NchwcConvPredicate,
         .shape_predicate = ConvShapePredicate,
         .isa = {},
         .name = "cpu.f32_nchwc_conv__onednn.1",
         .constraints = "float32; 2-D; W a constant initializer in ORT's NCHWc layout; activation Clip only with "
                        "min <= max",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
