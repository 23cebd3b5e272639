// Shape inference for neural-network ops: convolutions and pools (kernel_shape, pads, strides, dilations,
// auto_pad, ceil_mode, output_padding: semantics/window.h, the window arithmetic of the kernels), global pools,
// normalizations and softmaxes (same shape), RoI pools, depth/space rearrangements, grid sampling, recurrent
// layers, losses and the training optimizers.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"
#include "semantics/fused_activation.h"
#include "semantics/window.h"

namespace ferry::schemas {
namespace {

std::string IntsString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// A list attribute with one value per spatial dim, or `n` copies of `def` when absent. Fails on a wrong length.
std::vector<int64_t> SpatialAttr(InferenceContext& ctx, std::string_view name, size_t n, int64_t def) {
  std::vector<int64_t> v = ctx.attr_ints(name);
  if (v.empty()) return std::vector<int64_t>(n, def);
  if (v.size() != n) {
    ctx.Fail("attribute " + std::string(name) + " = " + IntsString(v) + " has " + std::to_string(v.size()) +
             " values, expected " + std::to_string(n) + " (one per spatial dimension of " + ctx.InputString(0) +
             ")");
  }
  for (int64_t x : v) {
    if (x < 1) ctx.Fail("attribute " + std::string(name) + " = " + IntsString(v) + " must be >= 1");
  }
  return v;
}

// auto_pad, parsed (semantics::ParseAutoPad); Fails on a value the kernels refuse too.
semantics::AutoPad AutoPadAttr(InferenceContext& ctx) {
  const std::string value = ctx.attr_string("auto_pad", "NOTSET");
  const std::optional<semantics::AutoPad> p = semantics::ParseAutoPad(value);
  if (!p) ctx.Fail(semantics::AutoPadError(value));
  return *p;
}

// The explicit pads (2 * n values; zeros when absent or auto_pad is not NOTSET). Fails on a wrong length.
std::vector<int64_t> PadsAttr(InferenceContext& ctx, size_t n, semantics::AutoPad auto_pad) {
  std::vector<int64_t> pads(2 * n, 0);
  if (auto_pad != semantics::AutoPad::kNotSet) return pads;
  std::vector<int64_t> p = ctx.attr_ints("pads");
  if (p.empty()) return pads;
  if (p.size() != 2 * n) {
    ctx.Fail("attribute pads = " + IntsString(p) + " has " + std::to_string(p.size()) + " values, expected " +
             std::to_string(2 * n));
  }
  return p;
}

// The spatial output dims of a Conv or pool window over `in` (spatial dims only): semantics::ResolveWindowDim,
// as the kernels resolve it.
Dims WindowOutput(InferenceContext& ctx, std::span<const ir::Dim> in, const std::vector<int64_t>& kernel,
                  bool ceil_mode) {
  const size_t n = in.size();
  const std::vector<int64_t> strides = SpatialAttr(ctx, "strides", n, 1);
  const std::vector<int64_t> dilations = SpatialAttr(ctx, "dilations", n, 1);
  const semantics::AutoPad auto_pad = AutoPadAttr(ctx);
  const std::vector<int64_t> pads = PadsAttr(ctx, n, auto_pad);
  Dims out(n);
  for (size_t d = 0; d < n; ++d) {
    if (kernel[d] < 1) continue;
    if (!in[d].is_static()) {
      // The dim survives unchanged when the window is the identity along it.
      if (semantics::WindowKeepsExtent(kernel[d], strides[d], dilations[d], pads[d], pads[d + n], auto_pad)) {
        out[d] = in[d];
      }
      continue;
    }
    const std::optional<semantics::WindowDim> r = semantics::ResolveWindowDim(
        in[d].value, kernel[d], strides[d], dilations[d], pads[d], pads[d + n], auto_pad, ceil_mode);
    if (!r) continue;  // absurd attributes: leave the dim unknown
    if (r->out <= 0) {
      ctx.Fail("input " + ctx.InputString(0) + " is too small along spatial dim " + std::to_string(d) +
               " for kernel " + IntsString(kernel) + " with dilations " + IntsString(dilations) + " and pads " +
               IntsString(pads));
    }
    out[d] = ir::Dim::Static(r->out);
  }
  return out;
}

// Conv, ConvInteger, QLinearConv, DeformConv: X [N, C, in...], W [M, C/group, k...] -> [N, M, out...].
template <size_t kW>
void Conv(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(kW);
  if (x && x->size() < 3) ctx.Fail("input X " + ctx.InputString(0) + " must have rank >= 3 (N, C, spatial...)");
  if (x && w && x->size() != w->size()) {
    ctx.Fail("weight W " + ctx.InputString(kW) + " and input X " + ctx.InputString(0) + " differ in rank");
  }
  const int64_t group = ctx.attr_int("group", 1);
  if (x && w && (*x)[1].is_static() && (*w)[1].is_static()) {
    auto expected = CheckedMul((*w)[1].value, group);
    if (!expected || *expected != (*x)[1].value) {
      ctx.Fail("X " + ctx.InputString(0) + " has " + std::to_string((*x)[1].value) + " channels but W " +
               ctx.InputString(kW) + " with group = " + std::to_string(group) + " expects W[1] * group");
    }
  }
  const size_t rank = x ? x->size() : w ? w->size() : 0;
  if (rank < 3) return;
  const size_t n = rank - 2;
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty() && w) {
    for (size_t d = 0; d < n; ++d) {
      if (!(*w)[2 + d].is_static()) return;
      kernel.push_back((*w)[2 + d].value);
    }
  }
  if (kernel.size() != n) {
    ctx.Fail("kernel_shape " + IntsString(kernel) + " does not match the " + std::to_string(n) +
             " spatial dimensions of X " + ctx.InputString(0));
  }
  Dims out{x ? (*x)[0] : UnknownDim(), w ? (*w)[0] : UnknownDim()};
  if (x) {
    Dims sp = WindowOutput(ctx, std::span<const ir::Dim>(*x).subspan(2), kernel, false);
    out.insert(out.end(), sp.begin(), sp.end());
  } else {
    out.resize(rank);
  }
  ctx.SetOutputShape(0, std::move(out));
}

// --- ai.ferry blocked-layout ops (schemas_ferry.cc): a blocked [N, C, D...] is [N, ceil(C/b), D..., b] for a
// block b >= 1 and the channels-last [N, D..., C] for b = 0. ---

int64_t BlockAttr(InferenceContext& ctx) {
  const int64_t b = ctx.attr_int("block", -1);
  if (b < 0) ctx.Fail("attribute block = " + std::to_string(b) + " must be >= 0 (0: channels-last)");
  return b;
}

// The blocked dims of a tensor with these logical dims [N, C, D...].
Dims BlockedDimsOf(const Dims& logical, int64_t block) {
  Dims out{logical[0]};
  if (block > 0) {
    const ir::Dim& c = logical[1];
    out.push_back(c.is_static() ? ir::Dim::Static((c.value + block - 1) / block) : UnknownDim());
  }
  out.insert(out.end(), logical.begin() + 2, logical.end());
  out.push_back(block > 0 ? ir::Dim::Static(block) : logical[1]);
  return out;
}

// The spatial dims of a blocked tensor: [N, Cb, D..., b] or [N, D..., C].
std::span<const ir::Dim> BlockedSpatial(const Dims& x, int64_t block) {
  return std::span<const ir::Dim>(x).subspan(block > 0 ? 2 : 1, x.size() - (block > 0 ? 3 : 2));
}

// The fused activation of FusedConv / BlockedConv (semantics/fused_activation.h): Fails on one not in the table.
void CheckFusedActivation(InferenceContext& ctx) {
  const std::string e = semantics::FusedActivationError(ctx.attr_string("activation", ""),
                                                        ctx.attr_floats("activation_params"));
  if (!e.empty()) ctx.Fail(e);
}

// FusedConv: Conv's output, with a fused activation of the table.
void FusedConv(InferenceContext& ctx) {
  CheckFusedActivation(ctx);
  Conv<1>(ctx);
}

// BlockedConv: X blocked (plain when plain_input = 1), W [M, C/group, k...] -> Y blocked (logical [N, M, out...]).
void BlockedConv(InferenceContext& ctx) {
  CheckFusedActivation(ctx);
  const int64_t block = BlockAttr(ctx);
  const Dims* x = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(1);
  if (!x || !w) return;
  const bool plain = ctx.attr_int("plain_input", 0) != 0;
  const size_t rank = plain || block == 0 ? x->size() : x->size() - 1;  // the logical rank
  if (x->size() < 3 || rank < 3 || w->size() != rank) {
    ctx.Fail("input X " + ctx.InputString(0) + " does not match weight W " + ctx.InputString(1) +
             (plain ? " (X plain)" : " (X blocked)"));
  }
  if (!plain && block > 0 && (*x)[x->size() - 1].is_static() && (*x)[x->size() - 1].value != block) {
    ctx.Fail("input X " + ctx.InputString(0) + " is not blocked by " + std::to_string(block));
  }
  const size_t n = rank - 2;
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) {
    for (size_t d = 0; d < n; ++d) {
      if (!(*w)[2 + d].is_static()) return;
      kernel.push_back((*w)[2 + d].value);
    }
  }
  if (kernel.size() != n) ctx.Fail("kernel_shape " + IntsString(kernel) + " does not match W " + ctx.InputString(1));
  const std::span<const ir::Dim> in = plain ? std::span<const ir::Dim>(*x).subspan(2) : BlockedSpatial(*x, block);
  Dims logical{(*x)[0], (*w)[0]};
  Dims sp = WindowOutput(ctx, in, kernel, false);
  logical.insert(logical.end(), sp.begin(), sp.end());
  ctx.SetOutputShape(0, BlockedDimsOf(logical, block));
}

// BlockedPool: the pool `mode` names over blocked X -> blocked Y, spatial dims pooled.
void BlockedPool(InferenceContext& ctx) {
  const int64_t block = BlockAttr(ctx);
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() < (block > 0 ? 4u : 3u)) ctx.Fail("input X " + ctx.InputString(0) + " is not a blocked tensor");
  const std::string mode = ctx.attr_string("mode", "");
  Dims out(*x);
  const size_t first = block > 0 ? 2 : 1, count = BlockedSpatial(*x, block).size();
  if (block > 0) out.back() = ir::Dim::Static(block);
  if (mode == "GlobalAveragePool" || mode == "GlobalMaxPool") {
    for (size_t d = 0; d < count; ++d) out[first + d] = ir::Dim::Static(1);
  } else if (mode == "MaxPool" || mode == "AveragePool") {
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    if (kernel.size() != count) {
      ctx.Fail("kernel_shape " + IntsString(kernel) + " does not match blocked input " + ctx.InputString(0));
    }
    Dims sp = WindowOutput(ctx, BlockedSpatial(*x, block), kernel, ctx.attr_int("ceil_mode", 0) != 0);
    std::copy(sp.begin(), sp.end(), out.begin() + static_cast<std::ptrdiff_t>(first));
  } else {
    ctx.Fail("mode '" + mode + "' is not one of MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool");
  }
  ctx.SetOutputShape(0, std::move(out));
}

// ReorderToBlocked: [N, C, D...] -> blocked.
void ReorderToBlocked(InferenceContext& ctx) {
  const int64_t block = BlockAttr(ctx);
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() < 2) ctx.Fail("input X " + ctx.InputString(0) + " must have rank >= 2 (N, C, ...)");
  ctx.SetOutputShape(0, BlockedDimsOf(*x, block));
}

// ReorderFromBlocked: blocked -> [N, channels, D...].
void ReorderFromBlocked(InferenceContext& ctx) {
  const int64_t block = BlockAttr(ctx);
  const int64_t channels = ctx.attr_int("channels", -1);
  if (channels < 0) ctx.Fail("attribute channels = " + std::to_string(channels) + " must be >= 0");
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() < (block > 0 ? 3u : 2u)) ctx.Fail("input X " + ctx.InputString(0) + " is not a blocked tensor");
  const ir::Dim& last = x->back();
  const bool bad = block > 0 ? (((*x)[1].is_static() && (*x)[1].value != (channels + block - 1) / block) ||
                                (last.is_static() && last.value != block))
                             : (last.is_static() && last.value != channels);
  if (bad) {
    ctx.Fail("input X " + ctx.InputString(0) + " is not " + std::to_string(channels) + " channels blocked by " +
             std::to_string(block));
  }
  Dims out{(*x)[0], ir::Dim::Static(channels)};
  const auto sp = BlockedSpatial(*x, block);
  out.insert(out.end(), sp.begin(), sp.end());
  ctx.SetOutputShape(0, std::move(out));
}

// ConvTranspose: X [N, C, in...], W [C, M/group, k...] -> [N, M, out...].
void ConvTranspose(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(1);
  if (x && x->size() < 3) ctx.Fail("input X " + ctx.InputString(0) + " must have rank >= 3 (N, C, spatial...)");
  if (x && w && x->size() != w->size()) {
    ctx.Fail("weight W " + ctx.InputString(1) + " and input X " + ctx.InputString(0) + " differ in rank");
  }
  if (x && w && (*x)[1].is_static() && (*w)[0].is_static() && (*x)[1].value != (*w)[0].value) {
    ctx.Fail("X " + ctx.InputString(0) + " has " + std::to_string((*x)[1].value) + " channels but W " +
             ctx.InputString(1) + " expects " + std::to_string((*w)[0].value));
  }
  // output_padding holds one value per spatial axis: checked as soon as X's or W's rank is known.
  const std::vector<int64_t> out_pad_attr = ctx.attr_ints("output_padding");
  if (const size_t rank = x ? x->size() : w ? w->size() : 0; rank >= 3) {
    if (const std::string e = semantics::OutputPaddingError(out_pad_attr, rank - 2); !e.empty()) ctx.Fail(e);
  }
  if (!x) return;
  const size_t n = x->size() - 2;
  const int64_t group = ctx.attr_int("group", 1);
  Dims out{(*x)[0], w ? MulDim((*w)[1], group) : UnknownDim()};
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty() && w) {
    for (size_t d = 0; d < n; ++d) kernel.push_back((*w)[2 + d].is_static() ? (*w)[2 + d].value : -1);
  }
  const std::vector<int64_t> output_shape_attr = ctx.attr_ints("output_shape");
  if (!output_shape_attr.empty()) {
    const std::optional<std::vector<int64_t>> output_shape = semantics::SpatialOutputShape(output_shape_attr, n);
    if (!output_shape) ctx.Fail(semantics::OutputShapeError(output_shape_attr, n));
    for (int64_t v : *output_shape) out.push_back(DimOf(v));
    ctx.SetOutputShape(0, std::move(out));
    return;
  }
  if (kernel.size() != n) {
    ctx.Fail("kernel_shape " + IntsString(kernel) + " does not match the " + std::to_string(n) +
             " spatial dimensions of X " + ctx.InputString(0));
  }
  const std::vector<int64_t> strides = SpatialAttr(ctx, "strides", n, 1);
  const std::vector<int64_t> dilations = SpatialAttr(ctx, "dilations", n, 1);
  const std::vector<int64_t> out_pad = out_pad_attr.empty() ? std::vector<int64_t>(n, 0) : out_pad_attr;
  const semantics::AutoPad auto_pad = AutoPadAttr(ctx);
  const bool same = auto_pad == semantics::AutoPad::kSameUpper || auto_pad == semantics::AutoPad::kSameLower;
  const std::vector<int64_t> pads = PadsAttr(ctx, n, auto_pad);
  for (size_t d = 0; d < n; ++d) {
    const ir::Dim& in = (*x)[2 + d];
    // kernel -1: W's dim is unknown. An empty input extent is left to the kernel unless SAME_* (out = 0).
    std::optional<semantics::WindowDim> r;
    if (in.is_static() && kernel[d] >= 1 && (same || in.value >= 1)) {
      r = semantics::ResolveConvTransposeDim(in.value, kernel[d], strides[d], dilations[d], pads[d], pads[d + n],
                                             out_pad[d], auto_pad, std::nullopt);
    }
    if (!r) {
      out.emplace_back();
      continue;
    }
    if (r->out <= 0) {
      ctx.Fail("the output spatial extent along dim " + std::to_string(d) + " would be " + std::to_string(r->out) +
               " (X " + ctx.InputString(0) + ", kernel " + IntsString(kernel) + ", pads " + IntsString(pads) + ")");
    }
    out.push_back(ir::Dim::Static(r->out));
  }
  ctx.SetOutputShape(0, std::move(out));
}

// MaxPool, AveragePool, LpPool: X [N, C, in...] -> [N, C, out...] (MaxPool's Indices too).
void Pool(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (kernel.empty()) return;
  if (x->size() != kernel.size() + 2) {
    ctx.Fail("kernel_shape " + IntsString(kernel) + " does not match input " + ctx.InputString(0) +
             " (expected rank " + std::to_string(kernel.size() + 2) + ")");
  }
  for (int64_t k : kernel) {
    if (k < 1) ctx.Fail("kernel_shape " + IntsString(kernel) + " has an empty dim");
  }
  Dims out{(*x)[0], (*x)[1]};
  Dims sp = WindowOutput(ctx, std::span<const ir::Dim>(*x).subspan(2), kernel, ctx.attr_int("ceil_mode", 0) != 0);
  out.insert(out.end(), sp.begin(), sp.end());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutputShape(i, out);
}

// GlobalAveragePool, GlobalMaxPool, GlobalLpPool: [N, C, in...] -> [N, C, 1...].
void GlobalPool(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() < 2) ctx.Fail("input " + ctx.InputString(0) + " must have rank >= 2 (N, C, spatial...)");
  Dims out(*x);
  for (size_t d = 2; d < out.size(); ++d) out[d] = ir::Dim::Static(1);
  ctx.SetOutputShape(0, std::move(out));
}

// MaxUnpool: output_shape input when constant, else (in - 1) * stride + kernel - pads (semantics::MaxUnpoolOutputDim).
void MaxUnpool(InferenceContext& ctx) {
  if (ctx.has_input(2)) {
    if (auto s = ctx.input_ints(2)) {
      Dims out;
      for (int64_t v : *s) out.push_back(DimOf(v));
      ctx.SetOutputShape(0, std::move(out));
    }
    return;
  }
  const Dims* x = ctx.input_shape(0);
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  if (!x || kernel.empty() || x->size() != kernel.size() + 2) return;
  const size_t n = kernel.size();
  const std::vector<int64_t> strides = SpatialAttr(ctx, "strides", n, 1);
  const std::vector<int64_t> pads = PadsAttr(ctx, n, semantics::AutoPad::kNotSet);  // MaxUnpool has no auto_pad
  Dims out{(*x)[0], (*x)[1]};
  for (size_t d = 0; d < n; ++d) {
    const ir::Dim& in = (*x)[2 + d];
    const std::optional<int64_t> o =
        in.is_static() && in.value >= 1
            ? semantics::MaxUnpoolOutputDim(in.value, kernel[d], strides[d], pads[d], pads[d + n])
            : std::nullopt;
    out.push_back(o ? DimOf(*o) : UnknownDim());
  }
  ctx.SetOutputShape(0, std::move(out));
}

void SameShape(InferenceContext& ctx) { ctx.PropagateShape(0, 0); }

// ai.ferry::ScaleShift: Y like X; scale and shift broadcast to X's shape without growing it; an activation of the
// table.
void ScaleShift(InferenceContext& ctx) {
  CheckFusedActivation(ctx);
  ctx.PropagateShape(0, 0);
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  for (size_t i = 1; i < 3; ++i) {
    const Dims* p = ctx.input_shape(i);
    if (!p) continue;
    bool fits = p->size() <= x->size();
    for (size_t d = 0; fits && d < p->size(); ++d) {
      const ir::Dim& pd = (*p)[d];
      const ir::Dim& xd = (*x)[x->size() - p->size() + d];
      fits = !pd.is_static() || pd.value == 1 || !xd.is_static() || pd.value == xd.value;
    }
    if (!fits) {
      ctx.Fail("input " + ctx.InputString(i) + " does not broadcast to X's shape " + ctx.InputString(0));
    }
  }
}

// BatchNormalization: Y like X; the training outputs (running or saved mean/var) like scale [C].
void BatchNormalization(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.PropagateShape(1, i);
}

// LayerNormalization (and SimplifiedLayerNormalization): Y like X; the statistics outputs (Mean, InvStdDev or
// inv_std_var) like X with the normalized dims (axis...) set to 1, of the element type stash_type names when their
// schema leaves it open.
void LayerNormalization(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  const int64_t stash = ctx.attr_int("stash_type", 1);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    if (ctx.output(i).elem_type == DataType::kUndefined && IsKnownDataType(static_cast<int32_t>(stash))) {
      ctx.SetOutputElemType(i, static_cast<DataType>(stash));
    }
  }
  const Dims* x = ctx.input_shape(0);
  if (!x || ctx.num_outputs() < 2) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t axis = NormalizeAxis(ctx, ctx.attr_int("axis", -1), rank, "axis");
  Dims stat(*x);
  for (int64_t d = axis; d < rank; ++d) stat[static_cast<size_t>(d)] = ir::Dim::Static(1);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) ctx.SetOutputShape(i, stat);
}

// ai.ferry::SkipLayerNormalization: Y and Sum (X + Skip, Skip broadcasting over X's leading dims) like X.
void SkipLayerNormalization(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.PropagateShape(0, i);
}

// ai.ferry::Attention (schemas_ferry.cc): Y [lead..., Sq, Dv], lead the numpy broadcast of the leading dims of Q,
// K, V and mask (all but their last two). Q and K must agree on Dh, K and V on Sk; mask's last two dims are 1 or
// Sq / Sk.
void FerryAttention(InferenceContext& ctx) {
  const bool kt = ctx.attr_int("k_transposed", 0) != 0;
  const Dims* in[4] = {ctx.input_shape(0), ctx.input_shape(1), ctx.input_shape(2),
                       ctx.has_input(3) ? ctx.input_shape(3) : nullptr};
  for (size_t i = 0; i < 3; ++i) {
    if (in[i] && in[i]->size() < 2) {
      ctx.Fail("input " + std::string("QKV").substr(i, 1) + " " + ctx.InputString(i) + " must have rank >= 2");
    }
  }
  const Dims *q = in[0], *k = in[1], *v = in[2], *m = in[3];
  auto mismatch = [](const ir::Dim& a, const ir::Dim& b) {
    return a.is_static() && b.is_static() && a.value != b.value;
  };
  const std::string k_str = "K " + ctx.InputString(1) + (kt ? " (k_transposed = 1)" : "");
  if (q && k && mismatch(q->back(), kt ? (*k)[k->size() - 2] : k->back())) {
    ctx.Fail("Q " + ctx.InputString(0) + " and " + k_str + " differ in the head dim Dh");
  }
  if (k && v && mismatch(kt ? k->back() : (*k)[k->size() - 2], (*v)[v->size() - 2])) {
    ctx.Fail(k_str + " and V " + ctx.InputString(2) + " differ in the key count Sk");
  }
  if (m && k && !m->empty()) {
    const ir::Dim& sk = kt ? k->back() : (*k)[k->size() - 2];
    if (!IsOne(m->back()) && mismatch(m->back(), sk)) {
      ctx.Fail("mask " + ctx.InputString(3) + " does not broadcast to the scores' key count Sk of " + k_str);
    }
  }
  if (m && q && m->size() >= 2 && !IsOne((*m)[m->size() - 2]) && mismatch((*m)[m->size() - 2], (*q)[q->size() - 2])) {
    ctx.Fail("mask " + ctx.InputString(3) + " does not broadcast to the scores' query count Sq of Q " +
             ctx.InputString(0));
  }
  if (!q || !k || !v || (ctx.has_input(3) && !m)) return;
  // The leading dims, right-aligned.
  size_t lead = 0;
  for (const Dims* d : in) {
    if (d && d->size() > 2) lead = std::max(lead, d->size() - 2);
  }
  Dims out(lead, ir::Dim::Static(1));
  for (size_t i = 0; i < 4; ++i) {
    const Dims* d = in[i];
    if (!d || d->size() <= 2) continue;
    const size_t n = d->size() - 2;
    for (size_t j = 0; j < n; ++j) {
      bool conflict = false;
      out[lead - n + j] = BroadcastDim(out[lead - n + j], (*d)[j], &conflict);
      if (conflict) {
        ctx.Fail("the leading dims of Q " + ctx.InputString(0) + ", K " + ctx.InputString(1) + ", V " +
                 ctx.InputString(2) + (m ? ", mask " + ctx.InputString(3) : std::string()) +
                 " cannot be broadcast together");
      }
    }
  }
  out.push_back((*q)[q->size() - 2]);
  out.push_back(v->back());
  ctx.SetOutputShape(0, std::move(out));
}

// RoiAlign: [num_rois, C, output_height, output_width]; MaxRoiPool: [num_rois, C, pooled_shape...].
void RoiAlign(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* rois = ctx.input_shape(1);
  const Dims* idx = ctx.input_shape(2);
  ir::Dim num = rois && !rois->empty() ? (*rois)[0] : idx && !idx->empty() ? (*idx)[0] : UnknownDim();
  ctx.SetOutputShape(0, {num, x && x->size() > 1 ? (*x)[1] : UnknownDim(),
                         DimOf(ctx.attr_int("output_height", 1)), DimOf(ctx.attr_int("output_width", 1))});
}

void MaxRoiPool(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* rois = ctx.input_shape(1);
  std::vector<int64_t> pooled = ctx.attr_ints("pooled_shape");
  if (pooled.size() != 2) return;
  ctx.SetOutputShape(0, {rois && !rois->empty() ? (*rois)[0] : UnknownDim(),
                         x && x->size() > 1 ? (*x)[1] : UnknownDim(), DimOf(pooled[0]), DimOf(pooled[1])});
}

// DepthToSpace [N, C, H, W] -> [N, C/b², H*b, W*b]; SpaceToDepth the inverse.
template <bool kToSpace>
void DepthSpace(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() != 4) ctx.Fail("input " + ctx.InputString(0) + " must have rank 4");
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0 || b > (int64_t{1} << 31)) return;
  const int64_t bb = b * b;
  auto div = [&](const ir::Dim& d, int64_t k, const char* what) -> ir::Dim {
    if (!d.is_static()) return UnknownDim();
    if (d.value % k != 0) {
      ctx.Fail(std::string(what) + " of input " + ctx.InputString(0) + " is not divisible by " + std::to_string(k));
    }
    return ir::Dim::Static(d.value / k);
  };
  if (kToSpace) {
    ctx.SetOutputShape(0, {(*x)[0], div((*x)[1], bb, "the channel dim"), MulDim((*x)[2], b), MulDim((*x)[3], b)});
  } else {
    ctx.SetOutputShape(0, {(*x)[0], MulDim((*x)[1], bb), div((*x)[2], b, "the height"), div((*x)[3], b, "the width")});
  }
}

// GridSample: X [N, C, in...], grid [N, out..., r] -> [N, C, out...].
void GridSample(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* grid = ctx.input_shape(1);
  if (!grid || grid->size() < 2) return;
  Dims out{(*grid)[0], x && x->size() > 1 ? (*x)[1] : UnknownDim()};
  out.insert(out.end(), grid->begin() + 1, grid->end() - 1);
  ctx.SetOutputShape(0, std::move(out));
}

// com.microsoft::GridSample: ONNX GridSample's shape; Y has X's element type (ONNX Runtime's inference).
void MsGridSample(InferenceContext& ctx) {
  GridSample(ctx);
  if (ctx.input_elem_type(0) != DataType::kUndefined) ctx.SetOutputElemType(0, ctx.input_elem_type(0));
}

// RNN, GRU, LSTM: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]); Y_h, Y_c
// [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
void Recurrent(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* r = ctx.input_shape(2);
  const int64_t dirs = ctx.attr_string("direction", "forward") == "bidirectional" ? 2 : 1;
  ir::Dim hidden = UnknownDim();
  if (ctx.has_attr("hidden_size")) {
    hidden = DimOf(ctx.attr_int("hidden_size", 0));
  } else if (r && r->size() == 3) {
    hidden = (*r)[2];
  }
  const bool batch_first = ctx.attr_int("layout", 0) == 1;
  ir::Dim seq, batch;
  if (x && x->size() == 3) {
    seq = batch_first ? (*x)[1] : (*x)[0];
    batch = batch_first ? (*x)[0] : (*x)[1];
  }
  const ir::Dim d = ir::Dim::Static(dirs);
  if (ctx.num_outputs() > 0 && ctx.node().output(0)) {
    ctx.SetOutputShape(0, batch_first ? Dims{batch, seq, d, hidden} : Dims{seq, d, batch, hidden});
  }
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    ctx.SetOutputShape(i, batch_first ? Dims{batch, d, hidden} : Dims{d, batch, hidden});
  }
}

// NegativeLogLikelihoodLoss: reduction none -> target's shape, else a scalar.
void NllLoss(InferenceContext& ctx) {
  if (ctx.attr_string("reduction", "mean") == "none") {
    ctx.PropagateShape(1, 0);
  } else {
    ctx.SetOutputShape(0, {});
  }
}

// SoftmaxCrossEntropyLoss: loss like NLL (labels' shape or scalar); log_prob like scores.
void SoftmaxCrossEntropyLoss(InferenceContext& ctx) {
  NllLoss(ctx);
  if (ctx.num_outputs() > 1) ctx.PropagateShape(0, 1);
}

// Adagrad, Adam, Momentum (ai.onnx.preview.training): inputs R, T, then the tensors to update and their state;
// output i is the updated input i + 2.
void Optimizer(InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.PropagateShape(i + 2, i);
}

}  // namespace

void RegisterNnShapeInference(SchemaRegistry& r) {
  r.SetInference("", "Conv", 1, Conv<1>);
  r.SetInference("", "ConvInteger", 1, Conv<1>);
  r.SetInference("", "QLinearConv", 1, Conv<3>);
  r.SetInference("", "DeformConv", 1, Conv<1>);
  r.SetInference("", "ConvTranspose", 1, ConvTranspose);
  const std::string ferry(kFerryDomain);
  r.SetInference(ferry, "FusedConv", 1, FusedConv);
  r.SetInference(ferry, "BlockedConv", 1, BlockedConv);
  r.SetInference(ferry, "BlockedPool", 1, BlockedPool);
  r.SetInference(ferry, "ReorderToBlocked", 1, ReorderToBlocked);
  r.SetInference(ferry, "ReorderFromBlocked", 1, ReorderFromBlocked);
  r.SetInference(ferry, "Gelu", 1, SameShape);
  r.SetInference(ferry, "Attention", 1, FerryAttention);
  r.SetInference(ferry, "LayerNormalization", 1, LayerNormalization);
  r.SetInference(ferry, "RMSNormalization", 1, SameShape);
  r.SetInference(ferry, "ScaleShift", 1, ScaleShift);
  r.SetInference(ferry, "SkipLayerNormalization", 1, SkipLayerNormalization);
  // FusedMatMul: linalg.cc, which has MatMul's inference.
  // ONNX Runtime's contrib ops with the geometry of a standard op (the others: transformer.cc, linalg.cc).
  const std::string ms(kMsDomain);
  r.SetInference(ms, "FusedConv", 1, Conv<1>);  // ONNX Runtime's activation names, not the ai.ferry table
  r.SetInference(ms, "GridSample", 1, MsGridSample);
  r.SetInference(ms, "SimplifiedLayerNormalization", 1, LayerNormalization);
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) r.SetInference("", op, 1, Pool);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) r.SetInference("", op, 1, GlobalPool);
  r.SetInference("", "MaxUnpool", 1, MaxUnpool);
  for (const char* op : {"InstanceNormalization", "GroupNormalization", "LpNormalization", "MeanVarianceNormalization",
                         "LRN", "Softmax", "LogSoftmax", "Hardmax", "RMSNormalization"}) {
    r.SetInference("", op, 1, SameShape);
  }
  r.SetInference("", "BatchNormalization", 1, BatchNormalization);
  r.SetInference("", "LayerNormalization", 1, LayerNormalization);  // ONNX Runtime's version 1 too
  r.SetInference("", "SimplifiedLayerNormalization", 1, LayerNormalization);
  r.SetInference("", "RoiAlign", 1, RoiAlign);
  r.SetInference("", "MaxRoiPool", 1, MaxRoiPool);
  r.SetInference("", "DepthToSpace", 1, DepthSpace<true>);
  r.SetInference("", "SpaceToDepth", 1, DepthSpace<false>);
  r.SetInference("", "GridSample", 1, GridSample);
  for (const char* op : {"RNN", "GRU", "LSTM"}) r.SetInference("", op, 1, Recurrent);
  r.SetInference("", "NegativeLogLikelihoodLoss", 1, NllLoss);
  r.SetInference("", "SoftmaxCrossEntropyLoss", 1, SoftmaxCrossEntropyLoss);
  for (const char* op : {"Adagrad", "Adam", "Momentum"}) r.SetInference("ai.onnx.preview.training", op, 1, Optimizer);
}

}  // namespace ferry::schemas
