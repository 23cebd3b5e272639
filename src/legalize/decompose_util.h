// What several decompositions build alike: the activations (Gelu, HardSwish, Mish, and the `activation` of
// Ferry's fused ops) and the normalizations' statistics in float for half-precision inputs.
#pragma once

#include <string>

#include "legalize/decomposition.h"

namespace ferry::legalize {

// 0.5 x (1 + erf(x / sqrt 2)), or with `tanh`: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
ir::Value* BuildGelu(Builder& b, ir::Value* x, bool tanh);
// x * clip(x / 6 + 0.5, 0, 1).
ir::Value* BuildHardSwish(Builder& b, ir::Value* x);
// x * tanh(softplus(x)), written as x * n / (n + 2) with n = e (e + 2), e = exp(min(x, 20)): tanh(log(1 + e)) is
// ((1 + e)^2 - 1) / ((1 + e)^2 + 1); exact for small e (no log(1 + e) rounding), and 1 in float past x = 20.
ir::Value* BuildMish(Builder& b, ir::Value* x);

// The activations of ai.ferry's FusedConv / FusedMatMul (`activation`, `activation_params`; the table in
// semantics/fused_activation.h): "" when `node`'s can be built, else why not. HardSwish and Gelu are built as
// those ops where the opset has them (14, 20), as primitives before.
std::string RefuseFusedActivation(const ir::Node& node, int64_t opset);
ir::Value* BuildFusedActivation(Builder& b, ir::Value* x);

// LayerNormalization of `x` over the dims [axis, rank) (axis >= 0): Y = (x - mean) / sqrt(var + epsilon) * scale
// (+ bias), the statistics in type `stash` (x cast to it and the normalized value cast back when it differs).
struct LayerNormParts {
  ir::Value* y = nullptr;
  ir::Value* mean = nullptr;    // of type `stash`, keepdims
  ir::Value* stddev = nullptr;  // sqrt(var + epsilon), of type `stash`
};
LayerNormParts BuildLayerNorm(Builder& b, ir::Value* x, ir::Value* scale, ir::Value* bias, int64_t axis, int64_t rank,
                              float epsilon, DataType stash);

// Normalizations: float16 / bfloat16 inputs are normalized in float (stash_type 1), as the ONNX function bodies
// do. The type statistics are computed in for input type `t`, or kUndefined when the rule cannot (stash_type
// other than 1 with a half-precision input).
DataType StashType(DataType t, int64_t stash_type);

}  // namespace ferry::legalize
