// The kernel interface and its lifecycle: create -> prepare -> run.
//
// Create (KernelDef::create, once per node at session creation): read and check attributes, pre-pack constant
// weights; throw InvalidModelError/UnsupportedError naming the node for bad attributes.
// Prepare (OpKernel::Prepare, once per input signature: the dtypes and shapes of the node's inputs, plus the data
// of inputs known before the run): every check of shapes and dtypes, the output dtypes and shapes, the scratch
// buffers Compute keeps (workspace), and any per-shape state (primitives, packed weights for that shape), raising
// every validation error named after the model, node, op and input. The executor caches what Prepare returns
// (PreparedKernel) beside the signature's arena plan and plans the arena from the prepared output shapes before
// the first run.
// Run (OpKernel::Compute, every run): the prepared state (KernelContext::state) and outputs bound to planned
// buffers (KernelContext::Output). Compute is const and must be safe to call from several threads at once: all
// per-run state lives in the KernelContext. It validates and builds nothing; what it may still throw are errors
// only data can cause (an index out of range), naming the node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
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

// What every kernel of a session is created with.
struct KernelOptions {
  int threads = 1;             // the session's intra-op thread count (KernelContext::threads of every run)
  bool deterministic = false;  // SessionOptions::deterministic
};

// One input as Prepare sees it.
struct InputSpec {
  enum class Kind : uint8_t {
    kAbsent,  // omitted, or an empty optional
    kTensor,
    kOther,   // a sequence, map or non-empty optional: no dtype or shape here
  };
  Kind kind = Kind::kAbsent;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  // The tensor's data when it is known before the run and fixed for the signature: an initializer that no feed
  // can override, or a small value the executor computed from shapes and constants alone (Shape -> Gather ->
  // Concat); nullptr otherwise. Whatever Prepare derives from it holds for every run of the signature.
  const Tensor* data = nullptr;

  bool is_tensor() const { return kind == Kind::kTensor; }
  static InputSpec Of(const Value* v, const Tensor* data = nullptr);
};

// One output as Prepare declares it.
struct OutputSpec {
  enum class Kind : uint8_t {
    kDynamic,  // known only when Compute runs: data-dependent (NonZero, Unique, a Reshape of runtime data), or
               // not a tensor; Compute allocates it and the arena does not plan it
    kTensor,   // dtype and shape known
  };
  Kind kind = Kind::kDynamic;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  // The output's data when Prepare knows it (shape arithmetic): later nodes' Prepare see it as InputSpec::data.
  std::shared_ptr<const Tensor> value;
  // The output is input k's buffer (a Reshape or Identity view through KernelContext::SetOutput): it gets no
  // buffer of its own, and input k's buffer lives as long as either. -1: none.
  int view_of = -1;
  // Compute takes over input k's buffer when the executor allows it (KernelContext::ReuseInput): then the output
  // gets input k's bytes. -1: none.
  int in_place_of = -1;

  bool is_tensor() const { return kind == Kind::kTensor; }
};

// What Prepare made for one signature; the executor keeps it and hands it to every Compute of that signature.
struct PreparedKernel {
  std::vector<OutputSpec> outputs;
  Workspace workspace;                 // scratch buffers Compute keeps for running (memory prediction counts them)
  std::shared_ptr<const void> state;  // the kernel's own (KernelContext::state<T>), may be null
};

class PrepareContext {
 public:
  // `inputs`: one per node input (absent ones included). `model`: the model's description (ir::Model::Describe),
  // which Describe() puts before the node's.
  PrepareContext(const ir::Node& node, std::span<const InputSpec> inputs, const KernelOptions& options,
                 std::string_view model = {});

  const ir::Node& node() const { return node_; }
  int input_count() const { return static_cast<int>(inputs_.size()); }
  // Input i's spec; an absent spec past the node's inputs.
  const InputSpec& input(int i) const;
  bool has_input(int i) const { return input(i).kind != InputSpec::Kind::kAbsent; }
  // Input i as a tensor: throws InvalidModelError naming the node and input when it is absent or not a tensor.
  const InputSpec& tensor_input(int i) const;
  // Input i's data when known before the run (InputSpec::data), else nullptr.
  const Tensor* constant(int i) const { return input(i).data; }
  int threads() const { return options_.threads; }
  bool deterministic() const { return options_.deterministic; }

  int output_count() const { return static_cast<int>(prepared_.outputs.size()); }
  bool output_requested(int i) const { return i < output_count() && node_.output(static_cast<size_t>(i)); }
  OutputSpec& output(int i) { return prepared_.outputs.at(static_cast<size_t>(i)); }
  // Declares output i a tensor of this dtype and shape.
  void SetOutput(int i, DataType dtype, Shape shape);
  // Declares output i's data too (small values: shape arithmetic).
  void SetOutputValue(int i, Tensor value);
  // Declares output i to be known only at run time.
  void SetOutputDynamic(int i);
  Workspace& workspace() { return prepared_.workspace; }
  // The kernel's per-signature state, passed to Compute as KernelContext::state<T>().
  template <typename T>
  T& EmplaceState(T value) {
    auto p = std::make_shared<T>(std::move(value));
    T& ref = *p;
    prepared_.state = std::move(p);
    return ref;
  }

  // OpKernel::Prepare's default: the output types the op's schema infers (its shape-inference function, with
  // the known input data as partial values) at these input shapes; outputs it leaves unknown are dynamic.
  // Throws InvalidModelError when the schema proves the inputs invalid.
  void InferOutputsFromSchema();

  // "model 'm.onnx': node 'x' (Op)", for messages; built only when called (when a check fails).
  std::string Describe() const;
  // "input 1 'W' float32[64,3,7,7]" (or "absent"), for messages.
  std::string InputString(int i) const;

  PreparedKernel Finish() { return std::move(prepared_); }

 private:
  const ir::Node& node_;
  std::span<const InputSpec> inputs_;
  KernelOptions options_;
  std::string_view model_;
  PreparedKernel prepared_;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Once per input signature, before any run of it (see the top of the file). The default takes the output
  // types from the op's schema (PrepareContext::InferOutputsFromSchema) and keeps no state.
  virtual void Prepare(PrepareContext& ctx) const { ctx.InferOutputsFromSchema(); }
  virtual void Compute(KernelContext& ctx) const = 0;
  // Bytes the kernel holds for itself beyond its node's tensors, such as weights pre-packed at creation
  // (Session::PredictMemory counts them). 0 by default.
  virtual int64_t held_bytes() const { return 0; }
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

  // The state Prepare made for this signature (PrepareContext::EmplaceState). Throws InternalError when the
  // kernel was run without being prepared or kept no state of type T (a bug, not a model error).
  template <typename T>
  const T& state() const {
    const void* p = prepared_ ? prepared_->state.get() : nullptr;
    if (!p) MissingState();
    return *static_cast<const T*>(p);
  }
  // The state Prepare made, or nullptr when it kept none (a kernel whose Prepare keeps state only when shapes or
  // constants allow it: Compute then derives what it needs from the data).
  template <typename T>
  const T* state_if_any() const {
    return prepared_ ? static_cast<const T*>(prepared_->state.get()) : nullptr;
  }
  // What Prepare declared for output i, or nullptr when the kernel was not prepared.
  const OutputSpec* prepared_output(int i) const {
    return prepared_ && static_cast<size_t>(i) < prepared_->outputs.size() ? &prepared_->outputs[static_cast<size_t>(i)]
                                                                            : nullptr;
  }
  // Output i with the dtype and shape Prepare declared (OutputSpec::kTensor), zeroed or not: its planned buffer.
  Tensor& Output(int i);
  Tensor& OutputUninitialized(int i);
  void set_prepared(const PreparedKernel* prepared) { prepared_ = prepared; }

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

  // "node 'x' (Op)" prefix for error messages raised by kernels; built only when called.
  std::string Describe() const { return node_.Describe(); }

 private:
  const ir::Node& node_;
  std::span<const Value* const> inputs_;
  std::span<Value> outputs_;
  int threads_;
  SubgraphRunner subgraphs_;
  std::span<const char> reusable_;
  OutputAllocator* allocator_ = nullptr;
  const PreparedKernel* prepared_ = nullptr;
  bool deterministic_ = false;

  [[noreturn]] void MissingState() const;
  const OutputSpec& PreparedTensor(int i) const;
};

}  // namespace ferry
