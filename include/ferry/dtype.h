// Element data types. Values equal ONNX's TensorProto.DataType so conversion is a cast.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ferry {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

inline constexpr int32_t kMaxDataTypeValue = 26;

// True when `v` is one of the enumerators above (other than kUndefined).
bool IsKnownDataType(int32_t v);
// Short lower-case name: "float32", "float16", "bfloat16", "int64", "bool", "string", "float8e4m3fn", "int4", ...
std::string_view DataTypeName(DataType t);
// Accepts DataTypeName() spellings and ONNX's ("float", "double").
std::optional<DataType> DataTypeFromName(std::string_view name);
// Storage bits per element: 4 for int4/uint4/float4e2m1, 2 for int2/uint2, 0 for string.
int DataTypeBits(DataType t);
bool IsFloatingPoint(DataType t);  // float, double, float16, bfloat16, float8*, float4
bool IsInteger(DataType t);        // signed or unsigned integer types incl. int4/int2
bool IsSignedInteger(DataType t);
bool IsSubByte(DataType t);

}  // namespace ferry
