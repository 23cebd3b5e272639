// The `cuda` backend's kernel declarations as plain data: ops, opset ranges, dtypes, attribute predicates with
// their reasons, the minimum compute capability and host-memory inputs. Compiled into the runtime on every machine
// (with or without the CUDA toolkit), so `ferry ops --backend cuda` and `ferry check --backends cuda,cpu --cc 8.0`
// answer without a GPU. The kernels themselves (src/kernels/cuda/, the kernels/cuda room) fill in each
// declaration's factory by name when CUDA is built (CudaKernelFactories(), src/kernels/cuda/cuda_runtime.h).
#pragma once

#include <vector>

#include "kernels/kernel_def.h"

namespace ferry::cuda {

// Ferry's CUDA code is compiled for sm_80 and sm_90 (SASS) plus compute_90 PTX: a GPU below compute capability
// 8.0 runs none of it, so every declaration needs at least 8.0.
inline constexpr int kMinComputeCapability = 80;

// Every declaration, `create` left empty; names are "cuda.<Op>.<since>" (unique).
std::vector<KernelDef> KernelDefs();

}  // namespace ferry::cuda
