// Python values <-> ferry::Value for the extension module ferry._ferry (docs/python.md, "Values").
//
// Inputs: a NumPy array whose dtype Ferry has, C-contiguous and aligned, is read in place: the Tensor wraps its
// buffer and holds a reference to the array (released under the GIL). Any other array is first copied into a
// C-contiguous one of the same dtype (as ONNX Runtime does). An object with __dlpack__ (a torch tensor, a CuPy
// array on the CPU) is read in place through DLPack when it is contiguous and on the CPU. A list (or tuple) feeds
// a sequence input, None an optional one. Strings: arrays of dtype object, str_ ('U') or bytes_ ('S').
//
// Outputs: a tensor comes back as a NumPy array that owns Ferry's buffer (its base is a capsule holding the
// Tensor), unless the buffer is shared with something the caller must not write through (an initializer, an
// input, another output): then as a copy. bfloat16, float8 and float4 tensors come back as float32 arrays, int4
// and int2 as int8, uint4 and uint2 as uint8 (NumPy has no such dtypes; the conversion is exact). Sequences come
// back as lists, empty optionals as None, string tensors as object arrays of str.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "ferry/session.h"
#include "ferry/value.h"

namespace ferry::python {

namespace py = pybind11;

// The NumPy dtype for a Ferry dtype that NumPy has; throws InvalidArgumentError for the others.
py::dtype NumpyDtype(DataType t);
// The Ferry dtype of a NumPy dtype; kUndefined when Ferry has none for it.
DataType FerryDtype(const py::dtype& d);

// `obj` as a Ferry value for an input declared as `info` (its kind and element type decide how a list or None is
// read). `what` names the input in errors. Call with the GIL held.
Value ToValue(const py::handle& obj, const IoInfo* info, const std::string& what);

// A Ferry value as a Python object (see above). Call with the GIL held.
py::object FromValue(Value value);

// A tensor as a NumPy array sharing its buffer, writable (the caller must know no one else reads the buffer).
py::array TensorArray(Tensor t);

}  // namespace ferry::python
