// Host-side arithmetic of the CUDA kernels: launch configurations, broadcast / transpose / slice index maps,
// reduction plans and view shapes. Plain C++ compiled into `ferry` on every machine, so it is unit-tested without
// a GPU (tests/backends/cuda_shapes_test.cc); the kernels in src/kernels/cuda/ only execute these plans.
// Errors name the node (`who`, from Node::Describe()).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ferry/tensor.h"

namespace ferry::cuda {

inline constexpr int kMaxRank = 8;

// A grid-stride launch over n elements: `threads` per block, at most kMaxBlocks blocks (each thread then loops).
struct Launch1d {
  int64_t blocks = 0;  // 0 when n == 0 (nothing to launch)
  int threads = 256;
};
inline constexpr int64_t kMaxBlocks = 65535LL * 16;
Launch1d LaunchFor(int64_t n, int threads = 256);

// Output element -> input element offsets, for up to 3 inputs: the output's dims (coalesced where possible) and,
// per input, the element stride along each of them (0 for a broadcast dim) and a base offset. Passed by value to
// the kernels, so it is plain data.
struct IndexMap {
  int rank = 0;
  int inputs = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  int64_t base[3] = {};
  int64_t count = 0;  // output elements
};

// Numpy-style multidirectional broadcast of `inputs` (1 to 3 shapes): the output shape, or InvalidModelError naming
// the node and both shapes when they do not broadcast.
Shape BroadcastShape(std::span<const Shape> inputs, const std::string& who);
// The index map of that broadcast; adjacent dims that every input treats alike are merged.
IndexMap BroadcastMap(std::span<const Shape> inputs, const std::string& who);
// True when every input has the output's element count (elementwise without index arithmetic).
bool IsPlainElementwise(std::span<const Shape> inputs);

// Transpose of `in` by `perm` (empty: reversed): output shape and the map (input 0).
IndexMap TransposeMap(const Shape& in, std::vector<int64_t> perm, Shape* out, const std::string& who);

// Slice (opset 10+): starts/ends/axes/steps as the ONNX spec clamps them; `axes`/`steps` may be empty.
IndexMap SliceMap(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps, Shape* out, const std::string& who);

// A reduction over `axes` (sorted, normalized, may be empty: nothing reduced) of a tensor of shape `in`:
// kept dims with their input strides, reduced dims with theirs.
struct ReducePlan {
  int64_t outputs = 0;
  int64_t reduced = 1;  // elements folded into each output
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  int64_t red_dims[kMaxRank] = {}, red_strides[kMaxRank] = {};
};
ReducePlan PlanReduce(const Shape& in, const std::vector<int64_t>& axes, const std::string& who);
// Output shape of a reduction (keepdims: reduced dims become 1).
Shape ReducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims);

// Axes in [-rank, rank) -> [0, rank), sorted and unique; InvalidModelError naming `who` when out of range or repeated.
std::vector<int64_t> NormalizeAxes(std::vector<int64_t> axes, int64_t rank, const std::string& who);

// View ops: output shapes (the data is shared).
Shape ReshapeShape(const Shape& in, std::span<const int64_t> spec, bool allowzero, const std::string& who);
Shape FlattenShape(const Shape& in, int64_t axis, const std::string& who);
Shape SqueezeShape(const Shape& in, const std::vector<int64_t>& axes, const std::string& who);
Shape UnsqueezeShape(const Shape& in, const std::vector<int64_t>& axes, const std::string& who);

// Softmax: outer x n x inner around `axis` (opset >= 13: one axis; before: every dim from `axis` on is one row).
struct SoftmaxPlan {
  int64_t outer = 1, n = 1, inner = 1;
};
SoftmaxPlan PlanSoftmax(const Shape& in, int64_t axis, int64_t opset, const std::string& who);

// Gather along `axis`: outer x axis_dim x inner of the data, `indices` elements.
struct GatherPlan {
  int64_t outer = 1, axis_dim = 0, inner = 1, indices = 0;
};
GatherPlan PlanGather(const Shape& data, const Shape& indices, int64_t axis, Shape* out, const std::string& who);

// Concat along `axis`: the output shape (every input's other dims must agree), outer rows and each input's row
// width in elements.
Shape ConcatShape(const std::vector<Shape>& inputs, int64_t axis, int64_t* outer, std::vector<int64_t>* widths,
                  const std::string& who);

}  // namespace ferry::cuda
