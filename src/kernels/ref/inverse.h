// com.microsoft::Inverse's input check, shared by the ref and cpu kernels (semantics: inverse.cc).
#pragma once

#include "kernels/kernel.h"

namespace ferry::ref {

// X is [*, M, M] (rank >= 2, the last two dims equal); throws InvalidArgumentError naming the node and input.
void CheckInverseInput(const PrepareContext& ctx);

}  // namespace ferry::ref
