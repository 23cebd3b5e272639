// See convert.h.
#include "convert.h"

#include <dlpack/dlpack.h>

#include <cstring>
#include <memory>
#include <utility>

#include "core/float8.h"
#include "ferry/error.h"

namespace ferry::python {
namespace {

// NumPy's flag for an aligned buffer (NPY_ARRAY_ALIGNED), which pybind11 does not name.
constexpr int kNpyAligned = 0x0100;
// DLPack 0.8's kDLBool, which Debian's dlpack.h (0.6) predates; torch writes it for bool tensors.
constexpr uint8_t kDLBoolCode = 6;

std::string DtypeString(const py::dtype& d) { return py::str(static_cast<const py::handle&>(d)).cast<std::string>(); }

// The Python object holding an input's memory, released under the GIL whenever the last Tensor lets it go.
std::shared_ptr<void> HoldObject(py::object o) {
  return std::shared_ptr<void>(new py::object(std::move(o)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

Tensor StringTensor(const py::array& arr, const Shape& shape, const std::string& what) {
  Tensor t(DataType::kString, shape);
  const py::array flat = py::array(arr.attr("reshape")(-1));
  const py::list items = flat.attr("tolist")();
  if (static_cast<int64_t>(items.size()) != t.size()) {
    throw InvalidArgumentError(what + ": could not read the string array's elements");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const py::handle e = items[i];
    if (py::isinstance<py::bytes>(e)) {
      t.strings()[i] = e.cast<std::string>();
    } else if (py::isinstance<py::str>(e)) {
      t.strings()[i] = e.cast<std::string>();
    } else {
      throw InvalidArgumentError(what + ": element " + std::to_string(i) + " of the string tensor is a " +
                                 py::str(e.get_type().attr("__name__")).cast<std::string>() +
                                 ", expected str or bytes");
    }
  }
  return t;
}

Tensor ArrayToTensor(py::array arr, const std::string& what) {
  const DataType t = FerryDtype(arr.dtype());
  if (t == DataType::kUndefined) {
    throw InvalidArgumentError(what + ": NumPy dtype " + DtypeString(arr.dtype()) + " has no ONNX tensor type");
  }
  Shape shape(arr.shape(), arr.shape() + arr.ndim());
  if (t == DataType::kString) return StringTensor(arr, shape, what);
  const char order = arr.dtype().attr("byteorder").cast<std::string>()[0];
  if (order == '>') arr = py::array(arr.attr("astype")(arr.dtype().attr("newbyteorder")("=")));
  if (!(arr.flags() & py::array::c_style) || !(arr.flags() & kNpyAligned)) {
    arr = py::array::ensure(arr, py::array::c_style);  // a C-contiguous copy, same dtype (ORT copies too)
    if (!arr) throw py::error_already_set();
  }
  void* data = const_cast<void*>(arr.data());
  return Tensor::Wrap(t, std::move(shape), HoldObject(arr), data);
}

DataType DlpackDtype(const DLDataType& d) {
  if (d.lanes != 1) return DataType::kUndefined;
  switch (d.code) {
    case kDLFloat:
      return d.bits == 16 ? DataType::kFloat16 : d.bits == 32 ? DataType::kFloat : d.bits == 64 ? DataType::kDouble
                                                                                              : DataType::kUndefined;
    case kDLBfloat: return d.bits == 16 ? DataType::kBFloat16 : DataType::kUndefined;
    case kDLInt:
      return d.bits == 8 ? DataType::kInt8 : d.bits == 16 ? DataType::kInt16 : d.bits == 32 ? DataType::kInt32
             : d.bits == 64 ? DataType::kInt64 : DataType::kUndefined;
    case kDLUInt:
      return d.bits == 8 ? DataType::kUint8 : d.bits == 16 ? DataType::kUint16 : d.bits == 32 ? DataType::kUint32
             : d.bits == 64 ? DataType::kUint64 : DataType::kUndefined;
    case kDLBoolCode: return d.bits == 8 ? DataType::kBool : DataType::kUndefined;
    default: return DataType::kUndefined;
  }
}

// An object with __dlpack__: read in place when contiguous and on the CPU; a strided CPU tensor is copied.
Tensor DlpackToTensor(const py::handle& obj, const std::string& what) {
  py::object cap_obj = obj.attr("__dlpack__")();
  if (!PyCapsule_IsValid(cap_obj.ptr(), "dltensor")) {
    throw InvalidArgumentError(what + ": __dlpack__() did not return an unused DLPack capsule");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap_obj.ptr(), "dltensor"));
  // From here this function owns `managed`: the capsule is marked used, and `owner` calls its deleter.
  PyCapsule_SetName(cap_obj.ptr(), "used_dltensor");
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) {
      py::gil_scoped_acquire gil;
      m->deleter(m);
    }
  });
  const DLTensor& dl = managed->dl_tensor;
  if (dl.device.device_type != kDLCPU) {
    throw InvalidArgumentError(what + ": a DLPack tensor on device type " + std::to_string(dl.device.device_type) +
                               "; Ferry's Python API reads host memory (move it to the CPU first, e.g. .cpu())");
  }
  const DataType t = DlpackDtype(dl.dtype);
  if (t == DataType::kUndefined) {
    throw InvalidArgumentError(what + ": DLPack dtype (code " + std::to_string(dl.dtype.code) + ", " +
                               std::to_string(dl.dtype.bits) + " bits, " + std::to_string(dl.dtype.lanes) +
                               " lanes) has no ONNX tensor type");
  }
  if (dl.ndim < 0) throw InvalidArgumentError(what + ": DLPack tensor of negative rank");
  Shape shape(dl.shape, dl.shape + dl.ndim);
  for (int64_t d : shape) {
    if (d < 0) throw InvalidArgumentError(what + ": DLPack tensor with a negative dimension " + ShapeToString(shape));
  }
  char* data = static_cast<char*>(dl.data) + dl.byte_offset;
  bool contiguous = true;
  if (dl.strides) {
    int64_t expect = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      if (shape[static_cast<size_t>(i)] != 1 && dl.strides[i] != expect) contiguous = false;
      expect *= shape[static_cast<size_t>(i)];
    }
  }
  if (contiguous) return Tensor::Wrap(t, std::move(shape), std::move(owner), data);
  // Strided: copy it into a C-contiguous array through a NumPy view (bfloat16 as its 16-bit pattern).
  const DataType view_type = t == DataType::kBFloat16 ? DataType::kUint16 : t;
  const py::dtype dt = NumpyDtype(view_type);
  std::vector<py::ssize_t> dims(shape.begin(), shape.end()), strides;
  for (int i = 0; i < dl.ndim; ++i) strides.push_back(dl.strides[i] * dt.itemsize());
  py::capsule keep(new std::shared_ptr<void>(owner), [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  const py::array view(dt, dims, strides, data, keep);
  Tensor copy = ArrayToTensor(py::array::ensure(view, py::array::c_style), what);
  return Tensor::Wrap(t, copy.shape(), std::shared_ptr<void>(std::make_shared<Tensor>(copy)), copy.raw_data());
}

// `hint`: the input's declared dtype (kUndefined when unknown), which a Python scalar or list is read as.
Tensor ObjectToTensor(const py::handle& obj, const std::string& what, DataType hint) {
  if (py::isinstance<py::array>(obj)) return ArrayToTensor(py::reinterpret_borrow<py::array>(obj), what);
  if (py::hasattr(obj, "__dlpack__") && py::hasattr(obj, "__dlpack_device__")) return DlpackToTensor(obj, what);
  // Scalars and nested lists, as NumPy reads them, in the declared dtype where NumPy has it.
  py::object dtype = py::none();
  if (hint != DataType::kUndefined && hint != DataType::kString) {
    try {
      dtype = NumpyDtype(hint);
    } catch (const InvalidArgumentError&) {  // no NumPy dtype: NumPy's own reading
    }
  }
  py::object arr = py::module_::import("numpy").attr("asarray")(obj, dtype);
  return ArrayToTensor(py::reinterpret_borrow<py::array>(arr), what);
}

// A tensor NumPy has no dtype for, widened exactly: bfloat16 / float8 / float4 to float32, int4 / int2 to int8,
// uint4 / uint2 to uint8.
Tensor Widened(const Tensor& t) {
  const DataType d = t.dtype();
  if (d == DataType::kBFloat16) {
    Tensor out = Tensor::Uninitialized(DataType::kFloat, t.shape());
    const auto* in = t.data<uint16_t>();
    auto* o = out.data<float>();
    for (int64_t i = 0; i < t.size(); ++i) {
      const uint32_t bits = static_cast<uint32_t>(in[i]) << 16;
      std::memcpy(&o[i], &bits, sizeof bits);
    }
    return out;
  }
  if (IsSmallFloat(d)) {
    Tensor out = Tensor::Uninitialized(DataType::kFloat, t.shape());
    const int bits = DataTypeBits(d);
    for (int64_t i = 0; i < t.size(); ++i) {
      out.data<float>()[i] = SmallFloatToFloat(d, ReadSubByte(t.raw_data(), bits, i));
    }
    return out;
  }
  if (IsSubByte(d)) {
    const bool is_signed = IsSignedInteger(d);
    Tensor out = Tensor::Uninitialized(is_signed ? DataType::kInt8 : DataType::kUint8, t.shape());
    const int bits = DataTypeBits(d);
    for (int64_t i = 0; i < t.size(); ++i) {
      const int64_t v = SubByteToInt(d, ReadSubByte(t.raw_data(), bits, i));
      if (is_signed) {
        out.data<int8_t>()[i] = static_cast<int8_t>(v);
      } else {
        out.data<uint8_t>()[i] = static_cast<uint8_t>(v);
      }
    }
    return out;
  }
  return t;
}

py::object TensorObject(Tensor t) {
  if (t.dtype() == DataType::kString) {
    py::array out(py::dtype("O"), std::vector<py::ssize_t>(t.shape().begin(), t.shape().end()));
    py::list items;
    for (int64_t i = 0; i < t.size(); ++i) {
      const std::string& s = t.strings()[i];
      PyObject* u = PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "surrogateescape");
      if (!u) throw py::error_already_set();
      items.append(py::reinterpret_steal<py::object>(u));
    }
    if (t.size() > 0) out.attr("reshape")(-1)[py::slice(0, t.size(), 1)] = items;
    return out;
  }
  t = Widened(t);
  // A buffer someone else holds (an initializer, an input, another output) is copied: the caller may write
  // through the array.
  if (!t.buffer_unique()) t = t.Clone();
  return TensorArray(std::move(t));
}

}  // namespace

py::dtype NumpyDtype(DataType t) {
  switch (t) {
    case DataType::kFloat: return py::dtype("float32");
    case DataType::kDouble: return py::dtype("float64");
    case DataType::kFloat16: return py::dtype("float16");
    case DataType::kInt8: return py::dtype("int8");
    case DataType::kInt16: return py::dtype("int16");
    case DataType::kInt32: return py::dtype("int32");
    case DataType::kInt64: return py::dtype("int64");
    case DataType::kUint8: return py::dtype("uint8");
    case DataType::kUint16: return py::dtype("uint16");
    case DataType::kUint32: return py::dtype("uint32");
    case DataType::kUint64: return py::dtype("uint64");
    case DataType::kBool: return py::dtype("bool");
    case DataType::kComplex64: return py::dtype("complex64");
    case DataType::kComplex128: return py::dtype("complex128");
    case DataType::kString: return py::dtype("O");
    default:
      throw InvalidArgumentError("dtype " + std::string(DataTypeName(t)) + " has no NumPy equivalent");
  }
}

DataType FerryDtype(const py::dtype& d) {
  const char kind = d.kind();
  const py::ssize_t size = d.itemsize();
  switch (kind) {
    case 'f':
      return size == 2 ? DataType::kFloat16 : size == 4 ? DataType::kFloat : size == 8 ? DataType::kDouble
                                                                                    : DataType::kUndefined;
    case 'i':
      return size == 1 ? DataType::kInt8 : size == 2 ? DataType::kInt16 : size == 4 ? DataType::kInt32
             : size == 8 ? DataType::kInt64 : DataType::kUndefined;
    case 'u':
      return size == 1 ? DataType::kUint8 : size == 2 ? DataType::kUint16 : size == 4 ? DataType::kUint32
             : size == 8 ? DataType::kUint64 : DataType::kUndefined;
    case 'b': return DataType::kBool;
    case 'c': return size == 8 ? DataType::kComplex64 : size == 16 ? DataType::kComplex128 : DataType::kUndefined;
    case 'O':
    case 'U':
    case 'S': return DataType::kString;
    default: return DataType::kUndefined;
  }
}

Value ToValue(const py::handle& obj, const IoInfo* info, const std::string& what) {
  const std::string kind = info ? info->kind : "tensor";
  if (obj.is_none()) {
    if (kind != "optional") throw InvalidArgumentError(what + ": None given for a " + kind + " input");
    return Value().set_optional(true);
  }
  const bool is_list = py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj);
  if (kind == "sequence" || (kind == "optional" && info->element_kind == "sequence")) {
    if (!is_list) {
      throw InvalidArgumentError(what + ": a sequence input takes a list of arrays, got " +
                                 py::str(obj.get_type().attr("__name__")).cast<std::string>());
    }
    TensorSequence seq;
    seq.elem_type = info ? info->dtype : DataType::kUndefined;
    size_t i = 0;
    for (const py::handle item : obj) {
      seq.tensors.push_back(ObjectToTensor(item, what + " element " + std::to_string(i++), seq.elem_type));
      if (seq.elem_type == DataType::kUndefined) seq.elem_type = seq.tensors.back().dtype();
    }
    Value v(std::move(seq));
    if (kind == "optional") v.set_optional(true);
    return v;
  }
  if (kind == "map") throw UnsupportedError(what + ": map inputs are not supported by Ferry's runtime");
  Value v(ObjectToTensor(obj, what, info ? info->dtype : DataType::kUndefined));
  if (kind == "optional") v.set_optional(true);
  return v;
}

py::array TensorArray(Tensor t) {
  const py::dtype dt = NumpyDtype(t.dtype());
  std::vector<py::ssize_t> dims(t.shape().begin(), t.shape().end());
  if (t.size() == 0 || t.raw_data() == nullptr) return py::array(dt, dims);
  void* data = t.raw_data();
  auto* holder = new Tensor(std::move(t));
  py::capsule base(holder, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dt, dims, {}, data, base);
}

py::object FromValue(Value value) {
  if (value.is_none()) return py::none();
  if (value.is_sequence()) {
    py::list out;
    for (Tensor& t : value.sequence().tensors) out.append(TensorObject(std::move(t)));
    return out;
  }
  return TensorObject(std::move(value.tensor()));
}

}  // namespace ferry::python
