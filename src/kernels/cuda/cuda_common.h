// Shared by the CUDA kernels (host side; compiled by g++ in .cc files and by nvcc in .cu files): error checks,
// the calling thread's stream, device buffers, the kernel base class and the factory list.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_runtime.h"
#include "ferry/error.h"
#include "kernels/kernel.h"

namespace ferry::cuda {

// Throws for a CUDA runtime error: ResourceExhaustedError when out of memory, else InternalError; `what` names
// the call and the node.
void ThrowCudaError(cudaError_t err, const std::string& what);
inline void Check(cudaError_t err, const char* call, const std::string& who) {
  if (err != cudaSuccess) ThrowCudaError(err, who + ": " + call);
}
#define FERRY_CUDA_CHECK(call, who) ::ferry::cuda::Check((call), #call, (who))

// The stream of the calling thread on `device` (made on first use, non-blocking, reused by later threads once
// this one exits): one stream per host thread, so each session run is ordered on its own stream.
cudaStream_t ThreadStream(int device);
// Makes `device` current for the calling thread.
void UseDevice(int device);

// A tensor of `shape` in device memory of `device`, stream-ordered on `stream` (the device's memory pool, which
// keeps freed blocks for reuse: steady-state runs do not call the driver). Elements are not initialised.
Tensor DeviceTensor(int device, cudaStream_t stream, DataType dtype, const Shape& shape);
// Device memory for a kernel's own use (packed weights, workspaces), freed when the pointer dies.
std::shared_ptr<void> DeviceBuffer(int device, cudaStream_t stream, size_t bytes);

// A CUDA kernel: Prepare (host side, kernel.h) checks the inputs and plans the launch from their shapes (the plans
// of cuda_shapes.h, kept as the kernel's state); Compute makes the device current, runs Launch on the thread's
// stream and checks the launch.
class CudaKernel : public OpKernel {
 public:
  CudaKernel(const ir::Node& node, int device) : who_(node.Describe()), device_(device) {}
  void Compute(KernelContext& ctx) const final;

 protected:
  virtual void Launch(KernelContext& ctx, cudaStream_t stream) const = 0;
  // Allocates output `i` on the device and sets it (a shared handle to the same buffer is returned).
  Tensor Output(KernelContext& ctx, int i, cudaStream_t stream, DataType dtype, const Shape& shape) const;
  // The same with the dtype and shape Prepare declared for output `i`.
  Tensor Output(KernelContext& ctx, int i, cudaStream_t stream) const {
    const OutputSpec* o = ctx.prepared_output(i);
    if (!o || !o->is_tensor()) throw InternalError(who_ + ": output " + std::to_string(i) + " was not prepared");
    return Output(ctx, i, stream, o->dtype, o->shape);
  }
  const std::string& who() const { return who_; }
  int device() const { return device_; }

 private:
  std::string who_;
  int device_;
};

// The factory list: AddXxxFactories(list) in each kernel's file, called from cuda_kernels.cc.
using FactoryList = std::vector<std::pair<std::string, DeviceKernelFactory>>;
template <typename K>
DeviceKernelFactory Make() {
  return [](const ir::Node& n, int device) -> std::unique_ptr<OpKernel> { return std::make_unique<K>(n, device); };
}

// dst = src broadcast (numpy rules) to dst's shape, same dtype, on `stream` (data_movement.cu).
void BroadcastCopy(const Tensor& src, Tensor& dst, cudaStream_t stream, const std::string& who);

// FERRY_CUDA_TF32=1: float32 MatMul / Gemm / Conv may use TF32 tensor cores (10-bit mantissa products); off by
// default, float32 stays float32.
bool Tf32Enabled();

// Element size of the dtypes the CUDA kernels move (1, 2, 4 or 8), or 0 for others.
int ElementBytes(DataType dtype);

}  // namespace ferry::cuda
