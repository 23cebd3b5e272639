#include "ir/tensor_proto.h"

#include <onnx/onnx_pb.h>  // must precede onnx-data_pb.h: it defines ONNX_API
#include <onnx/onnx-data_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "core/parse_number.h"
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

std::string ReadExternal(const onnx::TensorProto& proto, const TensorLoadOptions& o) {
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
  std::string path = ResolveExternalDataPath(o.base_dir, location, o.where);
  std::ifstream in(path, std::ios::binary);
  if (!in) Bad(o, "cannot open external data file '" + path + "'");
  in.seekg(0, std::ios::end);
  auto size = static_cast<int64_t>(in.tellg());
  if (offset > size) Bad(o, "external data offset " + std::to_string(offset) + " is past the end of '" + path + "'");
  if (length < 0) length = size - offset;
  if (offset + length > size) {
    Bad(o, "external data '" + path + "' holds " + std::to_string(size - offset) + " bytes after offset " +
               std::to_string(offset) + ", need " + std::to_string(length));
  }
  std::string data(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(data.data(), length);
  if (!in) Bad(o, "failed to read external data file '" + path + "'");
  return data;
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

Tensor TensorFromProto(const onnx::TensorProto& proto, const TensorLoadOptions& o) {
  int32_t dt = proto.data_type();
  if (!IsKnownDataType(dt)) Bad(o, "unknown data type " + std::to_string(dt));
  auto dtype = static_cast<DataType>(dt);
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) {
    if (d < 0) Bad(o, "negative dimension in shape " + ShapeToString(shape));
  }
  int64_t n = 0;
  try {
    n = ShapeElementCount(shape);
  } catch (const Error& e) {
    Bad(o, e.what());
  }
  if (proto.has_segment()) Bad(o, "segmented tensors are not supported");

  std::string external;
  const std::string* raw = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    external = ReadExternal(proto, o);
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }

  if (dtype == DataType::kString) {
    if (proto.string_data_size() != n) {
      Bad(o, "string tensor of shape " + ShapeToString(shape) + " needs " + std::to_string(n) + " strings, has " +
                 std::to_string(proto.string_data_size()));
    }
    Tensor t(dtype, shape);
    for (int64_t i = 0; i < n; ++i) t.strings()[i] = proto.string_data(static_cast<int>(i));
    return t;
  }

  // Check the byte count before allocating, so a huge declared shape with no data fails cheaply.
  auto expect_count = [&](int64_t have, const char* field) {
    if (have != n) {
      Bad(o, std::string(field) + " holds " + std::to_string(have) + " values, shape " + ShapeToString(shape) +
                 " of " + std::string(DataTypeName(dtype)) + " needs " + std::to_string(n));
    }
  };
  const int bits = DataTypeBits(dtype);
  const auto expected_bytes = static_cast<size_t>((static_cast<unsigned __int128>(n) * bits + 7) / 8);
  if (raw) {
    if (raw->size() != expected_bytes) {
      Bad(o, "raw data has " + std::to_string(raw->size()) + " bytes, shape " + ShapeToString(shape) + " of " +
                 std::string(DataTypeName(dtype)) + " needs " + std::to_string(expected_bytes));
    }
    Tensor t = Tensor::Uninitialized(dtype, shape);  // every byte is written next
    if (expected_bytes) std::memcpy(t.raw_data(), raw->data(), expected_bytes);
    return t;
  }
  if (n == 0) return Tensor(dtype, shape);

  switch (dtype) {
    case DataType::kFloat: {
      expect_count(proto.float_data_size(), "float_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.float_data(), t.data<float>(), n);
      return t;
    }
    case DataType::kComplex64: {
      expect_count(proto.float_data_size() / 2, "float_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.float_data(), t.data<float>(), 2 * n);
      return t;
    }
    case DataType::kDouble: {
      expect_count(proto.double_data_size(), "double_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.double_data(), t.data<double>(), n);
      return t;
    }
    case DataType::kComplex128: {
      expect_count(proto.double_data_size() / 2, "double_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.double_data(), t.data<double>(), 2 * n);
      return t;
    }
    case DataType::kInt64: {
      expect_count(proto.int64_data_size(), "int64_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.int64_data(), t.data<int64_t>(), n);
      return t;
    }
    case DataType::kUint32: {
      expect_count(proto.uint64_data_size(), "uint64_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.uint64_data(), t.data<uint32_t>(), n);
      return t;
    }
    case DataType::kUint64: {
      expect_count(proto.uint64_data_size(), "uint64_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.uint64_data(), t.data<uint64_t>(), n);
      return t;
    }
    case DataType::kInt32: {
      expect_count(proto.int32_data_size(), "int32_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.int32_data(), t.data<int32_t>(), n);
      return t;
    }
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      expect_count(proto.int32_data_size(), "int32_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.int32_data(), t.data<uint16_t>(), n);
      return t;
    }
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kBool:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: {
      expect_count(proto.int32_data_size(), "int32_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.int32_data(), t.data<uint8_t>(), n);
      return t;
    }
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUint2: {
      // Packed: each int32 holds one byte of packed elements.
      expect_count(static_cast<int64_t>(proto.int32_data_size()) * (8 / bits) >= n &&
                           static_cast<size_t>(proto.int32_data_size()) == expected_bytes
                       ? n
                       : -1,
                   "int32_data");
      Tensor t(dtype, shape);
      CopyConvert(proto.int32_data(), t.data<uint8_t>(), static_cast<int64_t>(expected_bytes));
      return t;
    }
    default:
      Bad(o, "data type " + std::string(DataTypeName(dtype)) + " has no typed data field");
  }
}

Tensor TensorFromSparseProto(const onnx::SparseTensorProto& proto, const TensorLoadOptions& o) {
  Shape shape(proto.dims().begin(), proto.dims().end());
  Tensor values = TensorFromProto(proto.values(), o);
  Tensor indices = TensorFromProto(proto.indices(), o);
  Tensor dense(values.dtype(), shape);
  int64_t nnz = values.size();
  if (values.rank() != 1) Bad(o, "sparse tensor values must be 1-D");
  if (indices.dtype() != DataType::kInt64) Bad(o, "sparse tensor indices must be int64");
  const int64_t* idx = indices.data<int64_t>();
  const int rank = static_cast<int>(shape.size());
  bool linear = indices.rank() == 1;
  if (linear ? indices.size() != nnz : (indices.rank() != 2 || indices.dim(0) != nnz || indices.dim(1) != rank)) {
    Bad(o, "sparse tensor indices shape " + ShapeToString(indices.shape()) + " does not match " +
               std::to_string(nnz) + " values of rank " + std::to_string(rank));
  }
  size_t esize = static_cast<size_t>(DataTypeBits(values.dtype()) / 8);
  if (esize == 0) Bad(o, "sparse tensors of " + std::string(DataTypeName(values.dtype())) + " are not supported");
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
