// Helpers shared by the normalisation kernels (BatchNormalization, LayerNormalization, GroupNormalization, ...):
// reading small float parameter tensors (scale, bias, mean) into an accumulator-typed vector, optionally
// broadcast (unidirectionally) to a target shape.
#pragma once

#include <string>
#include <vector>

#include "kernels/ref/common.h"
#include "semantics/broadcast.h"

namespace ferry::ref {

// Copies a float tensor (float, double, float16, bfloat16) into a vector of A.
template <typename A>
std::vector<A> ReadFloats(const Tensor& t, const std::string& what) {
  std::vector<A> out(static_cast<size_t>(t.size()));
  Dispatch(FloatTypes{}, t.dtype(), what, [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = static_cast<A>(static_cast<Acc<T>>(p[i]));
  });
  return out;
}

// True when `from` broadcasts unidirectionally to `to` (numpy rules, `to` unchanged): semantics/broadcast.h.
using semantics::BroadcastsTo;

// Reads `t` as a vector of A laid out in `target` shape (broadcasting `t` to it); throws InvalidArgumentError
// naming `what` and `input` when the shapes do not broadcast.
template <typename A>
std::vector<A> ReadFloatsExpanded(const Tensor& t, const Shape& target, const std::string& what,
                                  const std::string& input) {
  if (!BroadcastsTo(t.shape(), target)) {
    throw InvalidArgumentError(what + ": input '" + input + "' of shape " + ShapeToString(t.shape()) +
                               " does not broadcast to " + ShapeToString(target));
  }
  std::vector<A> flat = ReadFloats<A>(t, what);
  if (t.shape() == target) return flat;
  BroadcastIterator it(target, {t.shape()});
  std::vector<A> out(static_cast<size_t>(it.size()));
  it.ForEach([&](int64_t i, const int64_t* off) { out[static_cast<size_t>(i)] = flat[static_cast<size_t>(off[0])]; });
  return out;
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
