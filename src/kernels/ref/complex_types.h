// complex64 / complex128 as std::complex<float> / std::complex<double> for Dispatch. Kept out of common.h's type
// lists (which most kernels instantiate): only the kernels that accept complex tensors include this header.
#pragma once

#include <cmath>
#include <complex>
#include <string>
#include <type_traits>

#include "kernels/ref/common.h"

namespace ferry::ref {

template <>
struct DataTypeOf<std::complex<float>> {
  static constexpr DataType value = DataType::kComplex64;
};
template <>
struct DataTypeOf<std::complex<double>> {
  static constexpr DataType value = DataType::kComplex128;
};

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

using ComplexTypes = TypeList<std::complex<float>, std::complex<double>>;
// AllTypes plus the two complex types.
using AllTypesWithComplex = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                     uint16_t, uint32_t, uint64_t, bool, std::string, std::complex<float>,
                                     std::complex<double>>;
// NumericTypes plus the two complex types: everything with + and a product by a real weight.
using NumericTypesWithComplex = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                         uint16_t, uint32_t, uint64_t, std::complex<float>, std::complex<double>>;

// True for the element types interpolation (a weighted sum) is defined on: everything but bool and string.
inline bool IsInterpolatable(DataType t) { return t != DataType::kBool && t != DataType::kString; }

}  // namespace ferry::ref
