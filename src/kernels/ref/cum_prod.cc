// CumProd (opset 26): running product along an axis (exclusive, reverse). Shares its kernel with CumSum.
#include "kernels/kernel_def.h"
#include "kernels/ref/cumulative.h"
#include "kernels/registry.h"

namespace ferry::ref {

void RegisterCumProdKernels(KernelRegistry& r) {
  r.Add({.op = "CumProd",
         .since = 26,
         .types = {{"T",
                    {DataType::kUint32, DataType::kUint64, DataType::kInt32, DataType::kInt64, DataType::kFloat,
                     DataType::kDouble, DataType::kFloat16, DataType::kBFloat16}},
                   {"T2", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<CumulativeKernel<true>>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
