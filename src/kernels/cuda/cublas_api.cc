#include "kernels/cuda/cublas_api.h"

#include <dlfcn.h>

#include <mutex>

#include "ferry/error.h"

namespace ferry::cuda {
namespace {

#define FERRY_STR2(x) #x
#define FERRY_STR(x) FERRY_STR2(x)
constexpr const char* kLibrary = "libcublas.so." FERRY_STR(CUBLAS_VER_MAJOR);

struct Loaded {
  CublasApi api;
  std::string error;  // why loading failed; "" when api is complete
};

template <typename F>
bool Resolve(void* lib, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  if (!*out && error->empty()) error->assign(std::string(kLibrary) + " has no symbol " + name);
  return *out != nullptr;
}

Loaded Load() {
  Loaded l;
  // The loader's search path (the program's run path names the toolkit it was linked with), then the toolkit's
  // library folder known at build time. Kept loaded for the life of the process.
  void* lib = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  const char* why = lib ? nullptr : ::dlerror();
  std::string first_error = why ? why : "";
#ifdef FERRY_CUDA_LIBRARY_DIR
  if (!lib) lib = ::dlopen((std::string(FERRY_CUDA_LIBRARY_DIR) + "/" + kLibrary).c_str(), RTLD_NOW | RTLD_LOCAL);
#endif
  if (!lib) {
    l.error = std::string("cannot load ") + kLibrary + ": " + first_error;
    return l;
  }
  Resolve(lib, "cublasCreate_v2", &l.api.create, &l.error);
  Resolve(lib, "cublasDestroy_v2", &l.api.destroy, &l.error);
  Resolve(lib, "cublasSetStream_v2", &l.api.set_stream, &l.error);
  Resolve(lib, "cublasGemmStridedBatchedEx", &l.api.gemm_strided_batched_ex, &l.error);
  Resolve(lib, "cublasGetStatusName", &l.api.status_name, &l.error);
  Resolve(lib, "cublasGetStatusString", &l.api.status_string, &l.error);
  return l;
}

}  // namespace

const CublasApi& Cublas(const std::string& who) {
  static const Loaded loaded = Load();  // thread-safe static initialization
  if (!loaded.error.empty()) throw UnsupportedError(who + ": cuBLAS is not usable: " + loaded.error);
  return loaded.api;
}

}  // namespace ferry::cuda
