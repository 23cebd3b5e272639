// Helpers shared by the integer and quantized-linear matrix kernels (ConvInteger, QLinearConv, MatMulInteger,
// QLinearMatMul): reading zero points and scales, widening 8-bit data, and saturating requantisation.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/float16.h"
#include "ferry/tensor.h"

namespace ferry::ref {

// The values of an int8/uint8/int32 zero-point tensor widened to int32 ({0} when the input is omitted).
inline std::vector<int32_t> ReadZeroPoints(const Tensor* t, const std::string& what) {
  if (!t) return {0};
  std::vector<int32_t> out(static_cast<size_t>(t->size()));
  for (int64_t i = 0; i < t->size(); ++i) {
    switch (t->dtype()) {
      case DataType::kInt8: out[static_cast<size_t>(i)] = t->data<int8_t>()[i]; break;
      case DataType::kUint8: out[static_cast<size_t>(i)] = t->data<uint8_t>()[i]; break;
      case DataType::kInt32: out[static_cast<size_t>(i)] = t->data<int32_t>()[i]; break;
      default:
        throw UnsupportedError(what + ": zero point of type " + std::string(DataTypeName(t->dtype())) +
                               " is not supported");
    }
  }
  return out;
}

// The values of a float/float16/bfloat16 scale tensor as float.
inline std::vector<float> ReadScales(const Tensor& t, const std::string& what) {
  std::vector<float> out(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    switch (t.dtype()) {
      case DataType::kFloat: out[static_cast<size_t>(i)] = t.data<float>()[i]; break;
      case DataType::kFloat16: out[static_cast<size_t>(i)] = static_cast<float>(t.data<Float16>()[i]); break;
      case DataType::kBFloat16: out[static_cast<size_t>(i)] = static_cast<float>(t.data<BFloat16>()[i]); break;
      default:
        throw UnsupportedError(what + ": scale of type " + std::string(DataTypeName(t.dtype())) +
                               " is not supported");
    }
  }
  return out;
}

// The int8/uint8 tensor `t` widened to int32.
inline std::vector<int32_t> WidenInt8(const Tensor& t, const std::string& what) {
  std::vector<int32_t> out(static_cast<size_t>(t.size()));
  if (t.dtype() == DataType::kInt8) {
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = t.data<int8_t>()[i];
  } else if (t.dtype() == DataType::kUint8) {
    for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = t.data<uint8_t>()[i];
  } else {
    throw UnsupportedError(what + ": data type " + std::string(DataTypeName(t.dtype())) +
                           " is not supported (int8 or uint8 expected)");
  }
  return out;
}

// Requantises v (already scaled) to T: round half to even, add the zero point, saturate.
template <typename T>
T SaturateRound(double v, int32_t zero_point) {
  const double r = std::nearbyint(v) + zero_point;
  const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (!(r >= lo)) return std::numeric_limits<T>::lowest();  // also NaN
  if (r > hi) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// A scalar (one element) or per-index value from a vector read by ReadZeroPoints/ReadScales.
template <typename V>
auto PerIndex(const std::vector<V>& v, int64_t i) {
  return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)];
}

// Integer matrix products (defined in matmul_integer.cc) ---------------------------------------------------------

// The int8/uint8 matrix operand `t` widened to int32 minus its zero point. For A (per_row) the zero point is one
// value, one per row (m values, the same for every matrix of the batch) or one per row of every matrix; for B
// (per column) likewise with columns. Throws InvalidArgumentError naming `what` for any other size.
std::vector<int32_t> WidenMinusZeroPoint(const Tensor& t, const std::vector<int32_t>& zp, bool per_row, int64_t rows,
                                         int64_t cols, const std::string& what);

// Throws InvalidArgumentError naming `what` unless a zero point of `zn` values fits a matrix operand of `size`
// elements: one value, one per row of A / column of B (per_row), or one per row / column of every matrix.
void CheckZeroPointCount(int64_t zn, int64_t size, bool per_row, int64_t rows, int64_t cols, const std::string& what);

// y[batch][m×n] = a·b over the batches of `plan` (see PlanMatMul), wrapping int32 accumulation.
struct MatMulPlan;
void MatMulInt32(const MatMulPlan& plan, const int32_t* a, const int32_t* b, int32_t* y, int threads);

}  // namespace ferry::ref
