// A backend: a name, a device, and the kernels it registers. Backends are created once per process and
// shared by sessions (read-only after construction).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/registry.h"

namespace ferry {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  virtual std::string device() const = 0;  // "cpu" for host backends
  virtual const KernelRegistry& kernels() const = 0;
};

// The backend called `name`, or nullptr if Ferry has none by that name.
const Backend* FindBackend(std::string_view name);
// Names of every backend: the built-in ones first, then registered ones in registration order.
std::vector<std::string> BackendNames();

// Adds a backend for the rest of the process (test backends today, plugins later); FindBackend finds it from
// then on and pointers to it stay valid. Thread-safe. Throws InvalidArgumentError when `backend` is null or a
// backend of the same name exists.
void RegisterBackend(std::unique_ptr<Backend> backend);

}  // namespace ferry
