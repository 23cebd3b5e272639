// The one list of `cuda` kernels: each Add...Factories() lives in its op's file in src/kernels/cuda/ and adds a
// factory under the name of its declaration in src/kernels/cuda_defs/cuda_kernel_defs.cc (the test
// CudaDefs.EveryDeclarationHasAFactory keeps the two in step).
#include "kernels/cuda/cuda_common.h"

namespace ferry::cuda {

// --- cuDNN: convolution, pooling ---
void AddConvFactories(FactoryList& list);
void AddPoolingFactories(FactoryList& list);
// --- cuBLAS: MatMul, Gemm ---
void AddMatMulFactories(FactoryList& list);
// --- Ferry's own kernels ---
void AddNormalizationFactories(FactoryList& list);
void AddReduceFactories(FactoryList& list);
void AddUnaryElementwiseFactories(FactoryList& list);
void AddBinaryElementwiseFactories(FactoryList& list);
void AddDataMovementFactories(FactoryList& list);
void AddConcatFactories(FactoryList& list);
// --- views (no copy) ---
void AddViewFactories(FactoryList& list);

const std::vector<std::pair<std::string, DeviceKernelFactory>>& KernelFactories() {
  static const FactoryList list = [] {
    FactoryList l;
    // --- cuDNN: convolution, pooling ---
    AddConvFactories(l);
    AddPoolingFactories(l);
    // --- cuBLAS: MatMul, Gemm ---
    AddMatMulFactories(l);
    // --- Ferry's own kernels ---
    AddNormalizationFactories(l);
    AddReduceFactories(l);
    AddUnaryElementwiseFactories(l);
    AddBinaryElementwiseFactories(l);
    AddDataMovementFactories(l);
    AddConcatFactories(l);
    // --- views (no copy) ---
    AddViewFactories(l);
    return l;
  }();
  return list;
}

}  // namespace ferry::cuda
