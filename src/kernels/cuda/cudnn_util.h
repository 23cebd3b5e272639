// cuDNN helpers of the Conv and pooling kernels: status checks, the calling thread's handle, descriptors as RAII.
#pragma once

#include <cudnn.h>

#include <string>

#include "kernels/cuda/cuda_common.h"

namespace ferry::cuda {

void CheckCudnn(cudnnStatus_t s, const char* call, const std::string& who);
#define FERRY_CUDNN_CHECK(call, who) ::ferry::cuda::CheckCudnn((call), #call, (who))

// The calling thread's cuDNN handle on `device`, bound to `stream`.
cudnnHandle_t CudnnHandle(int device, cudaStream_t stream, const std::string& who);
cudnnDataType_t CudnnType(DataType dt, const std::string& who);

// A 4-D NCHW tensor descriptor.
class TensorDesc {
 public:
  TensorDesc(cudnnDataType_t t, int n, int c, int h, int w, const std::string& who);
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

// Bytes cuDNN may use as convolution workspace: FERRY_CUDA_WORKSPACE (bytes; K/M/G suffixes) or 256 MiB.
size_t CudnnWorkspaceLimit();

}  // namespace ferry::cuda
