// Shared by the extension module's files (module.cc, tools.cc).
#pragma once

#include <pybind11/pybind11.h>

#include "ferry/session.h"

namespace ferry::python {

namespace py = pybind11;

// SessionOptions from the dict the Python layer builds (keys as the struct's fields; absent or None: default).
SessionOptions SessionOptionsFrom(const py::dict& d);

// Adds check_json, ops_json, optimize_json, compare_json and bench_json (tools.cc).
void RegisterTools(py::module_& m);

}  // namespace ferry::python
