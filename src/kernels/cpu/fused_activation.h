// The activation an ai.ferry FusedConv / BlockedConv / FusedMatMul applies to its result (`activation`,
// `activation_params`; see src/schemas/schemas_ferry.cc), as oneDNN eltwise post-ops, plus a scalar form for the
// outputs no primitive computes (a convolution over no input channels: y = act(bias + z); a product with K = 0).
//
// oneDNN 2.6 mapping (checked against its jit eltwise injector on this host):
//   Relu        eltwise_relu (alpha 0)           LeakyRelu [a]      eltwise_relu (alpha a)
//   Clip [lo,hi] eltwise_clip_v2 (lo, hi)        Sigmoid            eltwise_logistic
//   Tanh        eltwise_tanh                     HardSwish          eltwise_hardswish (x * min(max(x+3,0),6)/6)
//   HardSigmoid [a,b]  eltwise_linear (a, b) then eltwise_clip_v2 (0, 1): oneDNN 2.6 has no hardsigmoid
//   Silu        eltwise_swish (alpha 1): x * sigmoid(x)
//   Gelu        eltwise_gelu_erf: 0.5 x (1 + erf(x / sqrt 2)); within 5e-7 of ref's (absolute, over [-10, 10])
//   GeluTanh    eltwise_gelu_tanh: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); within 5e-7 of ref's (likewise)
//   Mish        eltwise_mish: x tanh(softplus(x)); within 1e-6 of ref's (absolute, over [-100, 40]): its relative
//               error grows as the output nears 0 from below (6e-4 at x = -9, y = -1e-3), and it is 0 below
//               x = -16.6, where ref's |y| < 1e-6
// clip and clip_v2 agree in the forward direction (they differ only in the gradient at x == lo); both compute
// min(max(x, lo), hi) as ONNX Clip does, but oneDNN refuses lo > hi (ONNX: every element becomes hi), so that
// case is refused. One difference is not refused: on a NaN, oneDNN's Relu, Clip and HardSigmoid (vmaxps with the
// bound second) return 0 / lo / 0, where ONNX (and ref) propagate the NaN. A conv or matmul output is NaN only
// when its inputs hold NaN or inf, or the sum overflows; the other activations propagate NaN like ref.
#pragma once

#include <dnnl.hpp>
#include <string>

#include "ir/graph.h"
#include "semantics/fused_activation.h"

namespace ferry::cpu {

struct FusedActivation : semantics::FusedActivation {
  using Kind = semantics::FusedActivationKind;

  // Reads `activation` and `activation_params` of `node` into `out` (the table's: semantics/fused_activation.h;
  // no params: its defaults); returns "" or why the cpu kernels cannot run them (unknown activation, wrong
  // parameter count, Clip with min > max or a NaN bound), naming the op.
  static std::string Parse(const ir::Node& node, FusedActivation* out);

  // Appends the activation's eltwise post-op(s) to `ops` (nothing for kNone).
  void AppendTo(dnnl::post_ops& ops) const;

  // The activation of one value, with the table's reference formulas (NaN propagates).
  float Apply(float x) const { return semantics::ApplyFusedActivation(*this, x); }
};
}  // namespace ferry::cpu
