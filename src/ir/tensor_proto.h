// Conversion between ONNX TensorProto (and Sequence/Optional protos) and ferry::Tensor / ferry::Value.
// Everything read here is untrusted: sizes, dtypes and external-data paths are validated completely.
#pragma once

#include <cstdint>
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

// What a TensorProto holds, validated completely without copying or reading its data (ValidateTensorProto).
struct TensorProtoInfo {
  DataType dtype = DataType::kUndefined;
  Shape shape;
  int64_t elements = 0;
  uint64_t bytes = 0;  // the size of its data (0 for strings)
};

// Everything TensorFromProto checks, without allocating or reading the data: a known data type, non-negative
// dims whose element count fits in int64, no segment, and data that matches the shape: `raw_data` or the typed
// field holding exactly the elements, strings for a string tensor, or external data (ValidateExternalData).
// Throws InvalidModelError naming `options.where`. `ferry check`, which loads no weights, validates every
// initializer it skips with this, so it refuses what a session's load would.
TensorProtoInfo ValidateTensorProto(const onnx::TensorProto& proto, const TensorLoadOptions& options);
// The same for a SparseTensorProto, of the dense tensor it stands for: values 1-D, indices int64 of shape [NNZ]
// or [NNZ, rank], a fixed-size element type. The indices' values are range-checked when it is densified.
TensorProtoInfo ValidateSparseTensorProto(const onnx::SparseTensorProto& proto, const TensorLoadOptions& options);

// Where a tensor's external data is, as ValidateExternalData checked it.
struct ExternalDataRef {
  std::string path;  // resolved, inside options.base_dir
  uint64_t offset = 0, length = 0;
};
// Validates the external data reference of `proto`, whose data is `bytes` long, without reading it: a `location`
// relative to `options.base_dir` that stays inside it (ResolveExternalDataPath), naming a regular file (a FIFO or
// device is refused without ever blocking: core/regular_file.h), whole non-negative `offset` and `length`,
// `length` (when absent: the rest of the file) equal to `bytes`, and offset + length within the file. A string
// tensor cannot have external data. Throws InvalidModelError naming `options.where`, the path and the problem.
ExternalDataRef ValidateExternalData(const onnx::TensorProto& proto, uint64_t bytes, const TensorLoadOptions& options);

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
