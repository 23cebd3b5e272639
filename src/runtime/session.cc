// Session orchestrates the stages (the front-end pipeline of runtime/pipeline.h: import -> inline functions -> fix
// shapes -> infer types -> passes -> place; then compile -> run); it owns no algorithm.
#include "ferry/session.h"

#include <algorithm>
#include <mutex>
#include <thread>

#include "backends/backend.h"
#include "core/buffer_pool.h"
#include "core/jit_code_memory.h"
#include "ferry/limits.h"
#include "ir/dump.h"
#include "core/human_format.h"
#include "runtime/executor.h"
#include "runtime/memory_estimate.h"
#include "runtime/pipeline.h"

namespace ferry {

struct Session::Impl {
  SessionOptions options;
  std::unique_ptr<ir::Model> model;
  std::unique_ptr<runtime::Executor> executor;
  std::vector<IoInfo> inputs, outputs, overridable;
  ModelMetadata metadata;
  std::vector<const ir::Value*> required;  // graph inputs the caller must feed, in inputs order
  PlacementReport placement;
  passes::PassReport passes;
  std::once_flag predicted_once;
  MemoryPrediction predicted;
  int64_t jit_code_bytes = 0;  // JIT code generated while the kernels were built (MemoryPrediction::jit_code_bytes)
};

namespace {

IoInfo MakeIoInfo(const ir::Value& v) {
  IoInfo info;
  info.name = v.name();
  const ir::TypeInfo& t = v.type();
  switch (t.kind) {
    case ir::TypeInfo::Kind::kSequence: info.kind = "sequence"; break;
    case ir::TypeInfo::Kind::kOptional: info.kind = "optional"; break;
    case ir::TypeInfo::Kind::kMap: info.kind = "map"; break;
    default: info.kind = "tensor"; break;
  }
  info.dtype = t.elem_type;
  if ((t.kind == ir::TypeInfo::Kind::kSequence || t.kind == ir::TypeInfo::Kind::kOptional) && t.elem) {
    const ir::TypeInfo* e = t.elem.get();
    info.element_kind = e->kind == ir::TypeInfo::Kind::kSequence ? "sequence" : "tensor";
    if (e->kind == ir::TypeInfo::Kind::kSequence && e->elem) e = e->elem.get();
    info.dtype = e->elem_type;
  }
  if (t.shape) {
    info.has_shape = true;
    for (const auto& d : *t.shape) {
      info.dims.push_back(d.is_static() ? d.value : -1);
      info.dim_names.push_back(d.symbol);
    }
  }
  return info;
}

// Checks the session's own options, then runs the front-end pipeline (runtime/pipeline.h) with `prepare` (from a
// file or from bytes) through placement, and builds the executor on what it placed.
template <typename PrepareFn>
std::unique_ptr<Session::Impl> Build(PrepareFn prepare, const SessionOptions& options) {
  auto impl = std::make_unique<Session::Impl>();
  impl->options = options;
  if (options.threads < 0 || options.threads > kMaxThreads) {
    throw InvalidArgumentError("session options: threads = " + std::to_string(options.threads) +
                               " is out of range: expected 0 (all hardware threads) to " +
                               std::to_string(kMaxThreads));
  }
  if (options.deterministic && options.threads <= 0) {
    // "All hardware threads" differs between machines, and the cpu backend's results depend on the thread count.
    throw InvalidArgumentError(
        "session options: deterministic mode needs a fixed thread count (threads = " + std::to_string(options.threads) +
        " means all hardware threads, which differs between machines); set threads (`--threads N`)");
  }
  using Adaptation = SessionOptions::ThreadAdaptation;
  if (options.deterministic && options.adapt_threads == Adaptation::kOn) {
    throw InvalidArgumentError(
        "session options: adapt_threads = on and deterministic exclude each other (a run that gives up threads "
        "splits oneDNN's work differently); set adapt_threads to auto or off");
  }
  const bool adaptive = !options.deterministic && (options.adapt_threads == Adaptation::kOn ||
                                                   (options.adapt_threads == Adaptation::kAuto && options.threads <= 0));
  if (impl->options.threads <= 0) {
    impl->options.threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
  }
  if (options.backends.empty()) throw InvalidArgumentError("session options: the backend list is empty");
  runtime::PipelineOptions pipeline;
  pipeline.target = runtime::ResolveTarget({.backends = options.backends,
                                            .pins = options.pins,
                                            .plugins = options.plugins,
                                            .allow_fallback = options.allow_fallback,
                                            .isa = options.isa,
                                            .isa_exact = false,
                                            .devices = runtime::DeviceRule::kRequire,
                                            .compute_capability = 0});
  pipeline.input_shapes = options.input_shapes;
  pipeline.level = options.optimization_level;
  pipeline.disabled_passes = options.disabled_passes;
  pipeline.legalize = options.legalize;
  runtime::PreparedModel prepared = prepare(pipeline);
  std::unique_ptr<ir::Model> model = std::move(prepared.model);
  const runtime::Placement& placement = prepared.placement;
  impl->passes = std::move(prepared.passes);
  impl->placement = runtime::MakePlacementReport(*model, placement, pipeline.target.placement.backends);
  const JitCodeGrowth jit;
  impl->executor =
      std::make_unique<runtime::Executor>(*model, placement, impl->options.threads, options.memory_arena,
                                          options.deterministic,
                                          [](const ir::Value* released, std::shared_ptr<const Tensor> dataless) {
        // Every kernel reading it packed its own copy: the model (which this session owns and may change)
        // keeps only the dtype and shape, so the weights are not held twice.
        const_cast<ir::Value*>(released)->set_initializer(std::move(dataless));
      },
                                          adaptive);
  impl->jit_code_bytes = jit.Bytes();
  for (const ir::Value* v : model->graph->RequiredInputs()) {
    impl->inputs.push_back(MakeIoInfo(*v));
    impl->required.push_back(v);
  }
  for (const ir::Value* v : model->graph->outputs()) impl->outputs.push_back(MakeIoInfo(*v));
  for (const ir::Value* v : model->graph->inputs()) {
    if (v->is_initializer()) impl->overridable.push_back(MakeIoInfo(*v));
  }
  impl->metadata = {model->producer_name, model->producer_version, model->domain, model->doc,
                    model->graph->name(), model->graph->doc(), model->model_version,
                    {model->metadata.begin(), model->metadata.end()}};
  impl->model = std::move(model);
  return impl;
}

MemoryPrediction Predict(const Session::Impl& impl) {
  const runtime::GraphMemoryEstimate e = runtime::EstimateGraphMemory(*impl.model->graph);
  MemoryPrediction p;
  // First: asking for the workspace may build the primitives a first run would (and pack weights for them).
  const JitCodeGrowth jit;
  const std::map<std::string, Workspace> workspace = impl.executor->kernel_workspace();
  p.jit_code_bytes = impl.jit_code_bytes + jit.Bytes();
  for (const auto& [device, ws] : workspace) {
    for (const auto& [name, b] : ws.buffers()) {
      p.workspace.push_back({device, name, b.total(), b.threads});
      p.workspace_bytes += b.total();
    }
  }
  p.weights_bytes = e.weights_bytes - impl.executor->released_bytes();  // freed once packed by their kernels
  p.kernel_bytes = impl.executor->kernel_held_bytes();
  // The arena the runs will take when the inputs are static (the executor planned it from the prepared kernels'
  // shapes, views and in-place outputs); else the graph's static shapes planned as if nothing shared a buffer.
  if (const auto planned = impl.executor->static_arena()) {
    p.arena_bytes = planned->arena_bytes;
    p.lower_bound = planned->lower_bound;
  } else {
    p.arena_bytes = e.arena_bytes;
    p.lower_bound = e.lower_bound;
  }
  p.io_bytes = e.io_bytes;
  p.unknown = e.unknown;
  return p;
}

void CheckMemoryLimit(const ir::Model& model, const MemoryPrediction& p, int64_t limit) {
  if (p.total() <= limit) return;
  throw ResourceExhaustedError(
      model.Describe() + ": predicted memory " + HumanBytes(p.total()) + " exceeds the memory limit of " +
      HumanBytes(limit) + " (weights " + HumanBytes(p.weights_bytes) + ", kernels' packed copies " +
      HumanBytes(p.kernel_bytes) + ", activation arena " + HumanBytes(p.arena_bytes) + ", inputs and outputs " +
      HumanBytes(p.io_bytes) + ", JIT code " + HumanBytes(p.jit_code_bytes) + ", kernels' workspace " +
      HumanBytes(p.workspace_bytes) + ")" +
      (p.unknown.empty() ? "" : "; " + std::to_string(p.unknown.size()) + " value(s) of unknown size not counted"));
}

void CheckInput(const ir::Model& model, const ir::Value& decl, const Value& v) {
  const ir::TypeInfo& t = decl.type();
  std::string where = model.Describe() + ": input '" + decl.name() + "'";
  if (t.kind == ir::TypeInfo::Kind::kTensor) {
    if (!v.is_tensor()) throw InvalidArgumentError(where + " must be a tensor");
    const Tensor& x = v.tensor();
    if (t.elem_type != DataType::kUndefined && x.dtype() != t.elem_type) {
      throw InvalidArgumentError(where + ": expected dtype " + std::string(DataTypeName(t.elem_type)) + ", got " +
                                 std::string(DataTypeName(x.dtype())));
    }
    if (t.shape) {
      if (static_cast<size_t>(x.rank()) != t.shape->size()) {
        throw InvalidArgumentError(where + ": expected rank " + std::to_string(t.shape->size()) + " (shape " +
                                   t.ToString() + "), got shape " + ShapeToString(x.shape()));
      }
      for (size_t i = 0; i < t.shape->size(); ++i) {
        const ir::Dim& d = (*t.shape)[i];
        if (d.is_static() && d.value != x.dim(static_cast<int64_t>(i))) {
          throw InvalidArgumentError(where + ": dimension " + std::to_string(i) + " must be " +
                                     std::to_string(d.value) + " (shape " + t.ToString() + "), got shape " +
                                     ShapeToString(x.shape()));
        }
      }
    }
  } else if (t.kind == ir::TypeInfo::Kind::kSequence) {
    if (!v.is_sequence()) throw InvalidArgumentError(where + " must be a sequence");
  }
}

// Builds a session so that what creation frees leaves the process: the weights its kernels packed and the
// import's and optimizer's temporaries skip the buffer pool, and the free pages they leave in malloc's heap (its
// blocks under kMapMinBytes, the protobuf's tensor data) are handed back once the session is built (what other
// sessions keep in the pool stays there).
template <typename BuildFn>
std::unique_ptr<Session::Impl> BuildReleasingFreed(BuildFn build) {
  std::unique_ptr<Session::Impl> impl;
  {
    const ScopedPoolBypass bypass;
    impl = build();
  }
  ReturnFreeHeapPages();
  return impl;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::Create(const std::string& model_path, const SessionOptions& options) {
  auto session = std::unique_ptr<Session>(new Session(BuildReleasingFreed([&] {
    return Build(
        [&](const runtime::PipelineOptions& p) {
          return runtime::PrepareModel(model_path, p, runtime::Stage::kPlaced);
        },
        options);
  })));
  if (options.memory_limit > 0) {
    CheckMemoryLimit(*session->impl_->model, session->PredictMemory(), options.memory_limit);
  }
  return session;
}

std::unique_ptr<Session> Session::CreateFromBytes(std::span<const uint8_t> bytes, const SessionOptions& options,
                                                  const std::string& base_dir) {
  auto session = std::unique_ptr<Session>(new Session(BuildReleasingFreed([&] {
    return Build(
        [&](const runtime::PipelineOptions& p) {
          return runtime::PrepareModelFromBytes(bytes, base_dir, p, runtime::Stage::kPlaced);
        },
        options);
  })));
  if (options.memory_limit > 0) {
    CheckMemoryLimit(*session->impl_->model, session->PredictMemory(), options.memory_limit);
  }
  return session;
}

SessionOptions::ThreadAdaptation SessionOptions::ParseThreadAdaptation(std::string_view name) {
  if (name == "auto") return ThreadAdaptation::kAuto;
  if (name == "on") return ThreadAdaptation::kOn;
  if (name == "off") return ThreadAdaptation::kOff;
  throw InvalidArgumentError("expected auto, on or off, got '" + std::string(name) + "'");
}

const MemoryPrediction& Session::PredictMemory() const {
  std::call_once(impl_->predicted_once, [this] { impl_->predicted = Predict(*impl_); });
  return impl_->predicted;
}

namespace {

std::vector<IoInfo> RequiredInputsOf(const runtime::PreparedModel& prepared) {
  std::vector<IoInfo> out;
  for (const ir::Value* v : prepared.model->graph->RequiredInputs()) out.push_back(MakeIoInfo(*v));
  return out;
}

runtime::PipelineOptions WithoutWeights() {
  runtime::PipelineOptions o;
  o.import.load_initializer_data = false;
  return o;
}

}  // namespace

std::vector<IoInfo> ReadModelInputs(const std::string& model_path) {
  return RequiredInputsOf(runtime::PrepareModel(model_path, WithoutWeights(), runtime::Stage::kImported));
}

std::vector<IoInfo> ReadModelInputs(std::span<const uint8_t> bytes) {
  return RequiredInputsOf(runtime::PrepareModelFromBytes(bytes, "", WithoutWeights(), runtime::Stage::kImported));
}

int64_t Session::kernel_held_bytes() const { return impl_->executor->kernel_held_bytes(); }

std::vector<ArenaStats> Session::arenas() const {
  std::vector<ArenaStats> out;
  for (const auto& a : impl_->executor->arenas()) out.push_back({a.signature, a.arena_bytes, a.lower_bound, a.slices, a.blocks});
  return out;
}

const std::vector<IoInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Session::outputs() const { return impl_->outputs; }
const std::vector<IoInfo>& Session::overridable_initializers() const { return impl_->overridable; }
const ModelMetadata& Session::metadata() const { return impl_->metadata; }
const PlacementReport& Session::placement() const { return impl_->placement; }
std::string Session::DumpIr() const { return ir::DumpModel(*impl_->model); }

std::vector<NamedValue> Session::RunValues(const std::vector<NamedValue>& inputs) const {
  return RunValues(inputs, nullptr);
}

std::vector<NamedValue> Session::RunValues(const std::vector<NamedValue>& inputs, RunStats* stats) const {
  const ir::Model& model = *impl_->model;
  const auto& graph_inputs = model.graph->inputs();
  std::vector<Value> feed(graph_inputs.size());
  std::vector<bool> given(graph_inputs.size(), false);
  for (const auto& [name, value] : inputs) {
    size_t idx = graph_inputs.size();
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      if (graph_inputs[i]->name() == name) idx = i;
    }
    if (idx == graph_inputs.size()) {
      std::string expected;
      for (const auto& info : impl_->inputs) expected += (expected.empty() ? "" : ", ") + info.name;
      throw InvalidArgumentError(model.Describe() + ": unknown input '" + name + "' (the model's inputs are: " +
                                 expected + ")");
    }
    if (given[idx]) throw InvalidArgumentError(model.Describe() + ": input '" + name + "' is given twice");
    CheckInput(model, *graph_inputs[idx], value);
    feed[idx] = value;
    given[idx] = true;
  }
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    const ir::Value* v = graph_inputs[i];
    if (!given[i] && !v->is_initializer() && v->type().kind != ir::TypeInfo::Kind::kOptional) {
      throw InvalidArgumentError(model.Describe() + ": required input '" + v->name() + "' (" + v->type().ToString() +
                                 ") is missing");
    }
  }
  std::vector<Value> results = impl_->executor->Run(std::move(feed), stats);
  std::vector<NamedValue> out;
  const auto& graph_outputs = model.graph->outputs();
  for (size_t i = 0; i < results.size(); ++i) out.emplace_back(graph_outputs[i]->name(), std::move(results[i]));
  return out;
}

std::vector<std::pair<std::string, Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& inputs) const {
  std::vector<NamedValue> in;
  for (const auto& [n, t] : inputs) in.emplace_back(n, Value(t));
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [n, v] : RunValues(in)) {
    if (!v.is_tensor()) throw InvalidArgumentError("output '" + n + "' is not a tensor; use RunValues");
    out.emplace_back(n, v.tensor());
  }
  return out;
}

}  // namespace ferry
