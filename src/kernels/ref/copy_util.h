// Element-type-agnostic data movement for reference kernels (Reshape, Transpose, Concat, Slice, Gather, Pad, ...).
// Kernels that only move elements work on storage words chosen by element size (DataTypeBits), not on the
// element type itself: float16 and bfloat16 move as uint16_t, complex64 as uint64_t, complex128 as Bytes16,
// strings as std::string, and sub-byte packed types (int4, uint4, float4e2m1, int2, uint2) through bit-level
// accessors.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ferry/error.h"
#include "ferry/tensor.h"

namespace ferry::ref {

// Storage word of complex128 elements.
struct Bytes16 {
  uint64_t lo = 0, hi = 0;
};

// Accessor for byte-aligned elements stored as `S` (uint8_t, uint16_t, uint32_t, uint64_t, Bytes16, std::string).
template <typename S>
struct WordAccess {
  using Value = S;
  static constexpr bool kPacked = false;
  static constexpr bool kTrivial = std::is_trivially_copyable_v<S>;

  static const Value& Get(const void* base, int64_t i) { return static_cast<const S*>(base)[i]; }
  static void Set(void* base, int64_t i, const Value& v) { static_cast<S*>(base)[i] = v; }
  static void Copy(void* dst, int64_t di, const void* src, int64_t si, int64_t n) {
    if (n <= 0) return;
    if constexpr (kTrivial) {
      std::memmove(static_cast<S*>(dst) + di, static_cast<const S*>(src) + si, static_cast<size_t>(n) * sizeof(S));
    } else {
      const S* s = static_cast<const S*>(src) + si;
      S* d = static_cast<S*>(dst) + di;
      for (int64_t k = 0; k < n; ++k) d[k] = s[k];
    }
  }
  static void Fill(void* dst, int64_t di, int64_t n, const Value& v) {
    S* d = static_cast<S*>(dst) + di;
    for (int64_t k = 0; k < n; ++k) d[k] = v;
  }
};

// Accessor for sub-byte elements packed low bits first (ONNX layout). Value is the element's raw bit pattern.
// Writes are read-modify-write of a byte: never let two threads write elements that share a byte.
template <int kBits>
struct PackedAccess {
  using Value = uint8_t;
  static constexpr bool kPacked = true;
  static constexpr bool kTrivial = true;
  static constexpr int kPerByte = 8 / kBits;
  static constexpr unsigned kMask = (1u << kBits) - 1u;

  static Value Get(const void* base, int64_t i) {
    unsigned b = static_cast<const uint8_t*>(base)[i / kPerByte];
    return static_cast<Value>((b >> ((i % kPerByte) * kBits)) & kMask);
  }
  static void Set(void* base, int64_t i, Value v) {
    uint8_t& b = static_cast<uint8_t*>(base)[i / kPerByte];
    unsigned shift = static_cast<unsigned>((i % kPerByte) * kBits);
    b = static_cast<uint8_t>((b & ~(kMask << shift)) | ((v & kMask) << shift));
  }
  static void Copy(void* dst, int64_t di, const void* src, int64_t si, int64_t n) {
    if (n <= 0) return;
    if (di % kPerByte == 0 && si % kPerByte == 0) {  // whole bytes, then the tail
      int64_t bytes = n / kPerByte;
      std::memmove(static_cast<uint8_t*>(dst) + di / kPerByte, static_cast<const uint8_t*>(src) + si / kPerByte,
                   static_cast<size_t>(bytes));
      for (int64_t k = bytes * kPerByte; k < n; ++k) Set(dst, di + k, Get(src, si + k));
      return;
    }
    if (dst == src && di > si) {  // overlapping forward move: copy backwards
      for (int64_t k = n; k-- > 0;) Set(dst, di + k, Get(src, si + k));
      return;
    }
    for (int64_t k = 0; k < n; ++k) Set(dst, di + k, Get(src, si + k));
  }
  static void Fill(void* dst, int64_t di, int64_t n, Value v) {
    for (int64_t k = 0; k < n; ++k) Set(dst, di + k, v);
  }
};

// Calls fn(Accessor{}) with the storage accessor for `dtype`; throws UnsupportedError naming `what` for types
// without a storage layout (undefined).
template <typename Fn>
void DispatchElements(DataType dtype, const std::string& what, Fn&& fn) {
  if (dtype == DataType::kString) {
    fn(WordAccess<std::string>{});
    return;
  }
  switch (DataTypeBits(dtype)) {
    case 8: fn(WordAccess<uint8_t>{}); return;
    case 16: fn(WordAccess<uint16_t>{}); return;
    case 32: fn(WordAccess<uint32_t>{}); return;
    case 64: fn(WordAccess<uint64_t>{}); return;
    case 128: fn(WordAccess<Bytes16>{}); return;
    case 4: fn(PackedAccess<4>{}); return;
    case 2: fn(PackedAccess<2>{}); return;
    default: break;
  }
  throw UnsupportedError(what + ": data type " + std::string(DataTypeName(dtype)) + " is not supported");
}

// Threads that may write disjoint element ranges of one tensor of `dtype` at once (1 for packed sub-byte types).
int WriteThreads(DataType dtype, int threads);

// Copies n elements from src[si..] to dst[di..] (element offsets; any dtype, ranges may overlap).
void CopyElements(DataType dtype, void* dst, int64_t di, const void* src, int64_t si, int64_t n);
// Sets dst[di .. di+n) to element vi of `value` (which has the same dtype).
void FillElements(DataType dtype, void* dst, int64_t di, int64_t n, const void* value, int64_t vi);

// N-D strided copy of a box of `shape`: for every index i,
//   dst[dst_off + sum_k i_k * dst_strides[k]] = src[src_off + sum_k i_k * src_strides[k]].
// Strides are in elements; source strides may be zero (broadcast) or negative (reversal). Adjacent contiguous
// dimensions are merged, contiguous rows become block copies and transposed 2-D tiles are copied in cache
// blocks. Uses up to `threads` threads (one for packed sub-byte types). dst must not overlap src.
void CopyStrided(DataType dtype, void* dst, int64_t dst_off, std::span<const int64_t> dst_strides, const void* src,
                 int64_t src_off, std::span<const int64_t> src_strides, std::span<const int64_t> shape, int threads);

// Writes `in` into `out` shifted by `begins` per dimension: out[o] = in[o - begins] where that index is inside
// `in`; every other element of out is set to element 0 of `value` (left as allocated when value is null).
// begins may be negative (cropping). out and in have the same rank and dtype.
void CopyShifted(const Tensor& in, Tensor& out, std::span<const int64_t> begins, const Tensor* value, int threads);

// Normalizes a possibly negative index against `dim`; throws InvalidArgumentError "<what>: index I is out of
// range for dimension of size D" otherwise.
inline int64_t NormalizeIndex(int64_t index, int64_t dim, const std::string& what) {
  int64_t i = index < 0 ? index + dim : index;
  if (i < 0 || i >= dim) {
    throw InvalidArgumentError(what + ": index " + std::to_string(index) + " is out of range for a dimension of size " +
                               std::to_string(dim));
  }
  return i;
}

// Index element i of an int32 or int64 tensor (caller checked the dtype with CheckIndexType).
inline int64_t IndexAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt64 ? t.data<int64_t>()[i] : static_cast<int64_t>(t.data<int32_t>()[i]);
}
// Throws InvalidArgumentError naming `what` unless t is int32 or int64.
void CheckIndexType(const Tensor& t, const std::string& what);

// Reads every element of a numeric tensor (any integer or float type, bool) as int64. Floating values are
// truncated toward zero; NaN, infinities and values outside int64 throw InvalidArgumentError naming `what`.
std::vector<int64_t> ReadIntegers(const Tensor& t, const std::string& what);
// The single element of a scalar or one-element numeric tensor, as int64 (see ReadIntegers).
int64_t ReadScalarInteger(const Tensor& t, const std::string& what);

// Shape of `t` as a string for messages: "float32[2,3]".
std::string DescribeTensor(const Tensor& t);

}  // namespace ferry::ref
