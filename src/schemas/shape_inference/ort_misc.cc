// Shape inference for ONNX Runtime's remaining contrib ops in com.microsoft (group "misc",
// schemas_com_microsoft_tensor.cc), as their kernels (src/kernels/ref/) shape their outputs:
//   CropAndResize             Y [num_rois, C, crop_size[0], crop_size[1]]
//   MurmurHash3               Y: X's shape, uint32 (positive = 1, the default) or int32
//   Tokenizer                 Y: X's dims plus the row length (the data's), string; an empty X gives [N, 0] / [0]
//   NGramRepeatBlock          scores_out: scores' type and shape
//   BifurcationDetector       tokens 1-D (cur_tokens' shape without pred_tokens), suffix_match_idx prev's shape
//   DynamicTimeWarping        [2, path length], int32
//   UnfoldTensor              dims[dim] = (dims[dim] - size) / step + 1, then a last dim of size
//   MaxpoolWithMask           [N, C, out...] (semantics/window.h, floor)
//   ConvTransposeWithDynamicPads  ConvTranspose's extent with pads from input 2 when known
//   NhwcMaxPool               [N, out..., C] (ceil_mode, dilations)
//   Pad                       dims + pads (pads from input 1 when known)
//   MatMulInteger16           MatMul's shape, int32 (uint32 when both inputs are uint16)
//   AttnLSTM                  Y [S, D, B, H], Y_h / Y_c [D, B, H]
// What the inputs do not fix stays unknown.
#include <algorithm>
#include <string>
#include <vector>

#include "schemas/op_origin.h"
#include "schemas/shape_inference/context.h"
#include "schemas/shape_inference/shape_inference.h"
#include "semantics/window.h"

namespace ferry::schemas {
namespace {

void CropAndResize(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* rois = ctx.input_shape(1);
  if (x && x->size() != 4) ctx.Fail("X " + ctx.InputString(0) + " must be 4-D [N, C, H, W]");
  const std::optional<std::vector<int64_t>> crop = ctx.input_ints(3);
  ir::Dim ch = UnknownDim(), cw = UnknownDim();
  if (crop) {
    if (crop->size() != 2) ctx.Fail("crop_size must hold 2 values (crop_height, crop_width)");
    ch = DimOf((*crop)[0]);
    cw = DimOf((*crop)[1]);
  }
  ctx.SetOutputShape(0, {rois && !rois->empty() ? (*rois)[0] : UnknownDim(), x ? (*x)[1] : UnknownDim(), ch, cw});
}

void MurmurHash3(InferenceContext& ctx) {
  ctx.SetOutputElemType(0, ctx.attr_int("positive", 1) == 1 ? DataType::kUint32 : DataType::kInt32);
  ctx.PropagateShape(0, 0);
}

void Tokenizer(InferenceContext& ctx) {
  ctx.SetOutputElemType(0, DataType::kString);
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  if (x->size() != 1 && x->size() != 2) ctx.Fail("X " + ctx.InputString(0) + " must be [C] or [N, C]");
  for (const ir::Dim& d : *x) {
    if (!d.is_static()) return;  // an empty X drops the row dim: the rank is the data's
  }
  if (x->size() == 1 && x->at(0).value == 0) return ctx.SetOutputShape(0, {ir::Dim::Static(0)});
  if (x->size() == 2 && (x->at(0).value == 0 || x->at(1).value == 0)) {
    return ctx.SetOutputShape(0, {x->at(0), ir::Dim::Static(0)});
  }
  Dims y(*x);
  y.push_back(UnknownDim());
  ctx.SetOutputShape(0, std::move(y));
}

void NGramRepeatBlock(InferenceContext& ctx) { ctx.PropagateShape(1, 0); }

void BifurcationDetector(InferenceContext& ctx) {
  if (ctx.has_input(3)) ctx.SetOutputShape(0, {UnknownDim()});
  else ctx.PropagateShape(1, 0);
  ctx.PropagateShape(2, 1);
}

void DynamicTimeWarping(InferenceContext& ctx) { ctx.SetOutputShape(0, {ir::Dim::Static(2), UnknownDim()}); }

void UnfoldTensor(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  if (!x) return;
  const auto rank = static_cast<int64_t>(x->size());
  const int64_t dim = NormalizeAxis(ctx, ctx.attr_int("dim", -1), rank, "dim");
  const int64_t size = ctx.attr_int("size", 0), step = ctx.attr_int("step", 1);
  if (size < 1 || step < 1) ctx.Fail("size and step must be >= 1");
  Dims y(*x);
  ir::Dim& d = y[static_cast<size_t>(dim)];
  if (d.is_static()) {
    if (d.value < size)
      ctx.Fail("dimension " + std::to_string(dim) + " of " + ctx.InputString(0) + " is shorter than size");
    d = ir::Dim::Static((d.value - size) / step + 1);
  } else {
    d = UnknownDim();
  }
  y.push_back(ir::Dim::Static(size));
  ctx.SetOutputShape(0, std::move(y));
}

// The pooled extent of each spatial dim `first`.. of x (semantics::ResolveWindowDim), unknown where x's dim is.
Dims PooledDims(InferenceContext& ctx, const Dims& x, size_t first, bool ceil_mode) {
  const std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
  const size_t rank = kernel.size();
  std::vector<int64_t> strides = ctx.attr_ints("strides"), dilations = ctx.attr_ints("dilations");
  std::vector<int64_t> pads = ctx.attr_ints("pads");
  const std::optional<semantics::AutoPad> auto_pad = semantics::ParseAutoPad(ctx.attr_string("auto_pad", "NOTSET"));
  if (!auto_pad) ctx.Fail(semantics::AutoPadError(ctx.attr_string("auto_pad", "NOTSET")));
  if (strides.empty()) strides.assign(rank, 1);
  if (dilations.empty()) dilations.assign(rank, 1);
  if (pads.empty()) pads.assign(2 * rank, 0);
  if (strides.size() != rank || dilations.size() != rank || pads.size() != 2 * rank) {
    ctx.Fail("strides, dilations and pads must have one value (pads two) per kernel_shape value");
  }
  Dims out;
  for (size_t d = 0; d < rank; ++d) {
    const ir::Dim& in = x[first + d];
    if (!in.is_static()) {
      out.push_back(UnknownDim());
      continue;
    }
    const auto w = semantics::ResolveWindowDim(in.value, kernel[d], strides[d], dilations[d], pads[d], pads[rank + d],
                                               *auto_pad, ceil_mode);
    if (w && w->out <= 0)
      ctx.Fail("the window does not fit spatial dim " + std::to_string(d) + " of " + ctx.InputString(0));
    out.push_back(w ? ir::Dim::Static(w->out) : UnknownDim());
  }
  return out;
}

void MaxpoolWithMask(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const size_t rank = ctx.attr_ints("kernel_shape").size();
  if (!x || rank == 0) return;
  if (x->size() != rank + 2) ctx.Fail("X " + ctx.InputString(0) + " must have 2 + len(kernel_shape) dims");
  Dims y = {(*x)[0], (*x)[1]};
  for (const ir::Dim& d : PooledDims(ctx, *x, 2, false)) y.push_back(d);
  ctx.SetOutputShape(0, std::move(y));
}

void NhwcMaxPool(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const size_t rank = ctx.attr_ints("kernel_shape").size();
  if (!x || rank == 0) return;
  if (x->size() != rank + 2) ctx.Fail("x " + ctx.InputString(0) + " must have 2 + len(kernel_shape) dims");
  Dims y = {(*x)[0]};
  for (const ir::Dim& d : PooledDims(ctx, *x, 1, ctx.attr_int("ceil_mode", 0) != 0)) y.push_back(d);
  y.push_back(x->back());
  ctx.SetOutputShape(0, std::move(y));
}

void ConvTransposeWithDynamicPads(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* w = ctx.input_shape(1);
  if (!x || x->size() < 3) return;
  const size_t rank = x->size() - 2;
  const int64_t group = ctx.attr_int("group", 1);
  Dims y = {(*x)[0], w && w->size() == x->size() ? MulDim((*w)[1], group) : UnknownDim()};
  const std::optional<semantics::AutoPad> auto_pad = semantics::ParseAutoPad(ctx.attr_string("auto_pad", "NOTSET"));
  std::optional<std::vector<int64_t>> pads = ctx.has_input(2) ? ctx.input_ints(2) : std::vector<int64_t>(2 * rank, 0);
  std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape"), strides = ctx.attr_ints("strides");
  std::vector<int64_t> dilations = ctx.attr_ints("dilations"), output_padding = ctx.attr_ints("output_padding");
  if (kernel.empty() && w && w->size() == x->size()) {
    for (size_t d = 0; d < rank; ++d) kernel.push_back((*w)[2 + d].is_static() ? (*w)[2 + d].value : -1);
  }
  if (strides.empty()) strides.assign(rank, 1);
  if (dilations.empty()) dilations.assign(rank, 1);
  if (output_padding.empty()) output_padding.assign(rank, 0);
  const bool known = auto_pad && pads && pads->size() == 2 * rank && kernel.size() == rank && strides.size() == rank &&
                     dilations.size() == rank && output_padding.size() == rank;
  for (size_t d = 0; d < rank; ++d) {
    const ir::Dim& in = (*x)[2 + d];
    std::optional<semantics::WindowDim> wd;
    if (known && in.is_static() && kernel[d] > 0) {
      wd = semantics::ResolveConvTransposeDim(in.value, kernel[d], strides[d], dilations[d], (*pads)[d],
                                              (*pads)[rank + d], output_padding[d], *auto_pad, std::nullopt);
    }
    y.push_back(wd && wd->out > 0 ? ir::Dim::Static(wd->out) : UnknownDim());
  }
  ctx.SetOutputShape(0, std::move(y));
}

void Pad(InferenceContext& ctx) {
  ctx.PropagateShape(0, 0);
  const Dims* x = ctx.input_shape(0);
  // pads is [2 * rank] or [1, 2 * rank]: read the constant whatever its rank.
  std::optional<std::vector<int64_t>> pads = ctx.input_ints(1);
  if (const Tensor* t = ctx.input_constant(1); !pads && t && t->dtype() == DataType::kInt64) {
    pads = std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->size());
  }
  if (!x) return;
  Dims y(*x);
  for (size_t d = 0; d < y.size(); ++d) {
    if (pads && pads->size() == 2 * y.size() && (*pads)[d] == 0 && (*pads)[y.size() + d] == 0) continue;
    if (!pads || pads->size() != 2 * y.size() || !y[d].is_static()) {
      y[d] = UnknownDim();
      continue;
    }
    const int64_t v = y[d].value + (*pads)[d] + (*pads)[y.size() + d];
    if (v < 0) ctx.Fail("pads make dimension " + std::to_string(d) + " of " + ctx.InputString(0) + " negative");
    y[d] = ir::Dim::Static(v);
  }
  ctx.SetOutputShape(0, std::move(y));
}

void MatMulInteger16(InferenceContext& ctx) {
  const bool unsigned_out = ctx.input_elem_type(0) == DataType::kUint16 && ctx.input_elem_type(1) == DataType::kUint16;
  ctx.SetOutputElemType(0, unsigned_out ? DataType::kUint32 : DataType::kInt32);
  const Dims* a = ctx.input_shape(0);
  const Dims* b = ctx.input_shape(1);
  if (!a || !b || a->empty() || b->empty()) return;
  // numpy matmul: 1-D operands promoted and the added dim dropped; batch dims broadcast.
  Dims A(*a), B(*b);
  if (A.size() == 1) A.insert(A.begin(), ir::Dim::Static(1));
  if (B.size() == 1) B.push_back(ir::Dim::Static(1));
  Dims batch;
  const size_t ba = A.size() - 2, bb = B.size() - 2, n = std::max(ba, bb);
  for (size_t i = 0; i < n; ++i) {
    const ir::Dim da = i + ba >= n ? A[i + ba - n] : ir::Dim::Static(1);
    const ir::Dim db = i + bb >= n ? B[i + bb - n] : ir::Dim::Static(1);
    bool conflict = false;
    batch.push_back(BroadcastDim(da, db, &conflict));
    if (conflict) ctx.Fail("the batch dims of A " + ctx.InputString(0) + " and B " + ctx.InputString(1) + " differ");
  }
  const ir::Dim& ka = A.back();
  const ir::Dim& kb = B[B.size() - 2];
  if (ka.is_static() && kb.is_static() && ka.value != kb.value) {
    ctx.Fail("inner dimensions of A " + ctx.InputString(0) + " and B " + ctx.InputString(1) + " differ");
  }
  if (a->size() > 1) batch.push_back(A[A.size() - 2]);
  if (b->size() > 1) batch.push_back(B.back());
  ctx.SetOutputShape(0, std::move(batch));
}

// AttnLSTM: Y [S, D, B, H], Y_h and Y_c [D, B, H]; H from hidden_size, else R's last dim.
void AttnLstm(InferenceContext& ctx) {
  const Dims* x = ctx.input_shape(0);
  const Dims* r = ctx.input_shape(2);
  const int64_t dirs = ctx.attr_string("direction", "forward") == "bidirectional" ? 2 : 1;
  const ir::Dim hidden = ctx.has_attr("hidden_size") ? DimOf(ctx.attr_int("hidden_size", 0))
                         : r && r->size() == 3       ? (*r)[2]
                                                     : UnknownDim();
  const ir::Dim seq = x && x->size() == 3 ? (*x)[0] : UnknownDim();
  const ir::Dim batch = x && x->size() == 3 ? (*x)[1] : UnknownDim();
  if (x && x->size() != 3) ctx.Fail("X " + ctx.InputString(0) + " must be [S, B, I]");
  const ir::Dim d = ir::Dim::Static(dirs);
  if (ctx.num_outputs() > 0 && ctx.node().output(0)) ctx.SetOutputShape(0, {seq, d, batch, hidden});
  for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i) {
    if (ctx.node().output(i)) ctx.SetOutputShape(i, {d, batch, hidden});
  }
}

}  // namespace

void RegisterOrtMiscShapeInference(SchemaRegistry& r) {
  r.SetInference(kMsDomain, "AttnLSTM", 1, AttnLstm);
  const std::string ms(kMsDomain);
  r.SetInference(ms, "CropAndResize", 1, CropAndResize);
  r.SetInference(ms, "MurmurHash3", 1, MurmurHash3);
  r.SetInference(ms, "Tokenizer", 1, Tokenizer);
  r.SetInference(ms, "NGramRepeatBlock", 1, NGramRepeatBlock);
  r.SetInference(ms, "BifurcationDetector", 1, BifurcationDetector);
  r.SetInference(ms, "DynamicTimeWarping", 1, DynamicTimeWarping);
  r.SetInference(ms, "UnfoldTensor", 1, UnfoldTensor);
  r.SetInference(ms, "MaxpoolWithMask", 1, MaxpoolWithMask);
  r.SetInference(ms, "NhwcMaxPool", 1, NhwcMaxPool);
  r.SetInference(ms, "ConvTransposeWithDynamicPads", 1, ConvTransposeWithDynamicPads);
  r.SetInference(ms, "Pad", 1, Pad);
  r.SetInference(ms, "MatMulInteger16", 1, MatMulInteger16);
}

}  // namespace ferry::schemas
