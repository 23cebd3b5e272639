// What every oneDNN-backed `cpu` kernel shares: the engine, dtype and shape conversion, running a primitive with
// the caller's thread count. Primitives are per-shape state the kernels build in Prepare (kernel.h).
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/error.h"
#include "ferry/tensor.h"
#include "kernels/static_shape.h"  // StaticShape, for the kernels' decisions before a run

namespace ferry::cpu {

// The process's CPU engine (oneDNN engines are thread-safe).
const dnnl::engine& Engine();

// oneDNN's data type for `t`; nullopt when oneDNN has none (the KernelDef must not admit such types).
std::optional<dnnl::memory::data_type> DnnlType(DataType t);

dnnl::memory::dims Dims(const Shape& shape);
// The dense row-major ("abcd...") memory descriptor of a tensor of `shape` and `t`.
dnnl::memory::desc PlainDesc(const Shape& shape, DataType t);
// A oneDNN memory over a tensor's buffer (no copy). The tensor must outlive the memory object.
dnnl::memory Wrap(const Tensor& t);
dnnl::memory Wrap(const Tensor& t, const dnnl::memory::desc& desc);

// Runs `prim` on a fresh stream with at most `threads` OpenMP threads (oneDNN's OpenMP runtime reads the calling
// thread's setting), translating dnnl::error into ferry::InternalError naming `what`.
void Execute(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args, int threads,
             const std::string& what);
// Same, for code that must run several primitives (reorders + the op) under one thread setting and one stream.
void WithStream(int threads, const std::string& what, const std::function<void(dnnl::stream&)>& body);

// oneDNN fixes a primitive's parallel split (its thread count) when the primitive is created, whatever the OpenMP
// setting when it runs: primitives and reorders must be created under the thread count they will run with. This
// sets the calling thread's OpenMP thread count for the scope.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads);
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
};

}  // namespace ferry::cpu
