// What the ref and cpu kernels of ONNX Runtime's com.microsoft.nchwc ops share (nchwc.cc; the layout:
// kernels/nchwc_layout.h): the checks of their inputs, with messages naming node, input, expected and got; W's
// blocked layout unpacked; Upsample's attributes and source coordinates.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/nchwc_layout.h"

namespace ferry {
class KernelRegistry;
}

namespace ferry::ref {

// Input i (`name`) must be a float32 4-D tensor, with channels (dim 1) a multiple of `block` when block > 0.
void CheckNchwcTensor(const PrepareContext& ctx, int i, const char* name, int64_t block);
// ReorderOutput: X's `padded` channels must be `channels` rounded up to the block (ORT: channels <= padded and
// padded - channels < block).
void CheckNchwcChannels(const PrepareContext& ctx, int64_t padded, int64_t channels, int64_t block);
// Conv: X (input 0) must have W[1] * group channels (W is input 1), blocked unless l.plain_input.
void CheckNchwcConvInput(const PrepareContext& ctx, const NchwcConvLayout& l, int64_t group, int64_t block);

// W [M, I, kh, kw] in ORT's blocked layout `l` -> ONNX's plain [M, I, kh, kw].
std::vector<float> NchwcFilterToPlain(const float* w, const Shape& shape, const NchwcConvLayout& l, int64_t block);

// Upsample's attributes (nchwc.cc has the semantics), read and checked as ORT's NchwcUpsample does.
struct NchwcUpsampleAttrs {
  enum class Transform { kAsymmetric, kAlignCorners, kHalfPixel };
  int64_t scale_h = 1, scale_w = 1;
  bool linear = false;
  Transform transform = Transform::kAsymmetric;

  // Throws InvalidModelError naming the node for scales other than [1, 1, >= 1, >= 1], an unknown mode or
  // coordinate_transformation_mode, and nearest with other than asymmetric.
  static NchwcUpsampleAttrs FromNode(const ir::Node& node);
  // Linear mode: the source coordinate of each of `out` output positions along a dim of `in` inputs.
  std::vector<float> Coordinates(int64_t in, int64_t out, int64_t scale) const;
};

// The ref Upsample kernel, which the cpu backend registers too (it works on the blocked layout directly, a row of
// b contiguous lanes at a time).
void RegisterNchwcUpsampleKernels(KernelRegistry& r);

}  // namespace ferry::ref
