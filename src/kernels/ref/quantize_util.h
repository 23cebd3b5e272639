// Shared by QuantizeLinear and DequantizeLinear: element access for every quantized type (8/16/32-bit
// integers, int4/uint4/int2/uint2 packed low bits first, float8 and float4 codes) and the layout of the scale /
// zero-point parameters (per tensor, per axis, or blocked along an axis with `block_size`, opset 21+).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/float8.h"
#include "kernels/ref/common.h"

namespace ferry::ref {

// Reads element i of a tensor of any numeric or quantized type as double.
inline double QuantElementAsDouble(const Tensor& t, int64_t i) {
  const void* d = t.raw_data();
  switch (t.dtype()) {
    case DataType::kFloat: return static_cast<const float*>(d)[i];
    case DataType::kDouble: return static_cast<const double*>(d)[i];
    case DataType::kFloat16: return static_cast<float>(static_cast<const Float16*>(d)[i]);
    case DataType::kBFloat16: return static_cast<float>(static_cast<const BFloat16*>(d)[i]);
    case DataType::kInt8: return static_cast<const int8_t*>(d)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(d)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(d)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(d)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(d)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(d)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(d)[i]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(d)[i]);
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kInt2:
    case DataType::kUint2:
      return static_cast<double>(SubByteToInt(t.dtype(), ReadSubByte(d, DataTypeBits(t.dtype()), i)));
    case DataType::kFloat4E2M1: return SmallFloatToFloat(t.dtype(), ReadSubByte(d, 4, i));
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return SmallFloatToFloat(t.dtype(), static_cast<const uint8_t*>(d)[i]);
    default: return 0.0;
  }
}

inline std::vector<double> QuantTensorAsDoubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) out[static_cast<size_t>(i)] = QuantElementAsDouble(t, i);
  return out;
}

// Where each element of x finds its scale / zero point. x is viewed as [outer, dim, inner] around `axis`;
// the parameter index of element (o, a, i) is base(o, a) + i * inner_step.
struct QuantLayout {
  enum class Mode { kTensor, kAxis, kBlocked };
  Mode mode = Mode::kTensor;
  int64_t outer = 1, dim = 1, inner = 1;
  int64_t block = 0, blocks = 1;  // kBlocked: block size and blocks along the axis

  int64_t Base(int64_t o, int64_t a) const {
    switch (mode) {
      case Mode::kTensor: return 0;
      case Mode::kAxis: return a;
      case Mode::kBlocked: return (o * blocks + a / block) * inner;
    }
    return 0;
  }
  int64_t InnerStep() const { return mode == Mode::kBlocked ? 1 : 0; }
};

// Validates the scale (and zero point, which must have the scale's shape) against x and returns the layout.
// `param` names the scale input in messages ("y_scale" / "x_scale").
inline QuantLayout MakeQuantLayout(const Shape& x_shape, const Tensor& scale, const Tensor* zero_point, int64_t axis,
                                   int64_t block_size, const std::string& what, const std::string& param) {
  // A per-tensor zero point may be a scalar or a one-element 1-D tensor, whatever the scale's form.
  const bool zp_matches = !zero_point || zero_point->shape() == scale.shape() ||
                          (zero_point->size() == 1 && scale.size() == 1 && block_size <= 0);
  if (!zp_matches) {
    throw InvalidArgumentError(what + ": the zero point shape " + ShapeToString(zero_point->shape()) +
                               " differs from the '" + param + "' shape " + ShapeToString(scale.shape()));
  }
  QuantLayout l;
  int64_t total = ShapeElementCount(x_shape);
  l.dim = total;
  const bool scalar_like = scale.rank() == 0 || (scale.size() == 1 && block_size <= 0);
  if (scalar_like) {
    if (scale.size() != 1) {
      throw InvalidArgumentError(what + ": input '" + param + "' is empty");
    }
    l.mode = QuantLayout::Mode::kTensor;
    l.outer = 1;
    l.inner = 1;
    return l;
  }
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  const int64_t ax = NormalizeAxis(axis, rank, what);
  l.outer = 1;
  l.inner = 1;
  for (int64_t d = 0; d < ax; ++d) l.outer *= x_shape[static_cast<size_t>(d)];
  l.dim = x_shape[static_cast<size_t>(ax)];
  for (int64_t d = ax + 1; d < rank; ++d) l.inner *= x_shape[static_cast<size_t>(d)];
  if (block_size <= 0) {
    if (scale.rank() != 1 || scale.dim(0) != l.dim) {
      throw InvalidArgumentError(what + ": per-axis input '" + param + "' must be 1-D with " +
                                 std::to_string(l.dim) + " elements (x dim " + std::to_string(ax) + "), got " +
                                 ShapeToString(scale.shape()));
    }
    l.mode = QuantLayout::Mode::kAxis;
    return l;
  }
  l.mode = QuantLayout::Mode::kBlocked;
  l.block = block_size;
  l.blocks = (l.dim + block_size - 1) / block_size;
  bool ok = scale.rank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d) {
    const int64_t want = d == ax ? l.blocks : x_shape[static_cast<size_t>(d)];
    ok = scale.dim(d) == want;
  }
  if (!ok) {
    Shape want(x_shape);
    want[static_cast<size_t>(ax)] = l.blocks;
    throw InvalidArgumentError(what + ": blocked input '" + param + "' (block_size " + std::to_string(block_size) +
                               ", axis " + std::to_string(ax) + ") must have shape " + ShapeToString(want) +
                               ", got " + ShapeToString(scale.shape()));
  }
  return l;
}

// Runs fn(element_index, param_index) over every element of x in order.
template <typename Fn>
void ForEachQuantElement(const QuantLayout& l, Fn&& fn) {
  const int64_t step = l.InnerStep();
  int64_t e = 0;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t a = 0; a < l.dim; ++a) {
      const int64_t base = l.Base(o, a);
      for (int64_t i = 0; i < l.inner; ++i) fn(e++, base + i * step);
    }
  }
}

}  // namespace ferry::ref
