// The checks of ONNX Runtime's BiasGelu, FastGelu, QuickGelu and BiasAdd (ort_gelu.cc has the definitions), shared
// by the ref and cpu kernels.
#pragma once

#include "kernels/kernel.h"

namespace ferry::ref {

enum class OrtBiasOp { kBiasGelu, kFastGelu, kQuickGelu, kBiasAdd };

// Checks the inputs of `op` (the bias 1-D of X's last dim and X's type; BiasAdd: X 3-D, skip X's shape) and
// declares Y with X's type and shape; throws InvalidArgumentError naming the node and input.
void PrepareOrtBiasOp(PrepareContext& ctx, OrtBiasOp op);

}  // namespace ferry::ref
