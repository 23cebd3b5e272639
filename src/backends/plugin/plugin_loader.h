// Custom-op plugins: shared libraries speaking the C ABI of include/ferry/plugin.h. Loading one registers a
// backend named after the file (libferry_correlation.so -> "ferry_correlation") whose kernels are the plugin's
// ops, and the ops' schemas (so validation, type inference and `ferry check` know them).
#pragma once

#include <string>

#include "backends/backend.h"

namespace ferry {

// Loads the plugin at `path` and returns its backend. Loading the same file again (by canonical path) returns
// the same backend. Thread-safe. Throws InvalidArgumentError naming the path, and the op where one is at fault,
// when the file is missing or not a shared library, lacks the entry points, was built for another ABI version,
// registers an invalid or duplicate op, or its init fails; nothing is registered then.
const Backend& LoadPlugin(const std::string& path);

}  // namespace ferry
