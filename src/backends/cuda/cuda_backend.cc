#include "backends/cuda/cuda_backend.h"

#include <charconv>

#include "ferry/error.h"
#include "kernels/cuda_defs/cuda_kernel_defs.h"
#ifdef FERRY_WITH_CUDA
#include "kernels/cuda/cuda_runtime.h"
#endif

namespace ferry {
namespace {

constexpr const char* kNotBuilt =
    "this Ferry was built without CUDA (FERRY_CUDA=OFF, or the CUDA toolkit and cuDNN were not found at build "
    "time; docs/cuda.md)";

#ifdef FERRY_WITH_CUDA
KernelFactory FactoryFor(const std::string& def_name, int device) {
  for (const auto& [name, factory] : cuda::KernelFactories()) {
    if (name == def_name) {
      return [factory = factory, device](const ir::Node& n, const KernelOptions&) { return factory(n, device); };
    }
  }
  // A declaration without a kernel is a build defect (CudaDefs.EveryDeclarationHasAFactory); refuse clearly.
  return [def_name](const ir::Node& n, const KernelOptions&) -> std::unique_ptr<OpKernel> {
    throw InternalError(n.Describe() + ": the cuda kernel " + def_name + " is declared but has no factory");
  };
}
#endif

}  // namespace

CudaBackend::CudaBackend(int device_id)
    : device_id_(device_id), name_(device_id == 0 ? "cuda" : "cuda:" + std::to_string(device_id)), registry_(name_) {
  for (KernelDef def : cuda::KernelDefs()) {
#ifdef FERRY_WITH_CUDA
    def.create = FactoryFor(def.name, device_id);
#else
    def.create = [](const ir::Node& n, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      throw UnsupportedError(n.Describe() + ": cannot run on the cuda backend: " + kNotBuilt);
    };
#endif
    // The registry names kernels after the backend; keep "cuda.<Op>.<since>" for every device.
    registry_.Add(std::move(def));
  }
}

bool CudaBackend::Built() {
#ifdef FERRY_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::vector<std::string> CudaBackend::FactoryNames() {
  std::vector<std::string> names;
#ifdef FERRY_WITH_CUDA
  for (const auto& [name, factory] : cuda::KernelFactories()) names.push_back(name);
#endif
  return names;
}

std::string CudaBackend::Unavailable() const {
  std::call_once(queried_, [this] {
#ifdef FERRY_WITH_CUDA
    const cuda::DeviceInfo info = cuda::QueryDevice(device_id_);
    if (info.present) {
      capability_ = info.compute_capability;
    } else {
      unavailable_ = "no CUDA device " + std::to_string(device_id_) + " on this machine (" + info.absent_reason + ")";
    }
#else
    unavailable_ = kNotBuilt;
#endif
  });
  return unavailable_;
}

int CudaBackend::compute_capability() const {
  Unavailable();
  return capability_;
}

void CudaBackend::RequireDevice() const {
  const std::string why = Unavailable();
  if (!why.empty()) {
    throw UnsupportedError("backend '" + name_ + "' (device " + device() + "): " + why +
                           "; use another backend (--backends cpu,ref), or `ferry check --backends " + name_ +
                           ",cpu --cc 8.0` to see what would run on a GPU");
  }
}

Value CudaBackend::CopyToDevice(const Value& host_value) const {
#ifdef FERRY_WITH_CUDA
  return cuda::CopyToDevice(device_id_, host_value);
#else
  (void)host_value;
  throw UnsupportedError(std::string("copy to ") + device() + ": " + kNotBuilt);
#endif
}

Value CudaBackend::CopyToHost(const Value& device_value) const {
#ifdef FERRY_WITH_CUDA
  return cuda::CopyToHost(device_id_, device_value);
#else
  (void)device_value;
  throw UnsupportedError(std::string("copy from ") + device() + ": " + kNotBuilt);
#endif
}

std::optional<int> CudaDeviceOfBackendName(std::string_view name) {
  if (name == "cuda") return 0;
  if (!name.starts_with("cuda:") || name.size() == 5 || name.size() > 8) return std::nullopt;
  int id = 0;
  const auto* first = name.data() + 5;
  const auto* last = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(first, last, id);
  if (ec != std::errc() || ptr != last || id < 0) return std::nullopt;
  return id;
}

}  // namespace ferry
