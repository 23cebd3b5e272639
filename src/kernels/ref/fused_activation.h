// The activation fused into the ai.ferry convolutions and matrix products (FusedConv, BlockedConv, FusedMatMul):
// the ref kernels' loop over the reference formulas of the one activation table (semantics/fused_activation.h,
// which defines the vocabulary, the parameters and their defaults). A backend mapping these onto its own
// primitives (e.g. oneDNN eltwise post-ops, cpu/fused_activation.h) reads `kind`, `alpha` and `beta`; edge cases
// (NaN, min > max) are the table's.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "semantics/fused_activation.h"

namespace ferry::ref {

struct FusedActivation : semantics::FusedActivation {
  using Kind = semantics::FusedActivationKind;

  // Reads `activation` and `activation_params` (semantics::FusedActivationFromNode); throws InvalidModelError
  // naming the node for an unknown name or a parameter count other than 0 or the activation's own.
  static FusedActivation FromNode(const ir::Node& node);

  // y[i] = act(y[i]) for i in [0, n), split over up to `threads` threads when n is large.
  void Apply(float* y, int64_t n, int threads = 1) const;
};

}  // namespace ferry::ref
