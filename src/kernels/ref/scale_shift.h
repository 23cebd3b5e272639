// What every backend's ai.ferry ScaleShift kernel (schemas_ferry.cc) checks before it runs: the ref kernel's rules,
// shared so that the cpu kernel refuses the same inputs with the same words.
#pragma once

#include "kernels/kernel.h"

namespace ferry::ref {

// X, scale and shift float32, scale and shift broadcasting to X's shape; declares Y with X's shape. Throws
// InvalidArgumentError naming the node, the input and the shapes otherwise.
void PrepareScaleShiftOutput(PrepareContext& ctx);

}  // namespace ferry::ref
