// What every oneDNN-backed `cpu` kernel shares: the engine, dtype and shape conversion, running a primitive with
// the caller's thread count, and a small per-kernel cache of primitives keyed by input-shape signature.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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

// A bounded cache of per-shape state (primitive descriptors, primitives, reordered weights), for const kernels
// called from several threads at once. `make` runs under the lock the first time a key is seen.
template <typename Value>
class ShapeCache {
 public:
  explicit ShapeCache(size_t capacity = 16) : capacity_(capacity) {}
  std::shared_ptr<const Value> Get(const std::vector<int64_t>& key, const std::function<std::shared_ptr<Value>()>& make) const {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    if (entries_.size() >= capacity_) entries_.erase(entries_.begin());  // bounded: forget some shape
    auto v = make();
    entries_.emplace(key, v);
    return v;
  }

 private:
  size_t capacity_;
  mutable std::mutex mu_;
  mutable std::map<std::vector<int64_t>, std::shared_ptr<const Value>> entries_;
};

// The shape signature of a list of tensors: ranks and dims, concatenated.
std::vector<int64_t> ShapeKey(std::initializer_list<const Tensor*> tensors);
// The same signature from the shapes alone (the key a kernel's Compute would use, for OpKernel::AddWorkspace).
std::vector<int64_t> ShapeKey(std::initializer_list<Shape> shapes);

}  // namespace ferry::cpu
