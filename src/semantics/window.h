// Sliding-window geometry of Conv (and its integer, quantized, fused and deformable forms), ConvTranspose,
// MaxUnpool and the pools (MaxPool, AveragePool, LpPool): the auto_pad / pads / strides / dilations /
// kernel_shape / ceil_mode / output_padding / output_shape attributes and the output extent and pads they give
// for an input extent. The one definition of these ONNX rules: shape inference (schemas/shape_inference/nn.cc)
// resolves one dim at a time over possibly-unknown dims with the *Dim functions; the kernels (ref, cpu) resolve a
// whole window with ResolveWindow / ResolveConv / ResolveConvTranspose, which are built on the same functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"

namespace ferry::semantics {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// "NOTSET" (or ""), "SAME_UPPER", "SAME_LOWER", "VALID"; nullopt for any other value.
std::optional<AutoPad> ParseAutoPad(std::string_view value);
// The message for an auto_pad value ParseAutoPad refuses: "auto_pad 'X' is not one of NOTSET, ...".
std::string AutoPadError(std::string_view value);

// The window attributes as written on the node. Empty vectors mean "not given" (defaults are applied when the
// window is resolved against an input shape).
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;

  // Reads auto_pad, kernel_shape, strides, dilations, pads; throws InvalidModelError naming the node for an
  // unknown auto_pad, a kernel_shape, stride or dilation below 1 or a negative pad.
  static WindowAttrs FromNode(const ir::Node& node);
};

// A resolved window over `rank()` spatial dims: input extent, output extent, kernel, strides, dilations, pads.
// Output position o of dim d reads input positions o*strides[d] - pad_begin[d] + t*dilations[d], t in [0, kernel[d]).
struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;

  size_t rank() const { return in.size(); }
  int64_t in_size() const;      // product of in
  int64_t out_size() const;     // product of out
  int64_t kernel_size() const;  // product of kernel
};

// One spatial dim of a resolved window.
struct WindowDim {
  int64_t out = 0, pad_begin = 0, pad_end = 0;
};

// The output extent and pads of one spatial dim of a Conv / pool window over `in` input positions. `pad_begin`
// and `pad_end` are the explicit pads, read only for AutoPad::kNotSet (VALID: none; SAME_*: out = ceil(in /
// stride), the total padding split evenly, the odd one at the end for SAME_UPPER, at the beginning for
// SAME_LOWER). ceil_mode rounds the output up (pools), dropping a last window that would start in the end padding.
// out <= 0 when the window does not fit (in + pads < the dilated kernel, or in = 0 with SAME_*); nullopt when the
// arithmetic overflows int64 (absurd attributes). kernel, stride, dilation >= 1; in, pads >= 0.
std::optional<WindowDim> ResolveWindowDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                          int64_t pad_begin, int64_t pad_end, AutoPad auto_pad, bool ceil_mode);

// Whether the window leaves every extent of a dim unchanged (out = in whatever `in` is): stride 1 with SAME_*, or
// stride 1, a dilated kernel of 1 and no explicit pads. Shape inference keeps a symbolic dim through such a window.
bool WindowKeepsExtent(int64_t kernel, int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                       AutoPad auto_pad);

// "" when `v` is empty (the attribute is absent) or holds `rank` values, else why not: "attribute NAME = [..] has N
// values, expected RANK (one per spatial dimension)".
std::string SpatialLengthError(std::span<const int64_t> v, size_t rank, std::string_view name);

// A rank-matching list attribute (strides, dilations, ...) or `rank` copies of `def` when absent; throws
// InvalidArgumentError naming `what` on a wrong length.
std::vector<int64_t> SpatialAttr(const std::vector<int64_t>& v, size_t rank, int64_t def, const char* name,
                                 const std::string& what);

// Resolves the output extent and pads of a Conv / pool window for the given spatial input extent and kernel
// (ResolveWindowDim per dim). Throws InvalidArgumentError naming `what` when attribute lengths do not match the
// rank, the kernel has an empty dim or the output is empty.
WindowGeometry ResolveWindow(const WindowAttrs& attrs, std::span<const int64_t> in_spatial,
                             std::span<const int64_t> kernel, bool ceil_mode, const std::string& what);

// A convolution's shapes: X [N, C, in...], W [M, C/group, kernel...] -> Y [N, M, out...].
struct ConvShape {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  WindowGeometry g;
  Shape y_shape;
};

// Validates X and W against each other, group and kernel_shape, and resolves the window; throws
// InvalidArgumentError naming `what`.
ConvShape ResolveConv(const WindowAttrs& attrs, int64_t group, const Shape& x, const Shape& w,
                      const std::string& what);

// --- ConvTranspose ---

// ConvTranspose's attributes: the window's, group, output_padding and output_shape (empty: not given).
struct ConvTransposeAttrs {
  WindowAttrs window;
  int64_t group = 1;
  std::vector<int64_t> output_padding, output_shape;

  // Throws InvalidModelError naming the node for what WindowAttrs::FromNode refuses, a group below 1 or a
  // negative output_padding.
  static ConvTransposeAttrs FromNode(const ir::Node& node);
};

// "" when output_padding is absent or holds one value per spatial dim (`rank`), else why not (ONNX: "additional
// elements added to the side with higher coordinate indices", one per spatial axis; ONNX Runtime refuses any
// other length). Shape inference and the kernels refuse a model with such an attribute as InvalidModel.
std::string OutputPaddingError(std::span<const int64_t> output_padding, size_t rank);

// output_shape's spatial extents: its `rank` values, or the last `rank` of rank + 2 values (N and C written too);
// nullopt for any other length.
std::optional<std::vector<int64_t>> SpatialOutputShape(const std::vector<int64_t>& output_shape, size_t rank);
// The message for an output_shape SpatialOutputShape refuses: "output_shape [..] must have RANK values".
std::string OutputShapeError(const std::vector<int64_t>& output_shape, size_t rank);

// The output extent and pads of one spatial dim of a ConvTranspose over `in` input positions (ONNX's rules):
// with `output_shape` (given) or SAME_*, out = output_shape (else in * stride) and the total padding
// stride*(in-1) + output_padding + dilated kernel - out (never negative) is split: begin = total/2 for SAME_UPPER,
// total - total/2 otherwise (SAME_LOWER and NOTSET with output_shape); else out = stride*(in-1) + output_padding +
// dilated kernel - pad_begin - pad_end, the explicit pads read only for AutoPad::kNotSet. out <= 0 when nothing
// remains; nullopt when the arithmetic overflows int64.
std::optional<WindowDim> ResolveConvTransposeDim(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                                                 int64_t pad_begin, int64_t pad_end, int64_t output_padding,
                                                 AutoPad auto_pad, std::optional<int64_t> output_shape);

// A ConvTranspose's shapes: X [N, C, in...], W [C, M/group, kernel...] -> Y [N, M, out...], with the pads the
// output extent implies (begin and end, per dim; pad_end may exceed what the taps reach: output past every tap).
struct ConvTransposeShape {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end, output_padding;
  Shape y_shape;
};

// Validates X and W against each other, group and the attributes, and resolves every dim with
// ResolveConvTransposeDim; throws InvalidArgumentError naming `what` (InvalidModelError for an output_padding
// OutputPaddingError refuses).
ConvTransposeShape ResolveConvTranspose(const ConvTransposeAttrs& attrs, const Shape& x, const Shape& w,
                                        const std::string& what);

// --- MaxUnpool ---

// The extent MaxUnpool infers for one spatial dim: (in - 1) * stride + kernel - pad_begin - pad_end (may be
// negative: the caller refuses it); nullopt when the arithmetic overflows int64.
std::optional<int64_t> MaxUnpoolOutputDim(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                          int64_t pad_end);

}  // namespace ferry::semantics
