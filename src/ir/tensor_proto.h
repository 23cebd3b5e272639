// Conversion between ONNX TensorProto (and Sequence/Optional protos) and ferry::Tensor / ferry::Value.
// Everything read here is untrusted: sizes, dtypes and external-data paths are validated completely.
#pragma once

#include <string>

#include "ferry/tensor.h"
#include "ferry/value.h"

namespace onnx {
class TensorProto;
class SparseTensorProto;
class SequenceProto;
class OptionalProto;
}  // namespace onnx

namespace ferry::ir {

struct TensorLoadOptions {
  // Directory external data paths are relative to; empty forbids external data.
  std::string base_dir;
  // Used in error messages: "model 'a.onnx', initializer 'w'".
  std::string where;
};

Tensor TensorFromProto(const onnx::TensorProto& proto, const TensorLoadOptions& options);
Tensor TensorFromSparseProto(const onnx::SparseTensorProto& proto, const TensorLoadOptions& options);
// Writes dims, data_type and raw_data (string tensors: string_data).
void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

ferry::Value ValueFromSequenceProto(const onnx::SequenceProto& proto, const TensorLoadOptions& options);
ferry::Value ValueFromOptionalProto(const onnx::OptionalProto& proto, const TensorLoadOptions& options);

// Resolves an external data `location` against `base_dir`, rejecting absolute paths, `..` components and
// symlinks that leave the directory. Throws InvalidModelError naming `where`.
std::string ResolveExternalDataPath(const std::string& base_dir, const std::string& location, const std::string& where);

}  // namespace ferry::ir
