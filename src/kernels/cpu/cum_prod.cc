// CumProd on the cpu backend (opset 26): the running product along one axis, inclusive or exclusive, optionally
// reversed; float32, float64, int32 and int64. The kernel is CumSum's (cum_sum.h) with products.
#include "kernels/cpu/cum_sum.h"
#include "kernels/kernel_def.h"

namespace ferry::cpu {

void RegisterCumProdKernels(KernelRegistry& r) { AddCumulativeKernels(r, "CumProd", true, 26, kOpsetOpen); }

}  // namespace ferry::cpu
