// Device-side element access for the CUDA kernels: loads to float (the compute type of float16 / bfloat16) and
// stores back, plus the dtype -> C++ type dispatch of the launchers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "ferry/dtype.h"
#include "ferry/error.h"
#include "kernels/cuda_defs/cuda_shapes.h"

namespace ferry::cuda {

template <typename T>
struct Compute {
  using type = T;
};
template <>
struct Compute<__half> {
  using type = float;
};
template <>
struct Compute<__nv_bfloat16> {
  using type = float;
};

template <typename T>
__device__ __forceinline__ typename Compute<T>::type Load(const T* p, int64_t i) {
  return static_cast<typename Compute<T>::type>(p[i]);
}
template <>
__device__ __forceinline__ float Load<__half>(const __half* p, int64_t i) { return __half2float(p[i]); }
template <>
__device__ __forceinline__ float Load<__nv_bfloat16>(const __nv_bfloat16* p, int64_t i) {
  return __bfloat162float(p[i]);
}

template <typename T, typename C>
__device__ __forceinline__ void Store(T* p, int64_t i, C v) {
  p[i] = static_cast<T>(v);
}
template <>
__device__ __forceinline__ void Store<__half, float>(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
template <>
__device__ __forceinline__ void Store<__nv_bfloat16, float>(__nv_bfloat16* p, int64_t i, float v) {
  p[i] = __float2bfloat16_rn(v);
}

// Input k's element offset for output element i of an index map.
__device__ __forceinline__ int64_t MapOffset(const IndexMap& m, int k, int64_t i) {
  int64_t off = m.base[k];
  for (int d = m.rank - 1; d >= 0; --d) {
    const int64_t q = i / m.dims[d];
    off += (i - q * m.dims[d]) * m.strides[k][d];
    i = q;
  }
  return off;
}

#define FERRY_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Calls fn(T{}) with T the device type of a float dtype (float, __half, __nv_bfloat16).
template <typename Fn>
void DispatchFloat(DataType dt, const std::string& who, Fn&& fn) {
  switch (dt) {
    case DataType::kFloat: fn(float{}); return;
    case DataType::kFloat16: fn(__half{}); return;
    case DataType::kBFloat16: fn(__nv_bfloat16{}); return;
    default: throw UnsupportedError(who + ": no CUDA kernel for " + std::string(DataTypeName(dt)));
  }
}

// Same, plus int32 and int64.
template <typename Fn>
void DispatchFloatInt(DataType dt, const std::string& who, Fn&& fn) {
  switch (dt) {
    case DataType::kInt32: fn(int32_t{}); return;
    case DataType::kInt64: fn(int64_t{}); return;
    default: DispatchFloat(dt, who, fn);
  }
}

// An unsigned integer type of each element size (data movement copies bits).
template <int Bytes>
struct Bits;
template <>
struct Bits<1> {
  using type = uint8_t;
};
template <>
struct Bits<2> {
  using type = uint16_t;
};
template <>
struct Bits<4> {
  using type = uint32_t;
};
template <>
struct Bits<8> {
  using type = uint64_t;
};

template <typename Fn>
void DispatchBits(int bytes, const std::string& who, Fn&& fn) {
  switch (bytes) {
    case 1: fn(uint8_t{}); return;
    case 2: fn(uint16_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    default: throw UnsupportedError(who + ": no CUDA data movement for this element type");
  }
}

}  // namespace ferry::cuda
