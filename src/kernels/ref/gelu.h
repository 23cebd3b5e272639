// The Gelu formulas of the ref Gelu kernel (gelu.cc), in accumulation type A: the op-semantics layer's
// (semantics/fused_activation.h), which the fused activation of the ai.ferry ops uses too, so that both compute
// exactly the same values.
#pragma once

#include "semantics/fused_activation.h"

namespace ferry::ref {

using semantics::GeluErf;
using semantics::GeluTanh;

}  // namespace ferry::ref
