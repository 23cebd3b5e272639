#include <memory>
#include <mutex>
#include <shared_mutex>

#include "backends/backend.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/ref/ref_backend.h"
#include "ferry/error.h"

namespace ferry {
namespace {

// Every backend of the process. Backends are never removed, so the pointers handed out stay valid; the lock
// guards the list itself against RegisterBackend running concurrently with lookups.
struct BackendList {
  std::shared_mutex mu;
  std::vector<std::unique_ptr<Backend>> backends;
};

BackendList& AllBackends() {
  static auto* list = [] {
    auto* l = new BackendList();
    l->backends.push_back(std::make_unique<RefBackend>());
    l->backends.push_back(std::make_unique<CpuBackend>());
    // Declared on every machine (its kernel declarations are data); it runs only with a GPU and a CUDA build.
    l->backends.push_back(std::make_unique<CudaBackend>(0));
    return l;
  }();
  return *list;
}

}  // namespace

const Backend* FindBackend(std::string_view name) {
  BackendList& list = AllBackends();
  {
    std::shared_lock lock(list.mu);
    for (const auto& b : list.backends) {
      if (b->name() == name) return b.get();
    }
  }
  // "cuda:N": the cuda backend on device N, made on first use.
  const std::optional<int> device = CudaDeviceOfBackendName(name);
  if (!device) return nullptr;
  if (*device == 0) return FindBackend("cuda");
  std::unique_lock lock(list.mu);
  for (const auto& b : list.backends) {
    if (b->name() == name) return b.get();
  }
  list.backends.push_back(std::make_unique<CudaBackend>(*device));
  return list.backends.back().get();
}

std::vector<std::string> BackendNames() {
  BackendList& list = AllBackends();
  std::shared_lock lock(list.mu);
  std::vector<std::string> names;
  for (const auto& b : list.backends) names.push_back(b->name());
  return names;
}

std::optional<int> Backend::activation_block(const Target&) const { return std::nullopt; }

Value Backend::CopyToDevice(const Value&) const {
  throw InternalError("backend '" + name() + "' (device " + device() + ") cannot copy values to its device");
}

Value Backend::CopyToHost(const Value&) const {
  throw InternalError("backend '" + name() + "' (device " + device() + ") cannot copy values to the host");
}

bool IsHostDevice(std::string_view device) { return device == kHostDevice; }

const Backend& RegisterBackend(std::unique_ptr<Backend> backend) {
  if (!backend) throw InvalidArgumentError("RegisterBackend: the backend is null");
  BackendList& list = AllBackends();
  std::unique_lock lock(list.mu);
  for (const auto& b : list.backends) {
    if (b->name() == backend->name()) {
      throw InvalidArgumentError("RegisterBackend: a backend named '" + backend->name() + "' already exists");
    }
  }
  list.backends.push_back(std::move(backend));
  return *list.backends.back();
}

}  // namespace ferry
