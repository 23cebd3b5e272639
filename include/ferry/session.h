// The Session API: load a model once, run it many times (from several threads at once if you like).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "ferry/limits.h"
#include "ferry/placement_report.h"
#include "ferry/tensor.h"
#include "ferry/value.h"

namespace ferry {

struct SessionOptions {
  // Backends in priority order: each node goes to the first whose kernel supports it. The default runs the fast
  // `cpu` backend and falls back to `ref` (the complete reference backend) for what `cpu` does not cover.
  std::vector<std::string> backends = {"cpu", "ref"};
  // false: every node must run on the first backend (or on the plugin that provides its custom op); session
  // creation fails listing every node that would fall back (`--no-fallback`).
  bool allow_fallback = true;
  // (node name or op type, backend): run that node, or every node of that op type, on that backend; a rule by
  // node name wins over one by op type (`--pin NODE_OR_OP=BACKEND`). A pin that matches no node is an error.
  std::vector<std::pair<std::string, std::string>> pins;
  // Custom-op plugins (shared libraries, include/ferry/plugin.h) to load before placement. Each adds a backend
  // named after its file (libfoo_ops.so -> "foo_ops"), appended to `backends` unless listed there already.
  std::vector<std::string> plugins;
  // Intra-op threads per run: 0 (all hardware threads, at most kMaxThreads) to kMaxThreads (ferry/limits.h: 1024);
  // anything else is an InvalidArgumentError at creation.
  int threads = 0;
  // Whether runs give up their threads while the host cannot run them (docs/threads.md): a run measured to have
  // its threads waiting for CPUs (other processes, or concurrent runs of this session, hold the cores) makes the
  // next runs execute on the calling thread alone, trying all threads again now and then. kAuto: adapt when
  // `threads` is 0 (the default count), keep an explicit count fixed. kOn: adapt an explicit count too (the
  // server does, for the counts it derives). kOff: never. Deterministic sessions never adapt (kOn is then an
  // InvalidArgumentError).
  enum class ThreadAdaptation { kAuto, kOn, kOff };
  ThreadAdaptation adapt_threads = ThreadAdaptation::kAuto;
  // "auto", "on" or "off" (what `--adapt-threads` and Python's `ferry.adapt_threads` take); anything else is an
  // InvalidArgumentError "expected auto, on or off, got 'X'".
  static ThreadAdaptation ParseThreadAdaptation(std::string_view name);
  // CPU extensions Ferry may use, e.g. "avx2,fma" to emulate a lesser CPU ("" = all the host has, narrowed by
  // FERRY_ISA). Kernels needing a missing extension are not placed.
  std::string isa;
  // Graph optimization level (docs/optimize.md): 0 none; 1 cleanups that never change numerics; 2 fusions
  // (Conv + Add / activation into one kernel); 3 layout transforms for the backends (blocked channel layouts
  // for the `cpu` backend's convolutions). Levels 2 and 3 change results by float re-association only.
  int optimization_level = 3;
  // Passes not to run, by name (`ferry run --disable-pass NAME`); an unknown name is an InvalidArgumentError.
  std::vector<std::string> disabled_passes;
  // Rewrite nodes that no backend of `backends` has a kernel for into standard ONNX ops they run, where a
  // decomposition exists (LayerNormalization, Gelu, Mish, Attention, ...; docs/optimize.md): the `legalize` pass,
  // at every optimization level (`ferry run --legalize`). With allow_fallback = false, "supported" means by the
  // first backend (or a plugin). Results differ from the op's own kernel by float rounding only.
  bool legalize = false;
  // Fix these inputs' dims at creation ("batch" -> 1; like ONNX Runtime's free dimension overrides, `--shape`):
  // the optimizer, the memory prediction and the kernels then see static shapes, and runs must feed exactly them.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Take activation buffers from a planned arena (src/runtime/arena.h), one plan per input-shape signature made
  // from the prepared kernels' output shapes before its first run; false: allocate per buffer.
  bool memory_arena = true;
  // Bytes this session may need (0 = no limit): session creation fails with ResourceExhaustedError when the
  // predicted memory (PredictMemory: weights, kernels' own copies, activation arena, inputs and outputs, kernels'
  // workspace, for the inputs' static shapes) exceeds it. Runs are not limited: feeding larger shapes than
  // predicted can use more.
  int64_t memory_limit = 0;
  // Bitwise-identical outputs across runs of this session and across sessions with the same options, on one
  // machine (`--deterministic`; docs/determinism.md): needs threads > 0 (InvalidArgumentError otherwise, since
  // "all hardware threads" differs between machines), keeps OpenMP from shrinking thread teams, and gives
  // unseeded random ops (Dropout in training mode) a fixed per-node seed. `ref` is thread-count invariant anyway.
  bool deterministic = false;
};

// One scratch buffer of MemoryPrediction::workspace.
struct WorkspaceBuffer {
  std::string device;  // the device of the backend whose kernels use it: "cpu" (host threads' buffers)
  std::string name;    // "conv src reorder", "oneDNN scratchpad", "ref GEMM B panels", ...
  int64_t bytes = 0;   // over every thread holding one
  int threads = 1;     // how many threads hold one
};

// Memory a session needs for its inputs' static shapes, predicted without running it (`ferry check --memory`).
struct MemoryPrediction {
  int64_t weights_bytes = 0;  // initializers of the graph the session runs (after the optimizer)
  int64_t kernel_bytes = 0;   // what kernels hold themselves: pre-packed or reordered weights
  int64_t arena_bytes = 0;    // the planned activation arena
  int64_t lower_bound = 0;    // the most activation bytes live at once: no arena can be smaller
  int64_t io_bytes = 0;       // graph inputs and outputs
  // Scratch buffers kernels keep for running, for one run at a time (OpKernel::AddWorkspace): the cpu
  // convolutions' reorder buffers and scratchpad, oneDNN scratchpads, the ref GEMM's packing panels. Each is kept
  // per thread and shared by every kernel that uses it, so this is the largest request per buffer, summed over
  // buffers (not a sum over kernels). Concurrent runs on other threads each hold their own.
  int64_t workspace_bytes = 0;
  std::vector<WorkspaceBuffer> workspace;  // workspace_bytes by device and buffer
  // Machine code oneDNN generated for the kernels' primitives (its JIT kernels), which lives as long as they do.
  // Measured, not computed: the growth of the process's resident anonymous executable pages while the session's
  // kernels were built (and, for this prediction, while they built what the workspace needs). Code the process
  // already had (oneDNN's primitive cache: an earlier session with the same layers) costs nothing again and is
  // not counted; code other threads generated meanwhile is. 0 where /proc is not available.
  int64_t jit_code_bytes = 0;
  // Values whose size the shapes do not determine (counted as 0), e.g. "'y': shape float32[N,3] is not static".
  std::vector<std::string> unknown;
  int64_t total() const {
    return weights_bytes + kernel_bytes + arena_bytes + io_bytes + workspace_bytes + jit_code_bytes;
  }
};

// An activation arena planned for an input signature (Session::arenas()).
struct ArenaStats {
  std::string signature;  // the input dtypes and shapes it serves
  int64_t arena_bytes = 0, lower_bound = 0;
  size_t buffers = 0;  // activation buffers planned in it
  size_t blocks = 0;   // arenas allocated (one per concurrent run)
};

// Static description of a graph input or output. Unknown or symbolic dims are -1; `dim_names` holds the symbol
// ("batch") or "" for each dim. `kind` is "tensor", "sequence", "optional" or "map".
struct IoInfo {
  std::string name;
  std::string kind = "tensor";
  DataType dtype = DataType::kUndefined;  // a tensor's; a sequence's or optional's tensors' (when declared)
  // A sequence's or optional's element: "tensor", or "sequence" (an optional sequence); "" for a tensor.
  std::string element_kind;
  bool has_shape = false;  // false when the rank is unknown
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
};

// The model file's metadata (ModelProto and GraphProto fields), as ONNX Runtime's ModelMetadata reports it.
struct ModelMetadata {
  std::string producer_name, producer_version, domain;
  std::string description;        // the model's doc_string
  std::string graph_name;         // the main graph's name
  std::string graph_description;  // the main graph's doc_string
  int64_t version = 0;            // model_version
  std::map<std::string, std::string> custom;  // metadata_props
};

using NamedValue = std::pair<std::string, Value>;

// One input or output of a profiled step, as the run saw it.
struct StepValue {
  std::string name;            // value name; "" for an omitted optional input or output
  std::string dtype;           // "float32", ...; "sequence(float32)" for a sequence; "none" for an empty optional
  std::vector<int64_t> shape;  // a tensor's dims; a sequence's length
  int64_t bytes = 0;           // storage bytes (a sequence: of all its tensors)
};

// Wall time of one node (or copy step) in one run.
struct NodeTime {
  std::string node;  // node name; "copy 'VALUE' to DEVICE" for a copy step
  std::string op;    // "Conv", "ai.ferry::BlockedConv", "copy"
  std::string graph; // "main" or the subgraph's name
  double ms = 0;
  // When the step started: microseconds of std::chrono::steady_clock (since its epoch), so a caller can place
  // the step against its own steady_clock reads (a trace's timeline).
  double start_us = 0;
  std::string backend;  // the backend that ran the node ("cpu", "ref", a plugin's name); "copy" for a copy step
  std::vector<StepValue> inputs, outputs;  // read after the step ran
  int64_t input_bytes = 0, output_bytes = 0;
};

// What one run did besides computing.
struct RunStats {
  int64_t copies = 0;        // copies between devices (subgraph runs included)
  int64_t bytes_copied = 0;
  // Set before the run to time every step: node_times then lists them in run order (subgraph steps each time
  // they run), with the backend and the input/output types of each. Costs two clock reads per step (and the
  // NodeTime records); nothing when false.
  bool profile = false;
  std::vector<NodeTime> node_times;
  // Set before the run to see every value a node of the main graph produces (`ferry compare --layerwise`),
  // called on the running thread right after the node ran, with the value's name in the graph the session runs
  // (after the optimizer: a fused node writes the output of the last node it replaced; the blocked layout's twins,
  // "X_blocked", hold a physical layout that is not the ONNX one) and the value on the host. Its buffer may be
  // reused as soon as the callback returns (activation arena, in-place kernels): clone what you keep. Graph
  // inputs, initializers, copy steps and subgraph values are not reported. Costs nothing when empty.
  std::function<void(const std::string& name, const Value& value)> on_value;
  // Set by the run: the intra-op threads it used (1 when the adaptive policy ran it on the calling thread alone;
  // SessionOptions::adapt_threads), and the longest time one of its threads waited for a CPU, in ms, when the
  // policy measured this run (-1 when it did not).
  int threads_used = 0;
  double cpu_wait_ms = -1;
};

class Session {
 public:
  // Throws ferry::Error (InvalidModel, Unsupported, ...) naming the model path, node and op on failure.
  static std::unique_ptr<Session> Create(const std::string& model_path, const SessionOptions& options = {});
  static std::unique_ptr<Session> CreateFromBytes(std::span<const uint8_t> bytes, const SessionOptions& options = {},
                                                  const std::string& base_dir = "");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<IoInfo>& inputs() const;   // inputs the caller must feed (initializers excluded)
  const std::vector<IoInfo>& outputs() const;
  // Graph inputs that have an initializer: defaults a run may override by feeding the name (ONNX Runtime's
  // get_overridable_initializers()).
  const std::vector<IoInfo>& overridable_initializers() const;
  const ModelMetadata& metadata() const;
  // Where each node runs and why, segments, copies, fallback ratios (`ferry run --report`).
  const PlacementReport& placement() const;
  // The graph this session runs (after the optimizer's passes), in the text form of src/ir/dump.h
  // (`ferry run --dump-ir`). For reading, not parsing: the format may change.
  std::string DumpIr() const;
  // Predicted memory for the inputs' shapes (SessionOptions::input_shapes fixes symbolic ones); see
  // MemoryPrediction. No run, no allocation of activations; computed on the first call. Kernels pack their
  // weights at creation when their input shapes are static; with symbolic shapes they pack on their first run,
  // so kernel_bytes counts only what they hold at the first call.
  const MemoryPrediction& PredictMemory() const;
  // The activation arenas planned so far: at creation for static inputs, else before each new signature's first
  // run (most recently used first; at most 8 signatures).
  std::vector<ArenaStats> arenas() const;
  // What the kernels hold for themselves now (pre-packed weights; kernels that pack per input shape add to it
  // as they run).
  int64_t kernel_held_bytes() const;

  // Run the model. Every required input must be given by name; dtypes and static dims are checked
  // (InvalidArgumentError naming the input, expected vs got). Thread-safe.
  // Inputs and outputs may be tensors, sequences or optionals.
  std::vector<NamedValue> RunValues(const std::vector<NamedValue>& inputs) const;
  // Same, also counting the copies between devices this run made.
  std::vector<NamedValue> RunValues(const std::vector<NamedValue>& inputs, RunStats* stats) const;
  // Tensor-only convenience: throws InvalidArgumentError if an output is not a tensor.
  std::vector<std::pair<std::string, Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& inputs) const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The inputs a caller feeds a model (graph inputs without an initializer) as Session::inputs() would list them
// before any SessionOptions::input_shapes, read from the file without its weights and without creating a session:
// what a tool needs to fix free dimensions before creating one. Throws as Session::Create does for a model it
// cannot import.
std::vector<IoInfo> ReadModelInputs(const std::string& model_path);
std::vector<IoInfo> ReadModelInputs(std::span<const uint8_t> bytes);

}  // namespace ferry
