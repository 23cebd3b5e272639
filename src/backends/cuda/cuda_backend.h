// The `cuda` backend: NVIDIA GPUs through cuDNN (convolution, pooling), cuBLAS/cuBLASLt (MatMul, Gemm) and Ferry's
// own kernels (elementwise, reductions, Softmax, LayerNormalization, data movement), docs/cuda.md. Its kernel
// declarations are data compiled on every machine (src/kernels/cuda_defs/), so placement questions (`ferry ops
// --backend cuda`, `ferry check --backends cuda,cpu --cc 8.0`) are answered without a GPU; the kernels exist only
// in builds with the CUDA toolkit (FERRY_CUDA=AUTO finds it). A session that asks for `cuda` on a machine
// without its GPU, or in a build without CUDA, fails with UnsupportedError naming the device.
#pragma once

#include <mutex>
#include <optional>

#include "backends/backend.h"

namespace ferry {

class CudaBackend : public Backend {
 public:
  // "cuda" runs on device 0; "cuda:N" on device N.
  explicit CudaBackend(int device_id = 0);
  const std::string& name() const override { return name_; }
  std::string device() const override { return "cuda:" + std::to_string(device_id_); }
  const KernelRegistry& kernels() const override { return registry_; }
  int compute_capability() const override;
  void RequireDevice() const override;
  Value CopyToDevice(const Value& host_value) const override;
  Value CopyToHost(const Value& device_value) const override;

  int device_id() const { return device_id_; }
  // True when this build has the CUDA kernels (FERRY_CUDA found the toolkit).
  static bool Built();
  // The names of the kernel factories src/kernels/cuda/ provides (empty without CUDA): each must match one declaration.
  static std::vector<std::string> FactoryNames();
  // "no GPU" reasons, or "" when the device is present (queried once, cached).
  std::string Unavailable() const;

 private:
  int device_id_;
  std::string name_;
  KernelRegistry registry_;
  mutable std::once_flag queried_;
  mutable int capability_ = 0;
  mutable std::string unavailable_;
};

// The device id named by a backend name: "cuda" -> 0, "cuda:3" -> 3; nullopt for other names or a bad id.
std::optional<int> CudaDeviceOfBackendName(std::string_view name);

}  // namespace ferry
