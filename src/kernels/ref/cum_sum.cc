// CumSum: running sum along an axis (exclusive, reverse). The kernel is shared with CumProd (cumulative.h).
#include "kernels/kernel_def.h"
#include "kernels/ref/cumulative.h"
#include "kernels/registry.h"

namespace ferry::ref {

void RegisterCumSumKernels(KernelRegistry& r) {
  const std::vector<DataType> axis_types = {DataType::kInt32, DataType::kInt64};
  const std::vector<DataType> v11 = {DataType::kUint32, DataType::kUint64, DataType::kInt32,
                                     DataType::kInt64,  DataType::kFloat,  DataType::kDouble};
  r.Add({.op = "CumSum",
         .since = 11,
         .until = 13,
         .types = {{"T", v11}, {"T2", axis_types}},
         .create = MakeKernel<CumulativeKernel<false>>,
         .host_inputs = {1}});
  r.Add({.op = "CumSum",
         .since = 14,
         .types = {{"T", dtypes::Concat(v11, {DataType::kFloat16, DataType::kBFloat16})}, {"T2", axis_types}},
         .create = MakeKernel<CumulativeKernel<false>>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
