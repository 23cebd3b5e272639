// Dtype-agnostic tensor plumbing shared by the control-flow and sequence kernels (Loop, Scan, SequenceMap,
// SplitToSequence, ConcatFromSequence, ...): element-range copies that work for every dtype (strings and the
// packed sub-byte types included), slicing one index along an axis, stacking and concatenating.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ferry/tensor.h"
#include "ferry/value.h"
#include "ir/graph.h"

namespace ferry::ref {

// Copies `count` elements of `src` starting at element `src_off` into `dst` at element `dst_off`.
// Both tensors must have the same dtype; the caller guarantees the ranges are in bounds.
void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count);

// The sub-tensor of `x` at index `index` along `axis` (rank one less than x). axis/index must be valid.
Tensor SliceAlongAxis(const Tensor& x, int64_t axis, int64_t index);

// Writes `part` (shape = out's shape without `axis`) into `out` at index `index` along `axis`.
void WriteAlongAxis(const Tensor& part, Tensor& out, int64_t axis, int64_t index);

// Concatenates `parts` along existing `axis` (all of the same dtype and rank, equal dims off the axis);
// throws InvalidArgumentError naming `what` otherwise. `parts` must not be empty.
Tensor ConcatAlongAxis(const std::vector<Tensor>& parts, int64_t axis, const std::string& what);

// The rank-(r+1) tensor stacking `parts` (all of the same dtype and shape) along the new axis `axis`
// (in [0, r]); throws InvalidArgumentError naming `what` otherwise. `parts` must not be empty.
Tensor StackAlongNewAxis(const std::vector<Tensor>& parts, int64_t axis, const std::string& what);

// Deep copy of every tensor a value holds (used where a tensor enters a sequence, so sequence elements never
// alias executor-owned buffers). Keeps the optional flag.
Value CloneValue(const Value& v);

// Element type and static shape to use for an output that ended up with no data to derive them from (e.g. a
// Loop scan output after zero iterations): taken from `v`'s static type, element type kFloat and rank 0 when
// unknown. Unknown dims become 0.
DataType StaticElemType(const ir::Value* v, DataType fallback);
Shape StaticShapeOrZeros(const ir::Value* v);

// "tensor", "sequence", "empty optional", ... for error messages.
std::string ValueKindName(const Value& v);

}  // namespace ferry::ref
