#include "ir/tensor_proto.h"

#include <onnx/onnx_pb.h>  // must precede onnx-data_pb.h: it defines ONNX_API
#include <onnx/onnx-data_pb.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>

#include "core/parse_number.h"
#include "core/regular_file.h"
#include "ferry/error.h"

namespace ferry::ir {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void Bad(const TensorLoadOptions& o, const std::string& what) {
  throw InvalidModelError((o.where.empty() ? std::string("tensor") : o.where) + ": " + what);
}

template <typename Src, typename Dst>
void CopyConvert(const google::protobuf::RepeatedField<Src>& src, Dst* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<Dst>(src.Get(static_cast<int>(i)));
}

std::string TypeAndShape(DataType dtype, const Shape& shape) {
  return "shape " + ShapeToString(shape) + " of " + std::string(DataTypeName(dtype));
}

// Reads the external data reference of `proto` and checks it (ValidateExternalData); `file` is left open on the
// data file.
ExternalDataRef OpenExternalData(const onnx::TensorProto& proto, uint64_t bytes, const TensorLoadOptions& o,
                                 RegularFile& file) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      const std::optional<int64_t> v = ParseInt64(kv.value());
      if (!v) Bad(o, "external data field '" + kv.key() + "' has a non-numeric value '" + kv.value() + "'");
      (kv.key() == "offset" ? offset : length) = *v;
    }
  }
  if (location.empty()) Bad(o, "external data has no location");
  if (o.base_dir.empty()) Bad(o, "external data '" + location + "' cannot be used when the model is loaded from bytes");
  if (offset < 0 || length < -1) Bad(o, "external data '" + location + "' has a negative offset or length");
  ExternalDataRef ref;
  ref.path = ResolveExternalDataPath(o.base_dir, location, o.where);
  file = RegularFile::Open(ref.path);
  if (!file.ok()) Bad(o, "external data file '" + ref.path + "' " + file.error());
  const uint64_t size = file.size();
  ref.offset = static_cast<uint64_t>(offset);
  if (ref.offset > size) {
    Bad(o, "external data offset " + std::to_string(offset) + " is past the end of '" + ref.path + "' (" +
               std::to_string(size) + " bytes)");
  }
  ref.length = length < 0 ? size - ref.offset : static_cast<uint64_t>(length);
  if (ref.length > size - ref.offset) {
    Bad(o, "external data '" + ref.path + "' holds " + std::to_string(size - ref.offset) + " bytes after offset " +
               std::to_string(offset) + ", need " + std::to_string(ref.length));
  }
  if (ref.length != bytes) {
    Bad(o, "external data '" + ref.path + "' gives " + std::to_string(ref.length) + " bytes at offset " +
               std::to_string(offset) + (length < 0 ? " (the rest of the file: no length given)" : "") + ", " +
               TypeAndShape(static_cast<DataType>(proto.data_type()), Shape(proto.dims().begin(), proto.dims().end())) +
               " needs " + std::to_string(bytes));
  }
  return ref;
}

// Which typed field holds a tensor's values when it has neither raw_data nor external data, and how many values
// that field must hold.
enum class TypedField { kFloat, kDouble, kInt32, kInt64, kUint64 };
struct TypedLayout {
  TypedField field;
  const char* name;
  uint64_t values;
};

TypedLayout TypedLayoutOf(DataType dtype, int64_t n, uint64_t bytes) {
  const auto count = static_cast<uint64_t>(n);
  switch (dtype) {
    case DataType::kFloat: return {TypedField::kFloat, "float_data", count};
    case DataType::kComplex64: return {TypedField::kFloat, "float_data", 2 * count};
    case DataType::kDouble: return {TypedField::kDouble, "double_data", count};
    case DataType::kComplex128: return {TypedField::kDouble, "double_data", 2 * count};
    case DataType::kInt64: return {TypedField::kInt64, "int64_data", count};
    case DataType::kUint32:
    case DataType::kUint64: return {TypedField::kUint64, "uint64_data", count};
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUint2: return {TypedField::kInt32, "int32_data", bytes};  // one packed byte per int32
    default: return {TypedField::kInt32, "int32_data", count};                // every other fixed-size type
  }
}

int64_t TypedFieldSize(const onnx::TensorProto& proto, TypedField f) {
  switch (f) {
    case TypedField::kFloat: return proto.float_data_size();
    case TypedField::kDouble: return proto.double_data_size();
    case TypedField::kInt32: return proto.int32_data_size();
    case TypedField::kInt64: return proto.int64_data_size();
    case TypedField::kUint64: return proto.uint64_data_size();
  }
  return 0;
}

// ValidateTensorProto; with `external` non-null, the external data file is left open in it.
TensorProtoInfo Validate(const onnx::TensorProto& proto, const TensorLoadOptions& o, RegularFile* external,
                         ExternalDataRef* ref) {
  TensorProtoInfo info;
  const int32_t dt = proto.data_type();
  if (!IsKnownDataType(dt)) Bad(o, "unknown data type " + std::to_string(dt));
  info.dtype = static_cast<DataType>(dt);
  info.shape.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : info.shape) {
    if (d < 0) Bad(o, "negative dimension in shape " + ShapeToString(info.shape));
  }
  try {
    info.elements = ShapeElementCount(info.shape);
  } catch (const Error& e) {
    Bad(o, e.what());
  }
  if (proto.has_segment()) Bad(o, "segmented tensors are not supported");
  const bool is_external = proto.data_location() == onnx::TensorProto::EXTERNAL;

  if (info.dtype == DataType::kString) {
    if (is_external) Bad(o, "a string tensor cannot keep its data in an external file");
    if (proto.string_data_size() != info.elements) {
      Bad(o, "string tensor of shape " + ShapeToString(info.shape) + " needs " + std::to_string(info.elements) +
                 " strings, has " + std::to_string(proto.string_data_size()));
    }
    return info;
  }
  const auto total = (static_cast<unsigned __int128>(info.elements) * DataTypeBits(info.dtype) + 7) / 8;
  if (total > std::numeric_limits<uint64_t>::max()) Bad(o, TypeAndShape(info.dtype, info.shape) + " is too large");
  info.bytes = static_cast<uint64_t>(total);

  if (is_external) {
    RegularFile file;
    ExternalDataRef r = OpenExternalData(proto, info.bytes, o, file);
    if (external) *external = std::move(file);
    if (ref) *ref = std::move(r);
    return info;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != info.bytes) {
      Bad(o, "raw data has " + std::to_string(proto.raw_data().size()) + " bytes, " +
                 TypeAndShape(info.dtype, info.shape) + " needs " + std::to_string(info.bytes));
    }
    return info;
  }
  if (info.elements == 0) return info;
  const TypedLayout layout = TypedLayoutOf(info.dtype, info.elements, info.bytes);
  const int64_t have = TypedFieldSize(proto, layout.field);
  if (static_cast<uint64_t>(have) != layout.values) {
    Bad(o, std::string(layout.name) + " holds " + std::to_string(have) + " values, " +
               TypeAndShape(info.dtype, info.shape) + " needs " + std::to_string(layout.values));
  }
  return info;
}

// Bool elements are 0 or 1 in a Tensor, whatever byte the file had.
void NormalizeBools(Tensor& t) {
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.size(); ++i) p[i] = p[i] != 0;
}

}  // namespace

std::string ResolveExternalDataPath(const std::string& base_dir, const std::string& location, const std::string& where) {
  auto fail = [&](const std::string& why) {
    throw InvalidModelError(where + ": external data path '" + location + "' " + why);
  };
  fs::path loc(location);
  if (location.empty()) fail("is empty");
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) fail("is absolute; it must be relative to the model's directory");
  for (const auto& part : loc) {
    if (part == "..") fail("contains '..'; it must stay inside the model's directory");
  }
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir.empty() ? "." : base_dir), ec);
  fs::path full = fs::weakly_canonical(base / loc, ec);
  if (ec) fail("cannot be resolved: " + ec.message());
  auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") fail("leaves the model's directory (through a symbolic link)");
  return full.string();
}

TensorProtoInfo ValidateTensorProto(const onnx::TensorProto& proto, const TensorLoadOptions& o) {
  return Validate(proto, o, nullptr, nullptr);
}

ExternalDataRef ValidateExternalData(const onnx::TensorProto& proto, uint64_t bytes, const TensorLoadOptions& o) {
  RegularFile file;
  return OpenExternalData(proto, bytes, o, file);
}

Tensor TensorFromProto(const onnx::TensorProto& proto, const TensorLoadOptions& o) {
  RegularFile external;
  ExternalDataRef ref;
  const TensorProtoInfo info = Validate(proto, o, &external, &ref);
  const DataType dtype = info.dtype;
  const int64_t n = info.elements;
  if (dtype == DataType::kString) {
    Tensor t(dtype, info.shape);
    for (int64_t i = 0; i < n; ++i) t.strings()[i] = proto.string_data(static_cast<int>(i));
    return t;
  }
  if (external.ok()) {
    Tensor t = Tensor::Uninitialized(dtype, info.shape);  // every byte is read next
    const std::string err = external.ReadAt(ref.offset, t.raw_data(), static_cast<size_t>(info.bytes));
    if (!err.empty()) Bad(o, "cannot read external data file '" + ref.path + "': " + err);
    if (dtype == DataType::kBool) NormalizeBools(t);
    return t;
  }
  if (proto.has_raw_data()) {
    Tensor t = Tensor::Uninitialized(dtype, info.shape);  // every byte is written next
    if (info.bytes) std::memcpy(t.raw_data(), proto.raw_data().data(), static_cast<size_t>(info.bytes));
    if (dtype == DataType::kBool) NormalizeBools(t);
    return t;
  }
  Tensor t(dtype, info.shape);
  if (n == 0) return t;
  const TypedLayout layout = TypedLayoutOf(dtype, n, info.bytes);
  const auto values = static_cast<int64_t>(layout.values);
  switch (dtype) {
    case DataType::kFloat:
    case DataType::kComplex64: CopyConvert(proto.float_data(), t.data<float>(), values); break;
    case DataType::kDouble:
    case DataType::kComplex128: CopyConvert(proto.double_data(), t.data<double>(), values); break;
    case DataType::kInt64: CopyConvert(proto.int64_data(), t.data<int64_t>(), values); break;
    case DataType::kUint32: CopyConvert(proto.uint64_data(), t.data<uint32_t>(), values); break;
    case DataType::kUint64: CopyConvert(proto.uint64_data(), t.data<uint64_t>(), values); break;
    case DataType::kInt32: CopyConvert(proto.int32_data(), t.data<int32_t>(), values); break;
    case DataType::kBool: {
      auto* p = t.data<uint8_t>();
      for (int64_t i = 0; i < values; ++i) p[i] = proto.int32_data(static_cast<int>(i)) != 0;
      break;
    }
    default:
      // The 16-bit types hold their bit pattern in the low half of each int32, the 8-bit ones in the low byte,
      // the packed ones one packed byte per int32.
      if (DataTypeBits(dtype) == 16) CopyConvert(proto.int32_data(), t.data<uint16_t>(), values);
      else if (DataTypeBits(dtype) <= 8) CopyConvert(proto.int32_data(), t.data<uint8_t>(), values);
      else Bad(o, "data type " + std::string(DataTypeName(dtype)) + " has no typed data field");
  }
  return t;
}

TensorProtoInfo ValidateSparseTensorProto(const onnx::SparseTensorProto& proto, const TensorLoadOptions& o) {
  TensorProtoInfo info;
  info.shape.assign(proto.dims().begin(), proto.dims().end());
  for (int64_t d : info.shape) {
    if (d < 0) Bad(o, "negative dimension in sparse tensor shape " + ShapeToString(info.shape));
  }
  try {
    info.elements = ShapeElementCount(info.shape);
  } catch (const Error& e) {
    Bad(o, std::string("sparse tensor: ") + e.what());
  }
  const TensorProtoInfo values = ValidateTensorProto(proto.values(), o);
  const TensorProtoInfo indices = ValidateTensorProto(proto.indices(), o);
  info.dtype = values.dtype;
  if (values.shape.size() != 1) Bad(o, "sparse tensor values must be 1-D, got shape " + ShapeToString(values.shape));
  if (indices.dtype != DataType::kInt64) Bad(o, "sparse tensor indices must be int64");
  const int64_t nnz = values.elements;
  const auto rank = static_cast<int64_t>(info.shape.size());
  const bool linear = indices.shape.size() == 1;
  if (linear ? indices.elements != nnz
             : (indices.shape.size() != 2 || indices.shape[0] != nnz || indices.shape[1] != rank)) {
    Bad(o, "sparse tensor indices shape " + ShapeToString(indices.shape) + " does not match " +
               std::to_string(nnz) + " values of rank " + std::to_string(rank));
  }
  if (DataTypeBits(info.dtype) % 8 != 0 || info.dtype == DataType::kString) {
    Bad(o, "sparse tensors of " + std::string(DataTypeName(info.dtype)) + " are not supported");
  }
  if (nnz > info.elements) {
    Bad(o, "sparse tensor has " + std::to_string(nnz) + " values, more than its shape " +
               ShapeToString(info.shape) + " holds");
  }
  info.bytes = static_cast<uint64_t>(info.elements) * static_cast<uint64_t>(DataTypeBits(info.dtype) / 8);
  return info;
}

Tensor TensorFromSparseProto(const onnx::SparseTensorProto& proto, const TensorLoadOptions& o) {
  const TensorProtoInfo info = ValidateSparseTensorProto(proto, o);  // before anything is allocated
  const Shape& shape = info.shape;
  Tensor values = TensorFromProto(proto.values(), o);
  Tensor indices = TensorFromProto(proto.indices(), o);
  Tensor dense(values.dtype(), shape);
  const int64_t nnz = values.size();
  const int64_t* idx = indices.data<int64_t>();
  const int rank = static_cast<int>(shape.size());
  const bool linear = indices.rank() == 1;
  const auto esize = static_cast<size_t>(DataTypeBits(values.dtype()) / 8);
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t flat = 0;
    if (linear) {
      flat = idx[k];
    } else {
      for (int d = 0; d < rank; ++d) {
        int64_t v = idx[k * rank + d];
        if (v < 0 || v >= shape[static_cast<size_t>(d)]) Bad(o, "sparse tensor index out of range");
        flat = flat * shape[static_cast<size_t>(d)] + v;
      }
    }
    if (flat < 0 || flat >= dense.size()) Bad(o, "sparse tensor index " + std::to_string(flat) + " out of range");
    std::memcpy(static_cast<char*>(dense.raw_data()) + flat * esize,
                static_cast<const char*>(values.raw_data()) + k * esize, esize);
  }
  return dense;
}

void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  if (!name.empty()) proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) proto->add_string_data(t.strings()[i]);
    return;
  }
  proto->set_raw_data(static_cast<const char*>(t.raw_data()), t.nbytes());
}

ferry::Value ValueFromSequenceProto(const onnx::SequenceProto& proto, const TensorLoadOptions& o) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR) {
    Bad(o, "only sequences of tensors are supported (elem_type " + std::to_string(proto.elem_type()) + ")");
  }
  TensorSequence seq;
  for (const auto& tp : proto.tensor_values()) seq.tensors.push_back(TensorFromProto(tp, o));
  if (!seq.tensors.empty()) seq.elem_type = seq.tensors.front().dtype();
  return Value(std::move(seq));
}

ferry::Value ValueFromOptionalProto(const onnx::OptionalProto& proto, const TensorLoadOptions& o) {
  Value v;
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED:
      break;
    case onnx::OptionalProto::TENSOR:
      if (proto.has_tensor_value()) v = Value(TensorFromProto(proto.tensor_value(), o));
      break;
    case onnx::OptionalProto::SEQUENCE:
      if (proto.has_sequence_value()) v = ValueFromSequenceProto(proto.sequence_value(), o);
      break;
    default:
      Bad(o, "optional of element type " + std::to_string(proto.elem_type()) + " is not supported");
  }
  v.set_optional(true);
  return v;
}

}  // namespace ferry::ir
