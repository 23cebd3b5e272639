// The activation fused into the ai.ferry convolutions and matrix products (FusedConv, BlockedConv, FusedMatMul;
// schemas_ferry.cc): the one table of its vocabulary, read from the node's `activation` (name) and
// `activation_params` (floats; empty = the defaults below) attributes, and its scalar reference formulas.
//
//   activation   params (defaults)            y =
//   ""           -                            x
//   Relu         -                            max(x, 0); NaN stays NaN
//   LeakyRelu    alpha (0.01)                 x < 0 ? alpha * x : x
//   Clip         min, max (-inf, +inf)        min(max(x, min), max); NaN stays NaN; min > max gives max
//   Sigmoid      -                            1 / (1 + exp(-x)), evaluated without overflow for large |x|
//   Tanh         -                            tanh(x)
//   HardSigmoid  alpha, beta (0.2, 0.5)       max(0, min(1, alpha * x + beta)); NaN stays NaN
//   HardSwish    -                            x * max(0, min(1, x / 6 + 0.5)); NaN stays NaN
//   Silu         -                            x * sigmoid(x)
//   Gelu         -                            x * 0.5 * (1 + erf(x / sqrt 2)), as the ref Gelu kernel
//   GeluTanh     -                            x * 0.5 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), likewise
//   Mish         -                            x * tanh(softplus(x)), softplus as the ref Softplus kernel
//
// Each is exactly the standard ONNX op of that name (Silu: Mul(x, Sigmoid(x)); Gelu: Gelu-20 with approximate
// "none"; GeluTanh: Gelu-20 with approximate "tanh"; Mish: Mish-18, or Mul(x, Tanh(Softplus(x))) at any opset),
// with the op's attribute of the parameter's name where it has one (LeakyRelu alpha, HardSigmoid alpha and beta;
// Clip's bounds are inputs from opset 11), so FusedConv equals Conv, Add and the activation run one after
// another. Users: the fusion passes (which activation a node becomes), legalization (the node back as standard
// ops), the ref kernels (the loops) and the cpu kernels (oneDNN post-ops).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "ir/graph.h"

namespace ferry::semantics {

enum class FusedActivationKind {
  kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kTanh, kHardSigmoid, kHardSwish, kSilu, kGelu, kGeluTanh, kMish
};

// One row of the table.
struct FusedActivationInfo {
  FusedActivationKind kind;
  std::string_view name;            // the `activation` value ("" for none)
  size_t params;                    // how many activation_params it takes (0 or this many are accepted)
  std::string_view param_names[2];  // what they are ("alpha", "min", ...)
  float defaults[2];                // their values when activation_params is empty
};

// Every row, kNone first, in the order of FusedActivationKind.
std::span<const FusedActivationInfo> FusedActivations();
// The row of `name`, or nullptr when the vocabulary has no such activation.
const FusedActivationInfo* FindFusedActivation(std::string_view name);
// The row of `kind`.
const FusedActivationInfo& FusedActivationOf(FusedActivationKind kind);
// The names for a message: "\"\", Relu, LeakyRelu, ..., GeluTanh or Mish".
std::string FusedActivationNames();

// A parsed activation: the kind and its parameters (LeakyRelu: alpha; Clip: alpha = min, beta = max;
// HardSigmoid: alpha, beta; unused otherwise).
struct FusedActivation {
  FusedActivationKind kind = FusedActivationKind::kNone;
  float alpha = 0, beta = 0;
};

// Why `name` with `params` is not in the vocabulary, for callers that word the refusal themselves.
enum class FusedActivationProblem { kNone, kUnknownName, kParamCount };

// Parses `name` and `params` (empty: the defaults) into `out`; kNone, or what is wrong (then `out` is untouched).
FusedActivationProblem ParseFusedActivation(std::string_view name, std::span<const float> params,
                                            FusedActivation* out);
// "" when `name` with `params` is in the vocabulary, else why not: "unknown activation 'X' (expected ...)" or
// "activation 'X' takes N activation_params (or none for the defaults), got M". Shape inference refuses such a
// node with it, the ref kernels at creation.
std::string FusedActivationError(std::string_view name, std::span<const float> params);
// The node's `activation` and `activation_params`; throws InvalidModelError "node: FusedActivationError" for an
// unknown name or a parameter count other than 0 or the activation's own.
FusedActivation FusedActivationFromNode(const ir::Node& node);

namespace detail {
// 1 / (1 + exp(-x)) as the ref Sigmoid kernel computes it (unary_math.cc): exp never overflows.
inline float Sigmoid(float x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
// min(1, max(0, v)) with NaN kept (std::min/max would turn it into a bound).
inline float Clamp01(float v) { return std::isnan(v) ? v : std::min(1.0f, std::max(0.0f, v)); }
// log(1 + exp(x)) as the ref Softplus kernel computes it (activations.cc): exp never overflows; NaN stays NaN.
inline float Softplus(float x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
}  // namespace detail

// The Gelu formulas of the ref Gelu kernel, in accumulation type A; the fused activation uses them in float so
// that FusedConv / FusedMatMul compute exactly what Gelu computes.
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

// The activation K of one value with parameters a, b: the reference formula (NaN propagates).
template <FusedActivationKind K>
inline float ApplyFusedActivation(float x, float a, float b) {
  using Kind = FusedActivationKind;
  if constexpr (K == Kind::kNone) return x;
  if constexpr (K == Kind::kRelu) return x > 0 || x != x ? x : 0.0f;
  if constexpr (K == Kind::kLeakyRelu) return x < 0 ? x * a : x;
  if constexpr (K == Kind::kClip) return x != x ? x : std::min(std::max(x, a), b);
  if constexpr (K == Kind::kSigmoid) return detail::Sigmoid(x);
  if constexpr (K == Kind::kTanh) return std::tanh(x);
  if constexpr (K == Kind::kHardSigmoid) return detail::Clamp01(a * x + b);
  if constexpr (K == Kind::kHardSwish) return x * detail::Clamp01(x / 6 + 0.5f);
  if constexpr (K == Kind::kSilu) return x * detail::Sigmoid(x);
  if constexpr (K == Kind::kGelu) return GeluErf(x);
  if constexpr (K == Kind::kGeluTanh) return GeluTanh(x);
  if constexpr (K == Kind::kMish) return x * std::tanh(detail::Softplus(x));
}

// Calls fn(std::integral_constant<FusedActivationKind, K>{}) for the K of `kind`: one loop per kind, no switch
// per element.
template <typename Fn>
inline decltype(auto) DispatchFusedActivation(FusedActivationKind kind, Fn&& fn) {
  using Kind = FusedActivationKind;
  switch (kind) {
    case Kind::kNone: return fn(std::integral_constant<Kind, Kind::kNone>{});
    case Kind::kRelu: return fn(std::integral_constant<Kind, Kind::kRelu>{});
    case Kind::kLeakyRelu: return fn(std::integral_constant<Kind, Kind::kLeakyRelu>{});
    case Kind::kClip: return fn(std::integral_constant<Kind, Kind::kClip>{});
    case Kind::kSigmoid: return fn(std::integral_constant<Kind, Kind::kSigmoid>{});
    case Kind::kTanh: return fn(std::integral_constant<Kind, Kind::kTanh>{});
    case Kind::kHardSigmoid: return fn(std::integral_constant<Kind, Kind::kHardSigmoid>{});
    case Kind::kHardSwish: return fn(std::integral_constant<Kind, Kind::kHardSwish>{});
    case Kind::kSilu: return fn(std::integral_constant<Kind, Kind::kSilu>{});
    case Kind::kGelu: return fn(std::integral_constant<Kind, Kind::kGelu>{});
    case Kind::kGeluTanh: return fn(std::integral_constant<Kind, Kind::kGeluTanh>{});
    case Kind::kMish: return fn(std::integral_constant<Kind, Kind::kMish>{});
  }
  return fn(std::integral_constant<Kind, Kind::kNone>{});
}

// The activation of one value (the reference formula of act.kind with act's parameters).
inline float ApplyFusedActivation(const FusedActivation& act, float x) {
  return DispatchFusedActivation(
      act.kind, [&](auto k) { return ApplyFusedActivation<decltype(k)::value>(x, act.alpha, act.beta); });
}

}  // namespace ferry::semantics
