#include "kernels/cuda/cudnn_util.h"

#include <cstdlib>
#include <unordered_map>

namespace ferry::cuda {

void CheckCudnn(cudnnStatus_t s, const char* call, const std::string& who) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const std::string msg = who + ": " + call + " failed: " + cudnnGetErrorString(s);
  if (s == CUDNN_STATUS_ALLOC_FAILED) throw ResourceExhaustedError(msg);
  if (s == CUDNN_STATUS_NOT_SUPPORTED) throw UnsupportedError(msg);
  throw InternalError(msg);
}

cudnnHandle_t CudnnHandle(int device, cudaStream_t stream, const std::string& who) {
  struct Handles {
    std::unordered_map<int, cudnnHandle_t> by_device;
    ~Handles() {
      for (auto& [d, h] : by_device) cudnnDestroy(h);
    }
  };
  thread_local Handles handles;
  cudnnHandle_t& h = handles.by_device[device];
  if (!h) FERRY_CUDNN_CHECK(cudnnCreate(&h), who);
  FERRY_CUDNN_CHECK(cudnnSetStream(h, stream), who);
  return h;
}

cudnnDataType_t CudnnType(DataType dt, const std::string& who) {
  switch (dt) {
    case DataType::kFloat: return CUDNN_DATA_FLOAT;
    case DataType::kFloat16: return CUDNN_DATA_HALF;
    case DataType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    default: throw UnsupportedError(who + ": no cuDNN path for " + std::string(DataTypeName(dt)));
  }
}

TensorDesc::TensorDesc(cudnnDataType_t t, int n, int c, int h, int w, const std::string& who) {
  FERRY_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d_), who);
  FERRY_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, t, n, c, h, w), who);
}

size_t CudnnWorkspaceLimit() {
  static const size_t limit = [] {
    const char* v = std::getenv("FERRY_CUDA_WORKSPACE");
    if (!v || !*v) return size_t{256} << 20;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    size_t scale = 1;
    if (end && (*end == 'K' || *end == 'k')) scale = size_t{1} << 10;
    if (end && *end == 'M') scale = size_t{1} << 20;
    if (end && *end == 'G') scale = size_t{1} << 30;
    return static_cast<size_t>(n) * scale;
  }();
  return limit;
}

}  // namespace ferry::cuda
