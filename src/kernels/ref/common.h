// Helpers shared by reference kernels: dtype dispatch, broadcasting, axis handling.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "ferry/tensor.h"
#include "kernels/kernel.h"

namespace ferry::ref {

// ---- element type <-> DataType ----------------------------------------------------------------------------
template <typename T>
struct DataTypeOf;
#define FERRY_DATATYPE_OF(T, E) \
  template <>                   \
  struct DataTypeOf<T> {        \
    static constexpr DataType value = DataType::E; \
  };
FERRY_DATATYPE_OF(float, kFloat)
FERRY_DATATYPE_OF(double, kDouble)
FERRY_DATATYPE_OF(Float16, kFloat16)
FERRY_DATATYPE_OF(BFloat16, kBFloat16)
FERRY_DATATYPE_OF(int8_t, kInt8)
FERRY_DATATYPE_OF(int16_t, kInt16)
FERRY_DATATYPE_OF(int32_t, kInt32)
FERRY_DATATYPE_OF(int64_t, kInt64)
FERRY_DATATYPE_OF(uint8_t, kUint8)
FERRY_DATATYPE_OF(uint16_t, kUint16)
FERRY_DATATYPE_OF(uint32_t, kUint32)
FERRY_DATATYPE_OF(uint64_t, kUint64)
FERRY_DATATYPE_OF(bool, kBool)
FERRY_DATATYPE_OF(std::string, kString)
#undef FERRY_DATATYPE_OF

template <typename T>
inline constexpr DataType kDataTypeOf = DataTypeOf<T>::value;

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Arithmetic type used to compute on T: float for the 16-bit float types, T otherwise.
template <typename T>
using Acc = std::conditional_t<kIsHalf<T>, float, T>;

// Type lists for Dispatch.
template <typename... Ts>
struct TypeList {};
using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                              uint32_t, uint64_t>;
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                          uint32_t, uint64_t, bool, std::string>;

// Calls fn(T{}) for the T in `list` whose DataType is `dtype`; throws UnsupportedError naming `what` otherwise.
//   Dispatch(FloatTypes{}, x.dtype(), ctx, [&](auto tag) { using T = decltype(tag); ... });
template <typename... Ts, typename Fn>
void Dispatch(TypeList<Ts...>, DataType dtype, const std::string& what, Fn&& fn) {
  bool done = ((dtype == kDataTypeOf<Ts> ? (fn(Ts{}), true) : false) || ...);
  if (!done) throw UnsupportedError(what + ": data type " + std::string(DataTypeName(dtype)) + " is not supported");
}
// The same in a Compute: the node's description is built only when the type is missing (the KernelDef's type
// constraints make that a registration bug).
template <typename... Ts, typename Fn>
void Dispatch(TypeList<Ts...> types, DataType dtype, const KernelContext& ctx, Fn&& fn) {
  bool done = ((dtype == kDataTypeOf<Ts> ? (fn(Ts{}), true) : false) || ...);
  if (!done) Dispatch(types, dtype, ctx.Describe(), std::forward<Fn>(fn));
}

// ---- shapes and axes ---------------------------------------------------------------------------------------

// Normalises a possibly negative axis into [0, rank); throws InvalidArgumentError naming `what` otherwise.
int64_t NormalizeAxis(int64_t axis, int64_t rank, const std::string& what);

// Row-major strides of `shape` in elements.
std::vector<int64_t> Strides(std::span<const int64_t> shape);

// Numpy-style multidirectional broadcast of several shapes; throws InvalidArgumentError naming `what`.
Shape BroadcastShapes(const std::vector<Shape>& shapes, const std::string& what);

// Iterates over every element of a broadcast output, giving each input's linear offset.
// Inner loop is a tight stride walk; fn(out_index, offsets) where offsets[k] is the offset into input k.
class BroadcastIterator {
 public:
  BroadcastIterator(const Shape& out_shape, const std::vector<Shape>& in_shapes);
  const Shape& out_shape() const { return out_; }
  int64_t size() const { return size_; }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (size_ == 0) return;
    const size_t rank = out_.size();
    const size_t k = in_strides_.size();
    std::vector<int64_t> counter(rank, 0);
    std::vector<int64_t> offsets(k, 0);
    const int64_t inner = rank ? out_[rank - 1] : 1;
    std::vector<int64_t> inner_stride(k, 0);
    for (size_t j = 0; j < k; ++j) inner_stride[j] = rank ? in_strides_[j][rank - 1] : 0;
    int64_t out_index = 0;
    std::vector<int64_t> o(k, 0);
    while (out_index < size_) {
      std::copy(offsets.begin(), offsets.end(), o.begin());
      for (int64_t i = 0; i < inner; ++i) {
        fn(out_index++, o.data());
        for (size_t j = 0; j < k; ++j) o[j] += inner_stride[j];
      }
      // advance the outer counters
      for (size_t d = rank >= 1 ? rank - 1 : 0; d-- > 0;) {
        ++counter[d];
        for (size_t j = 0; j < k; ++j) offsets[j] += in_strides_[j][d];
        if (counter[d] < out_[d]) break;
        for (size_t j = 0; j < k; ++j) offsets[j] -= in_strides_[j][d] * counter[d];
        counter[d] = 0;
      }
      if (rank <= 1) break;
    }
  }

 private:
  Shape out_;
  int64_t size_ = 0;
  std::vector<std::vector<int64_t>> in_strides_;  // per input, per output dim (0 where broadcast)
};

// Reads a 1-D integer tensor (int32 or int64) into a vector; throws InvalidArgumentError naming `what`.
std::vector<int64_t> ReadInt64s(const Tensor& t, const std::string& what);

}  // namespace ferry::ref
