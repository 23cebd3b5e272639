// Slice's window: which elements starts/ends/axes/steps select (negative values count from the end, starts and
// ends clamp per the step's direction: semantics::ResolveSliceAxis per axis, as shape inference). Shared by the ref
// and cpu Slice kernels, which differ only in the copy.
#pragma once

#include <string>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::ref {

struct SliceWindow {
  Shape out_shape;
  std::vector<int64_t> begin, step;  // per input dimension: first index read and stride (begin 0 when empty)
};

// Throws InvalidArgumentError naming `what` for mismatched lengths, a repeated axis, a 0 step or a bad axis.
SliceWindow ResolveSliceWindow(const Shape& x_shape, std::vector<int64_t> starts, std::vector<int64_t> ends,
                               std::vector<int64_t> axes, std::vector<int64_t> steps, const std::string& what);

}  // namespace ferry::ref
