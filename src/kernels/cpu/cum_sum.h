// The cpu CumSum and CumProd kernels share one implementation (cum_sum.cc): a running sum or product along one
// axis for float32, float64, int32 and int64, with AVX2 and baseline variants.
#pragma once

#include <string>

#include "kernels/registry.h"

namespace ferry::cpu {

// Registers `op` ("CumSum" or "CumProd": `prod`) for the schema versions [since, until], every ISA variant, best
// first, named cpu.<lowercase op>__<isa>.<since>.
void AddCumulativeKernels(KernelRegistry& r, const std::string& op, bool prod, int since, int until);

}  // namespace ferry::cpu
