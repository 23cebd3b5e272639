// A blocked-layout twin back in its value's ONNX layout (`ferry compare --layerwise`).
//
// At optimization level 3 the blocked_layout pass makes a backend that asks for it (the `cpu` backend:
// Backend::activation_block) compute chains of convolutions, pools and elementwise ops in a blocked channel
// layout: the producer of a value X then writes its twin "X_blocked" instead (RunStats::on_value reports it under
// that name). The layout (ai.ferry ops, src/schemas/schemas_ferry.cc; src/kernels/ref/blocked_layout.h) of a
// value of logical shape [N, C, D...]:
//   block b >= 1:   [N, ceil(C/b), D..., b], element (n, c, d...) at [n, c / b, d..., c % b]; the lanes past C in
//                   the last block are padding of no meaning
//   block 0:        channels-last, [N, D..., C], element (n, c, d...) at [n, d..., c]
// The twin's rank tells which: one more than X's for a block (its last dim is b), the same for channels-last.
// Unblocking is a pure permutation that drops the padding lanes: the twin holds exactly the values of X.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "ferry/tensor.h"

namespace ferry::tools {

struct Unblocked {
  Tensor tensor;        // X in its ONNX layout [N, C, D...] (undefined when problem is set)
  int64_t block = -1;   // the twin's layout: a block b >= 1, or 0 for channels-last
  std::string problem;  // why the twin cannot be mapped back unambiguously
  bool ok() const { return problem.empty(); }
};

// `twin`: the blocked tensor. `logical`: X's shape as far as it is known, -1 for an unknown dim (its rank must be
// known, 2 or more; for a block b >= 1 its channel count C too, to drop the padding lanes). Every known dim must
// agree with the twin's shape. String and sub-byte tensors are refused.
Unblocked UnblockTwin(const Tensor& twin, std::span<const int64_t> logical);

// "blocked by 8", "channels-last".
std::string BlockLayoutText(int64_t block);

// The value whose twin `name` could be, among `values` (the values of the original model): "X" for "X_blocked",
// or for "X_blocked_K" (K >= 2: the pass names a twin as the graph does a new value, with a suffix when
// "X_blocked" is taken); "" when `name` is not such a twin (a value of the original model never is one).
template <typename Mapped>
std::string BlockedTwinOf(const std::string& name, const std::map<std::string, Mapped>& values);

std::string BlockedTwinBase(const std::string& name);  // the "X" of "X_blocked" or "X_blocked_K"; "" otherwise

template <typename Mapped>
std::string BlockedTwinOf(const std::string& name, const std::map<std::string, Mapped>& values) {
  if (values.count(name)) return "";
  std::string base = BlockedTwinBase(name);
  return !base.empty() && values.count(base) ? base : "";
}

}  // namespace ferry::tools
