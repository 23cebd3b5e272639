// Helpers shared by the normalisation kernels (BatchNormalization, LayerNormalization, GroupNormalization, ...)
// and the other ref kernels that compute in an accumulator type (the attentions, CausalConvWithState): reading
// float tensors (scale, bias, mean, Q/K/V) into an accumulator-typed vector, optionally broadcast
// (unidirectionally) to a target shape.
#pragma once

#include <string>
#include <vector>

#include "kernels/ref/common.h"
#include "semantics/broadcast.h"

namespace ferry::ref {

// Copies a float tensor (float, double, float16, bfloat16) into a vector of A. `where` names the node for the
// error on another type: a std::string, or in a Compute the KernelContext (described only on the error path).
template <typename A, typename Where>
std::vector<A> ReadFloats(const Tensor& t, const Where& where) {
  std::vector<A> out(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = static_cast<A>(static_cast<Acc<T>>(p[i]));
  });
  return out;
}

// True when `from` broadcasts unidirectionally to `to` (numpy rules, `to` unchanged): semantics/broadcast.h.
using semantics::BroadcastsTo;

// `flat` (the elements of a tensor of shape `from`) laid out in `target` shape; `from` broadcasts to `target`.
template <typename A>
std::vector<A> ExpandFloats(std::vector<A> flat, const Shape& from, const Shape& target) {
  if (from == target) return flat;
  BroadcastIterator it(target, {from});
  std::vector<A> out(static_cast<size_t>(it.size()));
  it.ForEach([&](int64_t i, const int64_t* off) { out[static_cast<size_t>(i)] = flat[static_cast<size_t>(off[0])]; });
  return out;
}

// Reads `t` as a vector of A laid out in `target` shape (broadcasting `t` to it); throws InvalidArgumentError
// naming `what` and `input` when the shapes do not broadcast.
template <typename A>
std::vector<A> ReadFloatsExpanded(const Tensor& t, const Shape& target, const std::string& what,
                                  const std::string& input) {
  if (!BroadcastsTo(t.shape(), target)) {
    throw InvalidArgumentError(what + ": input '" + input + "' of shape " + ShapeToString(t.shape()) +
                               " does not broadcast to " + ShapeToString(target));
  }
  return ExpandFloats(ReadFloats<A>(t, what), t.shape(), target);
}

// ReadFloatsExpanded for a Compute: Prepare checked that `t` broadcasts to `target`; the node is described only
// on the error path.
template <typename A>
std::vector<A> ReadFloatsExpanded(const Tensor& t, const Shape& target, const KernelContext& ctx) {
  return ExpandFloats(ReadFloats<A>(t, ctx), t.shape(), target);
}

// Accumulator type for the ONNX `stash_type` attribute: the element type used for mean/variance outputs.
inline DataType StashType(int64_t stash_type, const std::string& what) {
  switch (stash_type) {
    case 1: return DataType::kFloat;
    case 10: return DataType::kFloat16;
    case 11: return DataType::kDouble;
    case 16: return DataType::kBFloat16;
    default:
      throw InvalidModelError(what + ": stash_type " + std::to_string(stash_type) +
                              " is not a floating-point type");
  }
}

}  // namespace ferry::ref
