// Devices, streams, device memory and host <-> device copies of the `cuda` backend.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "kernels/cuda/cuda_common.h"

namespace ferry::cuda {
namespace {

// Streams are never destroyed: a device buffer frees itself on the stream it was allocated on, which may outlive
// the thread. A thread hands its streams back when it exits; a later thread takes them.
struct StreamPool {
  std::mutex mu;
  std::unordered_map<int, std::vector<cudaStream_t>> free;
};
StreamPool& Streams() {
  static auto* pool = new StreamPool();
  return *pool;
}

struct ThreadStreams {
  std::unordered_map<int, cudaStream_t> by_device;
  ~ThreadStreams() {
    StreamPool& pool = Streams();
    std::lock_guard lock(pool.mu);
    for (const auto& [device, stream] : by_device) pool.free[device].push_back(stream);
  }
};

// Pinned staging for host <-> device copies, one buffer per thread, grown as needed. `ready` is recorded after
// the last copy that used it; the buffer is reused only after that event.
struct Staging {
  void* data = nullptr;
  size_t bytes = 0;
  cudaEvent_t ready = nullptr;
  ~Staging() {
    if (ready) {
      cudaEventSynchronize(ready);
      cudaEventDestroy(ready);
    }
    if (data) cudaFreeHost(data);
  }
};

Staging& ThreadStaging() {
  thread_local Staging staging;
  return staging;
}

// The thread's staging buffer with at least `bytes`, once the previous copy through it has completed.
void* StagingFor(size_t bytes, const std::string& who) {
  Staging& staging = ThreadStaging();
  if (staging.ready) FERRY_CUDA_CHECK(cudaEventSynchronize(staging.ready), who);
  if (!staging.ready) FERRY_CUDA_CHECK(cudaEventCreateWithFlags(&staging.ready, cudaEventDisableTiming), who);
  if (staging.bytes < bytes) {
    if (staging.data) FERRY_CUDA_CHECK(cudaFreeHost(staging.data), who);
    staging.data = nullptr;
    staging.bytes = 0;
    const size_t grown = std::max(bytes, size_t{1} << 20);
    FERRY_CUDA_CHECK(cudaMallocHost(&staging.data, grown), who);
    staging.bytes = grown;
  }
  return staging.data;
}

// The copy just queued on `stream` reads or writes the staging buffer.
void RecordStaging(cudaStream_t stream, const std::string& who) {
  FERRY_CUDA_CHECK(cudaEventRecord(ThreadStaging().ready, stream), who);
}

std::once_flag& PoolConfigured(int device) {
  static std::mutex mu;
  static std::unordered_map<int, std::unique_ptr<std::once_flag>> flags;
  std::lock_guard lock(mu);
  auto& f = flags[device];
  if (!f) f = std::make_unique<std::once_flag>();
  return *f;
}

// Keep freed blocks in the device's default memory pool instead of returning them to the driver at each
// synchronization: steady-state runs then allocate without driver calls.
void ConfigurePool(int device) {
  std::call_once(PoolConfigured(device), [device] {
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) return;
    uint64_t threshold = UINT64_MAX;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
  });
}

}  // namespace

void ThrowCudaError(cudaError_t err, const std::string& what) {
  cudaGetLastError();  // clear a sticky launch error so later calls report their own
  const std::string msg = what + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  if (err == cudaErrorMemoryAllocation) throw ResourceExhaustedError(msg);
  throw InternalError(msg);
}

DeviceInfo QueryDevice(int device) {
  DeviceInfo info;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    info.absent_reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
    return info;
  }
  if (device < 0 || device >= count) {
    info.absent_reason = "the CUDA runtime sees " + std::to_string(count) + " device(s)";
    return info;
  }
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, device);
  if (perr != cudaSuccess) {
    info.absent_reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(perr);
    return info;
  }
  info.present = true;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.name = prop.name;
  info.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  return info;
}

void UseDevice(int device) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device) return;
  FERRY_CUDA_CHECK(cudaSetDevice(device), "cuda:" + std::to_string(device));
}

cudaStream_t ThreadStream(int device) {
  thread_local ThreadStreams mine;
  auto it = mine.by_device.find(device);
  if (it != mine.by_device.end()) return it->second;
  cudaStream_t stream = nullptr;
  {
    StreamPool& pool = Streams();
    std::lock_guard lock(pool.mu);
    auto& free = pool.free[device];
    if (!free.empty()) {
      stream = free.back();
      free.pop_back();
    }
  }
  if (!stream) {
    UseDevice(device);
    ConfigurePool(device);
    FERRY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cuda:" + std::to_string(device));
  }
  mine.by_device[device] = stream;
  return stream;
}

std::shared_ptr<void> DeviceBuffer(int device, cudaStream_t stream, size_t bytes) {
  if (bytes == 0) return std::shared_ptr<void>(nullptr, [](void*) {});
  UseDevice(device);
  void* p = nullptr;
  FERRY_CUDA_CHECK(cudaMallocAsync(&p, bytes, stream),
                   "cuda:" + std::to_string(device) + ": allocating " + std::to_string(bytes) + " bytes");
  return std::shared_ptr<void>(p, [device, stream](void* q) {
    int current = -1;
    cudaGetDevice(&current);
    if (current != device) cudaSetDevice(device);
    cudaFreeAsync(q, stream);  // a destructor: nothing to report to
  });
}

Tensor DeviceTensor(int device, cudaStream_t stream, DataType dtype, const Shape& shape) {
  const int bytes = ElementBytes(dtype);
  if (bytes == 0) throw UnsupportedError("cuda: no device tensors of " + std::string(DataTypeName(dtype)));
  const int64_t n = ShapeElementCount(shape);
  auto buffer = DeviceBuffer(device, stream, static_cast<size_t>(n) * static_cast<size_t>(bytes));
  void* data = buffer.get();
  return Tensor::Wrap(dtype, shape, std::move(buffer), data);
}

int ElementBytes(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat: case DataType::kInt32: case DataType::kUint32: return 4;
    case DataType::kDouble: case DataType::kInt64: case DataType::kUint64: return 8;
    case DataType::kFloat16: case DataType::kBFloat16: case DataType::kInt16: case DataType::kUint16: return 2;
    case DataType::kInt8: case DataType::kUint8: case DataType::kBool: return 1;
    default: return 0;
  }
}

void CudaKernel::Compute(KernelContext& ctx) const {
  UseDevice(device_);
  cudaStream_t stream = ThreadStream(device_);
  Launch(ctx, stream);
  FERRY_CUDA_CHECK(cudaGetLastError(), who_ + " (kernel launch)");
}

Tensor CudaKernel::Output(KernelContext& ctx, int i, cudaStream_t stream, DataType dtype, const Shape& shape) const {
  Tensor t = DeviceTensor(device_, stream, dtype, shape);
  ctx.SetOutput(i, Value(t));
  return t;
}

Value CopyToDevice(int device, const Value& host_value) {
  const std::string who = "copy to cuda:" + std::to_string(device);
  if (!host_value.is_tensor()) throw UnsupportedError(who + ": only tensors move to the GPU (not sequences or optionals)");
  const Tensor& h = host_value.tensor();
  UseDevice(device);
  cudaStream_t stream = ThreadStream(device);
  Tensor d = DeviceTensor(device, stream, h.dtype(), h.shape());
  const size_t bytes = h.nbytes();
  if (bytes > 0) {
    void* staging = StagingFor(bytes, who);
    std::memcpy(staging, h.raw_data(), bytes);
    FERRY_CUDA_CHECK(cudaMemcpyAsync(d.raw_data(), staging, bytes, cudaMemcpyHostToDevice, stream), who);
    RecordStaging(stream, who);
  }
  // A value copied on this thread may be read on another thread's stream (initializers copied at session
  // creation): it must be complete before this returns.
  FERRY_CUDA_CHECK(cudaStreamSynchronize(stream), who);
  return Value(d);
}

Value CopyToHost(int device, const Value& device_value) {
  const std::string who = "copy from cuda:" + std::to_string(device);
  if (!device_value.is_tensor()) throw InternalError(who + ": not a tensor");
  const Tensor& d = device_value.tensor();
  UseDevice(device);
  cudaStream_t stream = ThreadStream(device);
  Tensor h = Tensor::Uninitialized(d.dtype(), d.shape());
  const size_t bytes = h.nbytes();
  if (bytes > 0) {
    void* staging = StagingFor(bytes, who);
    FERRY_CUDA_CHECK(cudaMemcpyAsync(staging, d.raw_data(), bytes, cudaMemcpyDeviceToHost, stream), who);
    RecordStaging(stream, who);
    FERRY_CUDA_CHECK(cudaStreamSynchronize(stream), who);
    std::memcpy(h.raw_data(), staging, bytes);
  } else {
    FERRY_CUDA_CHECK(cudaStreamSynchronize(stream), who);
  }
  return Value(h);
}

}  // namespace ferry::cuda
