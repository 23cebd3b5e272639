#include "ferry/dtype.h"

#include <array>

namespace ferry {
namespace {

struct DataTypeInfo {
  std::string_view name;
  std::string_view onnx_name;
  int bits;
};

constexpr std::array<DataTypeInfo, kMaxDataTypeValue + 1> kInfo = {{
    {"undefined", "undefined", 0},
    {"float32", "float", 32},
    {"uint8", "uint8", 8},
    {"int8", "int8", 8},
    {"uint16", "uint16", 16},
    {"int16", "int16", 16},
    {"int32", "int32", 32},
    {"int64", "int64", 64},
    {"string", "string", 0},
    {"bool", "bool", 8},
    {"float16", "float16", 16},
    {"float64", "double", 64},
    {"uint32", "uint32", 32},
    {"uint64", "uint64", 64},
    {"complex64", "complex64", 64},
    {"complex128", "complex128", 128},
    {"bfloat16", "bfloat16", 16},
    {"float8e4m3fn", "float8e4m3fn", 8},
    {"float8e4m3fnuz", "float8e4m3fnuz", 8},
    {"float8e5m2", "float8e5m2", 8},
    {"float8e5m2fnuz", "float8e5m2fnuz", 8},
    {"uint4", "uint4", 4},
    {"int4", "int4", 4},
    {"float4e2m1", "float4e2m1", 4},
    {"float8e8m0", "float8e8m0", 8},
    {"uint2", "uint2", 2},
    {"int2", "int2", 2},
}};

}  // namespace

bool IsKnownDataType(int32_t v) { return v > 0 && v <= kMaxDataTypeValue; }

std::string_view DataTypeName(DataType t) {
  auto v = static_cast<int32_t>(t);
  return IsKnownDataType(v) ? kInfo[static_cast<size_t>(v)].name : std::string_view("undefined");
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (int32_t v = 1; v <= kMaxDataTypeValue; ++v) {
    const auto& info = kInfo[static_cast<size_t>(v)];
    if (info.name == name || info.onnx_name == name) return static_cast<DataType>(v);
  }
  return std::nullopt;
}

int DataTypeBits(DataType t) {
  auto v = static_cast<int32_t>(t);
  return IsKnownDataType(v) ? kInfo[static_cast<size_t>(v)].bits : 0;
}

bool IsFloatingPoint(DataType t) {
  switch (t) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1:
      return true;
    default:
      return false;
  }
}

bool IsSignedInteger(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt4:
    case DataType::kInt2:
      return true;
    default:
      return false;
  }
}

bool IsInteger(DataType t) {
  switch (t) {
    case DataType::kUint8:
    case DataType::kUint16:
    case DataType::kUint32:
    case DataType::kUint64:
    case DataType::kUint4:
    case DataType::kUint2:
      return true;
    default:
      return IsSignedInteger(t);
  }
}

bool IsSubByte(DataType t) {
  int bits = DataTypeBits(t);
  return bits > 0 && bits < 8;
}

}  // namespace ferry
