// The Gelu formulas of the ref Gelu kernel (gelu.cc), in accumulation type A, shared with the fused activation of
// the ai.ferry ops (fused_activation.h) so that both compute exactly the same values.
#pragma once

#include <cmath>

namespace ferry::ref {

// approximate = "none": 0.5 x (1 + erf(x / sqrt 2)).
template <typename A>
inline A GeluErf(A x) {
  return A(0.5) * x * (A(1) + std::erf(x * static_cast<A>(0.7071067811865476)));
}

// approximate = "tanh": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
template <typename A>
inline A GeluTanh(A x) {
  const A k = static_cast<A>(0.7978845608028654);  // sqrt(2 / pi)
  return A(0.5) * x * (A(1) + std::tanh(k * (x + static_cast<A>(0.044715) * x * x * x)));
}

}  // namespace ferry::ref
