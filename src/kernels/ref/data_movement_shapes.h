// What the ref and cpu Pad, Transpose, Concat and Split kernels share: reading their attributes and resolving the output
// shape (with the checks and error messages), so the two backends differ only in how they copy. Each is defined
// beside its ref kernel (pad.cc, transpose.cc, concat.cc, split.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ir/graph.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// --- Pad ---
enum class PadMode { kConstant, kEdge, kReflect, kWrap };
// The `mode` attribute; throws InvalidModelError naming the node for an unknown mode.
PadMode ReadPadMode(const ir::Node& node);
// Source index along a dimension of size n (> 0) for a possibly outside index i, per mode (not kConstant: -1).
int64_t PadSourceIndex(PadMode mode, int64_t i, int64_t n);
struct PadShape {
  std::vector<int64_t> begin;  // per dimension: the pad before (negative: a crop)
  Shape out_shape;
};
// `pads` holds 2 entries per axis in `axes` (begins, then ends). Throws InvalidArgumentError naming `what` for a
// wrong pads length, a repeated or bad axis, or a negative or overflowing output size.
PadShape ResolvePad(const Tensor& x, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                    const std::string& what);

// --- Transpose ---
// The `perm` attribute (nullopt when absent); throws InvalidModelError naming the node when it is no permutation.
std::optional<std::vector<int64_t>> ReadPerm(const ir::Node& node);
// `perm`, or the reversed dims when absent; throws InvalidArgumentError when its length is not x's rank.
std::vector<int64_t> ResolvePerm(const std::optional<std::vector<int64_t>>& perm, const Tensor& x,
                                 const std::string& what);

// --- Concat ---
// The `axis` attribute: optional (default 1) in Concat-1, required from opset 4.
int64_t ReadConcatAxis(const ir::Node& node);

// --- Split ---
// The sizes of the n pieces along `axis` of X (x_dtype[x_shape]): `sizes` as given (the split input or attribute;
// empty = absent), else equal parts (the last one smaller from opset 18; num_outputs, when > 0, must be n). Throws
// InvalidArgumentError naming `what` for negative or overflowing sizes, sizes that do not cut the axis, or no
// outputs.
std::vector<int64_t> ResolveSplitSizes(std::vector<int64_t> sizes, int64_t n, int64_t num_outputs, int64_t opset,
                                       DataType x_dtype, const Shape& x_shape, int64_t axis, const std::string& what);

}  // namespace ferry::ref
