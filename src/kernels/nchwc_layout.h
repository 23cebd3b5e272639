// ONNX Runtime's NCHWc layout (domain com.microsoft.nchwc, schemas_com_microsoft_nchwc.cc) as the ref and cpu
// kernels of that domain read it: the block size b, and the layouts of the tensors ORT's NCHWc transformer
// (onnxruntime/core/optimizer/nchwc_transformer.cc) writes into a saved model.
//
// Block size. An ORT-written file carries b only implicitly: MLAS takes it from the machine that optimizes the
// model (MlasNchwcGetBlockSize: 16 where the CPU has AVX-512F, 8 on other x86 hosts), and every blocked tensor and
// reordered weight of the file assumes it. Ferry applies the same rule to the machine it runs on (the CPU's own
// features, not FERRY_ISA's narrowed set: the file does not change with the ISA Ferry emulates), so a file runs
// on the machine it was written for exactly as on ONNX Runtime. FERRY_NCHWC_BLOCK=8 or 16 overrides the rule, for
// a file written on another machine. Shapes that contradict b are refused in Prepare, naming node, input, expected
// and got.
//
// Activations. A blocked tensor is 4-D [N, Cp, H, W] with Cp a multiple of b, stored as [N, Cp/b, H, W, b]:
// element (n, c, h, w) at [n, c/b, h, w, c%b], which is Ferry's own blocked layout of [N, Cp, H, W]
// (kernels/ref/blocked_layout.h) and oneDNN's nChw{b}c. When the logical channel count C is not a multiple of b,
// Cp rounds it up (ReorderInput writes zeros there; ReorderOutput's `channels` drops them).
//
// Conv weights. W is [M, I, kh, kw]: M is the output channel count rounded up to b (the transformer pads it with
// zero filters, and B with zeros), I = C / group. Its data is in one of two layouts:
//   OIHWBo    [M/b, I, kh, kw, b]: element (m, i, y, x) at [m/b, i, y, x, m%b]. Depthwise convolutions (group = M,
//             I = 1) and ungrouped ones whose X is plain NCHW with C < b channels (typically a CNN's first layer).
//             oneDNN's Oihw{b}o, for depthwise Goihw{b}g.
//   OIHWBiBo  [M/b, I/b, kh, kw, b, b]: element (m, i, y, x) at [m/b, i/b, y, x, i%b, m%b]. Every other convolution;
//             then I and M / group are multiples of b. oneDNN's OIhw{b}i{b}o, grouped gOIhw{b}i{b}o.
#pragma once

#include <cstdint>
#include <string>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry {

// The NCHWc block size: FERRY_NCHWC_BLOCK when set (8 or 16; anything else throws InvalidArgumentError), else 16
// when the CPU has AVX-512F, else 8. Read on each call (kernels read it once, at creation).
int64_t NchwcBlockSize();

// NchwcBlockSize() for `node`'s kernel: a bad FERRY_NCHWC_BLOCK throws InvalidModelError naming the node.
int64_t NchwcBlockSizeFor(const ir::Node& node);

// c rounded up to a multiple of b.
inline int64_t NchwcPadded(int64_t c, int64_t b) { return (c + b - 1) / b * b; }

// How an NCHWc Conv with weights of shape W [M, I, kh, kw] and `group` reads its tensors (see the top).
struct NchwcConvLayout {
  bool plain_input = false;  // X is plain NCHW with C = I < b channels (group 1); W is OIHWBo
  bool depthwise = false;    // group = M, I = 1; W is OIHWBo
  bool filter_bo() const { return plain_input || depthwise; }  // OIHWBo, else OIHWBiBo
};

// The layout of W of shape `w` (rank 4) with `group` and block b. Returns "" and fills `out`, or why such a W is
// not one ORT's transformer writes (M or I not fitting the block), for a message after "W has shape [..]: ".
std::string NchwcConvLayoutOf(const Shape& w, int64_t group, int64_t block, NchwcConvLayout* out);

// The index in W's blocked data of element (m, i, y, x) of the logical W [M, I, kh, kw] (kernel = kh * kw,
// k = y * kw + x).
inline int64_t NchwcFilterIndex(const NchwcConvLayout& l, int64_t block, int64_t in_channels, int64_t kernel, int64_t m,
                                int64_t i, int64_t k) {
  const int64_t ob = m / block, o = m % block;
  if (l.filter_bo()) return ((ob * in_channels + i) * kernel + k) * block + o;
  const int64_t ib = i / block, ii = i % block, in_blocks = in_channels / block;
  return (((ob * in_blocks + ib) * kernel + k) * block + ii) * block + o;
}

}  // namespace ferry
