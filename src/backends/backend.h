// A backend: a name, a device, and the kernels it registers. Backends are created once per process and
// shared by sessions (read-only after construction).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/value.h"
#include "kernels/registry.h"

namespace ferry {

// The device of every host backend: values in host memory, shared by all of them without copies.
inline constexpr std::string_view kHostDevice = "cpu";

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  // Where the backend's kernels read and write values: kHostDevice for host backends; another name ("cuda:0")
  // for a backend with memory of its own. Placement inserts a copy wherever a value crosses devices.
  virtual std::string device() const = 0;
  virtual const KernelRegistry& kernels() const = 0;
  // True for backends a custom-op plugin added (see backends/plugin/plugin_loader.h).
  virtual bool is_plugin() const { return false; }
  // The blocked activation layout this backend's convolutions run fastest in on `target` (ai.ferry's BlockedConv
  // and friends, schemas_ferry.cc): a channel block (8, 16), 0 for channels-last, or nullopt for no preference.
  // The blocked_layout pass rewrites only for a backend that asks for a layout.
  virtual std::optional<int> activation_block(const Target& target) const;

  // GPU backends: the compute capability of the device the backend runs on (e.g. 90 for 9.0), 0 when there is
  // none. Sessions judge the backend's kernels against it (Target::compute_capability).
  virtual int compute_capability() const { return 0; }
  // Throws UnsupportedError naming the device when the backend cannot run here (a GPU backend on a machine
  // without that GPU, or a build without its toolkit). Sessions call it; `ferry check` does not (it judges any
  // target, --cc). Host backends never throw.
  virtual void RequireDevice() const {}

  // Moving values between host memory and this backend's device. Only called on backends whose device() is
  // not kHostDevice; the defaults throw InternalError.
  virtual Value CopyToDevice(const Value& host_value) const;
  virtual Value CopyToHost(const Value& device_value) const;
};

bool IsHostDevice(std::string_view device);

// The backend called `name`, or nullptr if Ferry has none by that name.
const Backend* FindBackend(std::string_view name);
// Names of every backend: the built-in ones first, then registered ones in registration order.
std::vector<std::string> BackendNames();

// Adds a backend for the rest of the process (test backends, plugins); FindBackend finds it from then on and
// pointers to it stay valid. Thread-safe. Throws InvalidArgumentError when `backend` is null or a backend of
// the same name exists. Returns the registered backend.
const Backend& RegisterBackend(std::unique_ptr<Backend> backend);

}  // namespace ferry
