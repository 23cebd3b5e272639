// What the CUDA kernels (src/kernels/cuda/, built when FERRY_CUDA finds the toolkit) give the `cuda`
// backend: the device query, copies between host and device memory, and a factory for every kernel declaration
// (src/kernels/cuda_defs/cuda_kernel_defs.cc) by its name. Plain C++: the backend (compiled on every machine) calls
// these only when built with FERRY_WITH_CUDA.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/value.h"
#include "kernels/kernel.h"

namespace ferry::cuda {

struct DeviceInfo {
  bool present = false;
  int compute_capability = 0;  // e.g. 90
  std::string name;            // "NVIDIA H200"
  int64_t memory_bytes = 0;
  std::string absent_reason;   // when !present: what the CUDA runtime said
};
// Never throws.
DeviceInfo QueryDevice(int device);

// A kernel for `node` on device `device`.
using DeviceKernelFactory = std::function<std::unique_ptr<OpKernel>(const ir::Node& node, int device)>;
// Every factory, keyed by the declaration's name ("cuda.Relu.6").
const std::vector<std::pair<std::string, DeviceKernelFactory>>& KernelFactories();

// Host <-> device copies on the calling thread's stream of `device`: CopyToDevice returns once the host data
// has been read (through pinned staging); CopyToHost once the host copy is complete.
Value CopyToDevice(int device, const Value& host_value);
Value CopyToHost(int device, const Value& device_value);

}  // namespace ferry::cuda
