// Type sets of ONNX Runtime's com.microsoft schemas (src/schemas/schemas_com_microsoft_*.cc), for kernels that
// register a contrib op with exactly the types its schema allows.
#pragma once

#include <vector>

#include "ferry/dtype.h"

namespace ferry::ref {

// ONNX's all_tensor_types() as ONNX Runtime's contrib schemas use it: IR 4's tensor types, no bfloat16.
inline std::vector<DataType> MsAllTensorTypes() {
  return {DataType::kUint8,  DataType::kUint16, DataType::kUint32, DataType::kUint64,    DataType::kInt8,
          DataType::kInt16,  DataType::kInt32,  DataType::kInt64,  DataType::kFloat16,   DataType::kFloat,
          DataType::kDouble, DataType::kString, DataType::kBool,   DataType::kComplex64, DataType::kComplex128};
}

// com.microsoft::Trilu's T: the fixed-size real types, bool and bfloat16 (no string, no complex).
inline std::vector<DataType> MsTriluTypes() {
  return {DataType::kFloat16, DataType::kFloat,  DataType::kDouble, DataType::kBFloat16, DataType::kUint8,
          DataType::kUint16,  DataType::kUint32, DataType::kUint64, DataType::kInt8,     DataType::kInt16,
          DataType::kInt32,   DataType::kInt64,  DataType::kBool};
}

}  // namespace ferry::ref
