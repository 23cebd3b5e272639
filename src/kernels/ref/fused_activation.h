// The activation fused into the ai.ferry convolutions and matrix products (FusedConv, BlockedConv, FusedMatMul;
// schemas_ferry.cc), read once from the node's `activation` (name) and `activation_params` (floats; empty = the
// defaults below) attributes.
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
//   Gelu         -                            x * 0.5 * (1 + erf(x / sqrt 2)), as the ref Gelu kernel (gelu.h)
//   GeluTanh     -                            x * 0.5 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), likewise
//
// Each is exactly the standard ONNX op of that name (Silu: Mul(x, Sigmoid(x)); Gelu: Gelu-20 with approximate
// "none"; GeluTanh: Gelu-20 with approximate "tanh"), so FusedConv equals Conv, Add and the activation run one
// after another. A backend mapping these onto its own primitives (e.g. oneDNN eltwise post-ops: relu with alpha
// 0 / alpha, clip_v2, logistic, tanh, hardsigmoid, hardswish with 1/6 and 0.5, swish with alpha 1, gelu_erf,
// gelu_tanh) reads `kind`, `alpha` and `beta`; edge cases (NaN, min > max) are the table's.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/graph.h"

namespace ferry::ref {

struct FusedActivation {
  enum class Kind {
    kNone, kRelu, kLeakyRelu, kClip, kSigmoid, kTanh, kHardSigmoid, kHardSwish, kSilu, kGelu, kGeluTanh
  };

  Kind kind = Kind::kNone;
  // LeakyRelu: alpha. Clip: alpha = min, beta = max. HardSigmoid: alpha, beta. Unused otherwise.
  float alpha = 0, beta = 0;

  // Reads `activation` and `activation_params`; throws InvalidModelError naming the node for an unknown name or
  // a parameter count other than 0 or the activation's own.
  static FusedActivation FromNode(const ir::Node& node);

  // The `activation` name of `kind` ("" for kNone).
  static std::string_view Name(Kind kind);

  // y[i] = act(y[i]) for i in [0, n), split over up to `threads` threads when n is large.
  void Apply(float* y, int64_t n, int threads = 1) const;
};

}  // namespace ferry::ref
