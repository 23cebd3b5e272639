// The kernel interface. A kernel object is created once per node at session creation (read attributes,
// pre-pack weights; throw InvalidModelError/UnsupportedError naming the node for bad attributes), then
// Compute() runs it. Compute is const and must be safe to call from several threads at once: all per-run state
// lives in the KernelContext.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ferry/error.h"
#include "ferry/tensor.h"
#include "ferry/value.h"
#include "ir/graph.h"

namespace ferry {

class KernelContext;

// Scratch memory kernels keep for running, beyond their nodes' tensors: buffers a thread keeps for its life once
// a kernel used them, grown to the largest request (the cpu convolutions' reorder buffers, oneDNN scratchpads, the
// ref GEMM's packing panels). One such buffer serves every kernel of the process that uses it, one kernel after
// another, so what several kernels need together is, per buffer, the largest of their requests, not their sum:
// Need() and Merge() keep the maximum per buffer name, and kernels sharing a buffer use the same name.
class Workspace {
 public:
  struct Buffer {
    int64_t bytes = 0;  // per thread holding one
    int threads = 0;    // threads holding one
    int64_t total() const { return bytes * threads; }
  };
  // `threads` threads each hold `bytes` of buffer `name`. Requests keep the largest size and the most threads seen
  // for a name: exact when the largest request also uses the most threads, an upper bound otherwise.
  void Need(const std::string& name, int64_t bytes, int threads = 1) {
    if (bytes <= 0 || threads <= 0) return;
    Buffer& b = buffers_[name];
    b.bytes = std::max(b.bytes, bytes);
    b.threads = std::max(b.threads, threads);
  }
  void Merge(const Workspace& other) {
    for (const auto& [name, b] : other.buffers_) Need(name, b.bytes, b.threads);
  }
  // Bytes over every buffer and thread.
  int64_t bytes() const {
    int64_t total = 0;
    for (const auto& [name, b] : buffers_) total += b.total();
    return total;
  }
  const std::map<std::string, Buffer>& buffers() const { return buffers_; }

 private:
  std::map<std::string, Buffer> buffers_;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual void Compute(KernelContext& ctx) const = 0;
  // Bytes the kernel holds for itself beyond its node's tensors, such as weights pre-packed at creation
  // (Session::PredictMemory counts them). 0 by default.
  virtual int64_t held_bytes() const { return 0; }
  // Adds to `ws` the scratch buffers Compute keeps for running `node` (the node this kernel was created for) at
  // its static input shapes with `threads` threads (Session::PredictMemory counts them as the workspace); nothing
  // for shapes that are not static. May build and cache what the first run at those shapes would build
  // (primitives), but runs nothing. Nothing by default.
  virtual void AddWorkspace(const ir::Node& /*node*/, int /*threads*/, Workspace& /*ws*/) const {}
  // Asked at session creation for a constant input k (an initializer that is not a graph input): returns true
  // when the kernel holds its own copy (pre-packed weights) and will never read the input's data again, dropping
  // any reference it kept. When every kernel reading an initializer says so, the session frees its data: the
  // kernel then gets a tensor with the initializer's dtype and shape but no data (raw_data() is null).
  virtual bool ReleaseConstantInput(size_t /*k*/) { return false; }
};

// Runs a subgraph (If/Loop/Scan body) with the given formal inputs; outer-scope values are resolved from
// the calling frame. Provided by the executor.
using SubgraphRunner = std::function<std::vector<Value>(const ir::Graph& body, std::vector<Value> inputs)>;

// Where KernelContext::Output/OutputUninitialized take their buffers from when the executor gives one (its
// activation arena, src/runtime/arena.h): returns false to let the context allocate as usual.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  virtual bool Allocate(int output, DataType dtype, const Shape& shape, bool zero, Tensor* out) = 0;
};

class KernelContext {
 public:
  // `reusable`: per input, whether the executor lets a kernel take over that input's buffer (ReuseInput); empty
  // means none.
  KernelContext(const ir::Node& node, std::span<const Value* const> inputs, std::span<Value> outputs, int threads,
                SubgraphRunner subgraphs, std::span<const char> reusable = {})
      : node_(node),
        inputs_(inputs),
        outputs_(outputs),
        threads_(threads),
        subgraphs_(std::move(subgraphs)),
        reusable_(reusable) {}

  const ir::Node& node() const { return node_; }
  int input_count() const { return static_cast<int>(inputs_.size()); }
  int output_count() const { return static_cast<int>(outputs_.size()); }
  // True when input i is present (not omitted, not an empty optional).
  bool has_input(int i) const;
  // The tensor at input i; nullptr if omitted. Throws InvalidArgumentError if the value is not a tensor.
  const Tensor* input(int i) const;
  // Like input(i) but throws InvalidModelError naming the node when the input is missing.
  const Tensor& required_input(int i) const;
  // The raw value (tensor, sequence, optional) at input i; nullptr if omitted.
  const Value* input_value(int i) const { return i < input_count() ? inputs_[static_cast<size_t>(i)] : nullptr; }

  // True when output i is requested by the graph (not omitted).
  bool output_requested(int i) const { return i < output_count() && node_.output(static_cast<size_t>(i)); }
  // Allocates output i as a new zeroed tensor and returns it (i < output_count(); a kernel may fill an output
  // the graph omitted, and the executor drops it).
  Tensor& Output(int i, DataType dtype, Shape shape);
  // Same without zero-filling: for kernels that write every element of the output.
  Tensor& OutputUninitialized(int i, DataType dtype, Shape shape);
  // Sets output i to a value (may share another tensor's buffer, e.g. Reshape/Identity).
  void SetOutput(int i, Value v);
  // Output i as input k's buffer, holding input k's data, when this is the last use of input k's value, nothing
  // else shares its buffer, and it has `dtype` and as many elements as `shape`: then a kernel may compute in
  // place (a residual sum accumulated onto its addend). nullptr otherwise (allocate as usual).
  Tensor* ReuseInput(int k, int i, DataType dtype, const Shape& shape);

  int threads() const { return threads_; }
  // SessionOptions::deterministic (docs/determinism.md): a kernel whose result would vary from run to run (an
  // unseeded random draw) takes its fixed path instead.
  bool deterministic() const { return deterministic_; }
  void set_deterministic(bool on) { deterministic_ = on; }
  // Output buffers come from `allocator` (not owned; nullptr: the default allocator) from now on.
  void set_output_allocator(OutputAllocator* allocator) { allocator_ = allocator; }
  std::vector<Value> RunSubgraph(const ir::Graph& body, std::vector<Value> inputs) const {
    return subgraphs_(body, std::move(inputs));
  }

  // "node 'x' (Op)" prefix for error messages raised by kernels.
  std::string Describe() const { return node_.Describe(); }

 private:
  const ir::Node& node_;
  std::span<const Value* const> inputs_;
  std::span<Value> outputs_;
  int threads_;
  SubgraphRunner subgraphs_;
  std::span<const char> reusable_;
  OutputAllocator* allocator_ = nullptr;
  bool deterministic_ = false;
};

}  // namespace ferry
