// The fused activation of FusedConv / BlockedConv / FusedMatMul: the reference loops (fused_activation.h).
#include "kernels/ref/fused_activation.h"

#include "core/parallel.h"

namespace ferry::ref {

FusedActivation FusedActivation::FromNode(const ir::Node& node) {
  FusedActivation act;
  static_cast<semantics::FusedActivation&>(act) = semantics::FusedActivationFromNode(node);
  return act;
}

void FusedActivation::Apply(float* y, int64_t n, int threads) const {
  if (kind == Kind::kNone) return;
  const float a = alpha, b = beta;
  semantics::DispatchFusedActivation(kind, [&](auto k) {
    ParallelFor(n < (1 << 16) ? 1 : threads, n, 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = semantics::ApplyFusedActivation<decltype(k)::value>(y[i], a, b);
    });
  });
}

}  // namespace ferry::ref
