// The `reduction` attribute of ScatterElements and ScatterND (opset 16: none/add/mul, opset 18: max/min) and
// the per-element update it selects.
#pragma once

#include <algorithm>
#include <string>

#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"

namespace ferry::ref {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

inline ScatterReduction ParseScatterReduction(const ir::Node& node) {
  const std::string r = node.GetString("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  throw InvalidModelError(node.Describe() + ": unknown reduction '" + r + "' (expected none, add, mul, max or min)");
}

// Calls fn(update) where update(out, oi, upd, ui) combines upd[ui] into out[oi] per `reduction`. `none` moves raw
// elements of any dtype; the arithmetic reductions need a numeric or bool dtype (float16/bfloat16 through float).
template <typename Fn>
void DispatchScatterUpdate(DataType dtype, ScatterReduction reduction, const std::string& what, Fn&& fn) {
  if (reduction == ScatterReduction::kNone) {
    DispatchElements(dtype, what, [&](auto acc) {
      using A = decltype(acc);
      fn([](void* out, int64_t oi, const void* upd, int64_t ui) { A::Set(out, oi, A::Get(upd, ui)); });
    });
    return;
  }
  using Types = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                         uint32_t, uint64_t, bool>;
  Dispatch(Types{}, dtype, what + " with a reduction", [&](auto tag) {
    using T = decltype(tag);
    using C = Acc<T>;
    auto at = [](void* out, int64_t oi) -> T& { return static_cast<T*>(out)[oi]; };
    auto get = [](const void* upd, int64_t ui) { return static_cast<C>(static_cast<const T*>(upd)[ui]); };
    switch (reduction) {
      case ScatterReduction::kAdd:
        fn([&](void* o, int64_t oi, const void* u, int64_t ui) {
          at(o, oi) = static_cast<T>(static_cast<C>(static_cast<C>(at(o, oi)) + get(u, ui)));
        });
        break;
      case ScatterReduction::kMul:
        fn([&](void* o, int64_t oi, const void* u, int64_t ui) {
          at(o, oi) = static_cast<T>(static_cast<C>(static_cast<C>(at(o, oi)) * get(u, ui)));
        });
        break;
      case ScatterReduction::kMax:
        fn([&](void* o, int64_t oi, const void* u, int64_t ui) {
          at(o, oi) = static_cast<T>(std::max<C>(static_cast<C>(at(o, oi)), get(u, ui)));
        });
        break;
      case ScatterReduction::kMin:
        fn([&](void* o, int64_t oi, const void* u, int64_t ui) {
          at(o, oi) = static_cast<T>(std::min<C>(static_cast<C>(at(o, oi)), get(u, ui)));
        });
        break;
      case ScatterReduction::kNone:
        break;
    }
  });
}

}  // namespace ferry::ref
