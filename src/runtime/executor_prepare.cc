// Preparing a signature of the top graph (kernel.h: create -> prepare -> run) and planning its arena from what
// the kernels declared (arena.h); preparing a step as it runs when the signature's preparation could not.
#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "runtime/executor_internal.h"

namespace ferry::runtime {

// The graph inputs of a signature with static shapes: a data-less tensor per required input (Prepare reads only
// dtypes and shapes of graph inputs), none for inputs with an initializer or an optional type (what a run that
// does not feed them passes). nullopt when a required input's element type or a dim is not static.
std::optional<std::vector<Value>> StaticInputs(const ir::Graph& g) {
  std::vector<Value> inputs;
  for (const ir::Value* v : g.inputs()) {
    if (v->is_initializer() || v->type().kind == ir::TypeInfo::Kind::kOptional) {
      inputs.emplace_back();
      continue;
    }
    const auto dims = v->type().static_dims();
    if (!v->type().is_tensor() || v->type().elem_type == DataType::kUndefined || !dims) return std::nullopt;
    inputs.emplace_back(Tensor::Wrap(v->type().elem_type, *dims, nullptr, nullptr));
  }
  return inputs;
}

namespace {

// The key of a step's inputs for PreparedCache: per input its kind, dtype, rank and dims.
std::vector<int64_t> InputKey(std::span<const Value* const> ins) {
  std::vector<int64_t> key;
  key.reserve(ins.size() * 6);
  for (const Value* v : ins) {
    if (!v || v->is_none()) {
      key.push_back(-1);
    } else if (!v->is_tensor()) {
      key.push_back(-2);
    } else {
      const Tensor& t = v->tensor();
      key.push_back(static_cast<int64_t>(t.dtype()));
      key.push_back(static_cast<int64_t>(t.rank()));
      key.insert(key.end(), t.shape().begin(), t.shape().end());
    }
  }
  return key;
}

// Ops whose result must not be computed before the run even when every input is known: they draw random numbers.
bool IsRandomOp(const ir::Node& n) {
  static const std::unordered_set<std::string> kRandom = {"RandomNormal", "RandomNormalLike", "RandomUniform",
                                                          "RandomUniformLike", "Multinomial", "Bernoulli",
                                                          "Dropout"};  // its mask, when training
  return kRandom.count(n.op_type()) > 0;
}

// Outputs of at most this many elements are computed before the run when every input is known (shape arithmetic).
constexpr int64_t kMaxPreparedValueElems = 1024;

// The arena plan's key: every input's kind, dtype and shape.
std::string InputSignature(const std::vector<Value>& inputs) {
  std::string sig;
  for (const Value& v : inputs) {
    if (v.is_tensor()) {
      sig += std::string(DataTypeName(v.tensor().dtype())) + ShapeToString(v.tensor().shape());
    } else if (v.is_none()) {
      sig += "none";
    } else {
      sig += "value";  // sequences, optionals: the plan may not fit, and then falls back per output
    }
    sig += ';';
  }
  return sig;
}

}  // namespace

std::shared_ptr<const Executor::PreparedRun> Executor::Prepared(const std::vector<Value>& inputs) const {
  const std::string signature = InputSignature(inputs);
  {
    std::lock_guard lock(prepared_mu_);
    for (auto it = prepared_.begin(); it != prepared_.end(); ++it) {
      if (it->first != signature) continue;
      prepared_.splice(prepared_.begin(), prepared_, it);
      return it->second;
    }
  }
  // Two first runs of one signature at once may both prepare it; the first to finish is kept.
  std::shared_ptr<const PreparedRun> run = PrepareRun(inputs);
  std::lock_guard lock(prepared_mu_);
  for (const auto& [sig, known] : prepared_) {
    if (sig == signature) return known;
  }
  prepared_.emplace_front(signature, run);
  if (prepared_.size() > kMaxPrepared) prepared_.pop_back();
  return run;
}

namespace {

// What the preparation knows of a slot's value.
struct SlotSpec {
  bool known = false;  // `spec` holds (else: only the run will tell)
  InputSpec spec;
  std::shared_ptr<const Tensor> value;  // its data, when known before the run
  bool derived = false;                 // `value` was computed by the preparation (not an initializer)
};

InputSpec TensorSpec(const Tensor& t, const Tensor* data) {
  InputSpec s;
  s.kind = InputSpec::Kind::kTensor;
  s.dtype = t.dtype();
  s.shape = t.shape();
  s.data = data;
  return s;
}

}  // namespace

std::shared_ptr<const Executor::PreparedRun> Executor::PrepareRun(const std::vector<Value>& inputs) const {
  const CompiledGraph& cg = *compiled_.at(model_.graph.get());
  auto run = std::make_shared<PreparedRun>();
  run->steps.resize(cg.steps.size());
  std::vector<SlotSpec> slots(static_cast<size_t>(cg.num_slots));
  for (const auto& [s, tensor] : cg.constants) {
    SlotSpec& slot = slots[static_cast<size_t>(s)];
    slot.known = true;
    if (tensor->raw_data() || tensor->size() == 0) slot.value = tensor;  // a released initializer has no data
    slot.spec = TensorSpec(*tensor, slot.value.get());
  }
  for (const auto& [s, v] : cg.device_constants) slots[static_cast<size_t>(s)] = {true, InputSpec::Of(&v), {}, false};
  const size_t n_in = std::min(inputs.size(), cg.input_slots.size());
  for (size_t i = 0; i < cg.input_slots.size(); ++i) {
    SlotSpec& slot = slots[static_cast<size_t>(cg.input_slots[i])];
    const bool fed = i < n_in && (!inputs[i].is_none() || inputs[i].is_optional());
    if (fed) {
      slot = {true, InputSpec::Of(&inputs[i]), {}, false};  // a feed's data changes from run to run
    } else if (!slot.known) {
      slot = {true, InputSpec{}, {}, false};  // neither fed nor an initializer: absent
    }
  }
  const KernelOptions options{threads_, deterministic_};
  std::vector<const Value*> ins;
  std::vector<Value> in_values, outs;
  for (size_t t = 0; t < cg.steps.size(); ++t) {
    const CompiledGraph::Step& step = cg.steps[t];
    if (step.copy) {
      const SlotSpec& from = slots[static_cast<size_t>(step.in[0])];
      SlotSpec& to = slots[static_cast<size_t>(step.out[0])];
      to = {from.known, from.spec, {}, false};
      to.spec.data = nullptr;  // on another device
      continue;
    }
    const ir::Node& n = *step.node;
    PreparedRun::Step& ps = run->steps[t];
    bool ready = true, all_data = true;
    ps.inputs.resize(step.in.size());
    ps.derived.resize(step.in.size());
    for (size_t k = 0; k < step.in.size(); ++k) {
      if (!step.constant_input[k]) ps.checked.push_back(static_cast<int>(k));  // an initializer never changes
      if (step.in[k] < 0) continue;
      const SlotSpec& slot = slots[static_cast<size_t>(step.in[k])];
      ready = ready && slot.known;
      ps.inputs[k] = slot.spec;
      ps.inputs[k].data = slot.value.get();
      if (slot.derived) ps.derived[k] = slot.value;
      all_data = all_data && (slot.value || slot.spec.kind == InputSpec::Kind::kAbsent);
    }
    if (!ready || !n.subgraphs().empty()) {
      ps = PreparedRun::Step{};  // prepared when it runs; its outputs are unknown until then
      continue;
    }
    PrepareContext ctx(n, ps.inputs, options, model_desc_);
    Guarded(n, [&] { step.kernel->Prepare(ctx); });
    auto prepared = std::make_shared<PreparedKernel>(ctx.Finish());
    if (!prepared->workspace.buffers().empty()) run->workspace[step.backend->device()].Merge(prepared->workspace);

    // Shape arithmetic on known values (Shape -> Cast -> Mul -> Concat): computed now, so that the kernels reading
    // it are prepared for its value (a Reshape's target shape). Host kernels of the default domain only, nothing
    // random, small outputs only.
    bool evaluate = all_data && IsHostDevice(step.backend->device()) && !IsRandomOp(n) &&
                    (n.domain().empty() || n.domain() == "ai.onnx");
    for (size_t k = 0; evaluate && k < step.out.size(); ++k) {
      const OutputSpec& o = prepared->outputs[k];
      evaluate = o.is_tensor() && o.dtype != DataType::kString && ShapeElementCount(o.shape) <= kMaxPreparedValueElems;
    }
    if (evaluate) {
      in_values.assign(step.in.size(), Value());
      ins.assign(step.in.size(), nullptr);
      for (size_t k = 0; k < step.in.size(); ++k) {
        if (const Tensor* d = ps.inputs[k].data) {
          in_values[k] = Value(*d);
          ins[k] = &in_values[k];
        }
      }
      outs.assign(step.out.size(), Value());
      SubgraphRunner none = [&n](const ir::Graph&, std::vector<Value>) -> std::vector<Value> {
        throw InternalError(n.Describe() + ": has no subgraph to run");
      };
      KernelContext kctx(n, ins, outs, threads_, none);
      kctx.set_prepared(prepared.get());
      kctx.set_deterministic(deterministic_);
      Guarded(n, [&] { step.kernel->Compute(kctx); });
      for (size_t k = 0; k < step.out.size(); ++k) {
        OutputSpec& o = prepared->outputs[k];
        if (!o.value && outs[k].is_tensor() && outs[k].tensor().shape() == o.shape) {
          o.value = std::make_shared<const Tensor>(outs[k].tensor());
        }
      }
    }
    for (size_t k = 0; k < step.out.size(); ++k) {
      if (step.out[k] < 0) continue;
      const OutputSpec& o = prepared->outputs[k];
      SlotSpec& slot = slots[static_cast<size_t>(step.out[k])];
      if (!o.is_tensor()) {
        slot = SlotSpec{};
        continue;
      }
      slot.known = true;
      // A large declared value (a Constant's weights) is not shape arithmetic: later kernels are not prepared for
      // its data, so no run needs to check it.
      const bool small = o.value && o.value->size() <= kMaxPreparedValueElems;
      slot.value = small ? o.value : nullptr;
      slot.derived = small;
      slot.spec = InputSpec{};
      slot.spec.kind = InputSpec::Kind::kTensor;
      slot.spec.dtype = o.dtype;
      slot.spec.shape = o.shape;
    }
    ps.kernel = std::move(prepared);
  }
  if (memory_arena_) run->arena = PlanArena(cg, *run);
  return run;
}

// One buffer per prepared tensor output of a top-graph step, live from its step to the step releasing the last
// slot that holds it: views (OutputSpec::view_of) share their input's buffer and extend its life; an in-place
// output (in_place_of) takes over its input's bytes when the executor lets the kernel reuse that input and
// nothing else holds the buffer later. Buffers that escape the run (graph outputs and what they view) and the
// outputs of device kernels are left out.
std::shared_ptr<ArenaPlan> Executor::PlanArena(const CompiledGraph& cg, const PreparedRun& run) {
  std::vector<PlannedBuffer> buffers;
  std::vector<char> escapes, taken;
  std::vector<int> buffer_of(static_cast<size_t>(cg.num_slots), -1);
  for (size_t t = 0; t < cg.steps.size(); ++t) {
    const CompiledGraph::Step& step = cg.steps[t];
    const PreparedKernel* pk = run.steps[t].kernel.get();
    if (!pk || !IsHostDevice(step.backend->device())) continue;  // device kernels allocate device memory
    const int step_index = static_cast<int>(t);
    auto input_buffer = [&](int j) {
      const int in = j >= 0 && static_cast<size_t>(j) < step.in.size() ? step.in[static_cast<size_t>(j)] : -1;
      return in >= 0 ? buffer_of[static_cast<size_t>(in)] : -1;
    };
    for (size_t k = 0; k < step.out.size() && k < pk->outputs.size(); ++k) {
      const int s = step.out[k];
      if (s < 0) continue;
      const OutputSpec& o = pk->outputs[k];
      const int last = cg.release_step[static_cast<size_t>(s)];
      if (o.view_of >= 0) {
        const int b = input_buffer(o.view_of);
        if (b < 0) continue;
        buffer_of[static_cast<size_t>(s)] = b;
        PlannedBuffer& viewed = buffers[static_cast<size_t>(b)];
        if (last == CompiledGraph::kEscapes) {
          escapes[static_cast<size_t>(b)] = 1;
        } else {
          viewed.last_step = std::max(viewed.last_step, last);
        }
        continue;
      }
      // A large declared value is what Compute returns (a Constant's tensor): not planned.
      const bool returned = o.value && o.value->size() > kMaxPreparedValueElems;
      if (!o.is_tensor() || returned || last == CompiledGraph::kEscapes) continue;
      const int64_t bytes = ArenaTensorBytes(o.dtype, o.shape);
      if (bytes <= 0) continue;
      PlannedBuffer pb{step_index, static_cast<int>(k), bytes, step_index, std::max(last, step_index), -1};
      const int j = o.in_place_of;
      if (j >= 0 && static_cast<size_t>(j) < step.reusable.size() && step.reusable[static_cast<size_t>(j)]) {
        const int b = input_buffer(j);
        if (b >= 0 && !escapes[static_cast<size_t>(b)] && !taken[static_cast<size_t>(b)] &&
            buffers[static_cast<size_t>(b)].last_step == step_index && buffers[static_cast<size_t>(b)].bytes >= bytes) {
          pb.alias_of = b;
          taken[static_cast<size_t>(b)] = 1;
        }
      }
      buffer_of[static_cast<size_t>(s)] = static_cast<int>(buffers.size());
      buffers.push_back(pb);
      escapes.push_back(0);
      taken.push_back(0);
    }
  }
  // Drop the escaping buffers, renumbering the aliases.
  std::vector<int> index(buffers.size(), -1);
  std::vector<PlannedBuffer> kept;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (escapes[i]) continue;
    PlannedBuffer b = buffers[i];
    b.alias_of = b.alias_of >= 0 ? index[static_cast<size_t>(b.alias_of)] : -1;
    index[i] = static_cast<int>(kept.size());
    kept.push_back(b);
  }
  return runtime::PlanArena(kept);
}

std::map<std::string, Workspace> Executor::kernel_workspace() const {
  const auto inputs = StaticInputs(*model_.graph);
  if (!inputs) return {};
  return Prepared(*inputs)->workspace;
}

std::optional<Executor::ArenaInfo> Executor::static_arena() const {
  const auto inputs = StaticInputs(*model_.graph);
  if (!inputs || !memory_arena_) return std::nullopt;
  const std::shared_ptr<const PreparedRun> run = Prepared(*inputs);
  ArenaInfo info;
  info.signature = InputSignature(*inputs);
  if (const ArenaPlan* plan = run->arena.get()) {
    info.arena_bytes = plan->arena_bytes();
    info.lower_bound = plan->lower_bound();
    info.slices = plan->slices().size();
    info.blocks = plan->blocks_created();
  }
  return info;
}

std::vector<Executor::ArenaInfo> Executor::arenas() const {
  std::lock_guard lock(prepared_mu_);
  std::vector<ArenaInfo> out;
  for (const auto& [signature, run] : prepared_) {
    const ArenaPlan* plan = run->arena.get();
    if (!plan) continue;
    out.push_back({signature, plan->arena_bytes(), plan->lower_bound(), plan->slices().size(), plan->blocks_created()});
  }
  return out;
}

std::shared_ptr<const PreparedKernel> Executor::PrepareAtRun(const CompiledGraph& cg, size_t step_index,
                                                             std::span<const Value* const> ins) const {
  const CompiledGraph::Step& step = cg.steps[step_index];
  std::vector<int64_t> key = InputKey(ins);
  if (auto found = step.cache->Find(key)) return found;
  // Only initializers' data is fixed for every run with these shapes; a kernel prepared here serves them all.
  std::vector<InputSpec> specs(ins.size());
  for (size_t k = 0; k < ins.size(); ++k) {
    const Value* v = ins[k];
    const bool constant = step.constant_input[k] && v && v->is_tensor() && v->tensor().raw_data();
    specs[k] = InputSpec::Of(v, constant ? &v->tensor() : nullptr);
  }
  PrepareContext ctx(*step.node, specs, KernelOptions{threads_, deterministic_}, model_desc_);
  Guarded(*step.node, [&] { step.kernel->Prepare(ctx); });
  auto prepared = std::make_shared<const PreparedKernel>(ctx.Finish());
  step.cache->Add(std::move(key), prepared);
  return prepared;
}

}  // namespace ferry::runtime
