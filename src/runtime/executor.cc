#include "runtime/executor.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <unordered_set>

#include "ferry/error.h"
#include "runtime/executor_internal.h"
#include "runtime/value_reads.h"

namespace ferry::runtime {

struct Executor::Frame {
  const CompiledGraph* cg = nullptr;
  std::vector<Value> slots;
  const Frame* parent = nullptr;
  RunStats* stats = nullptr;
  // The run under the thread policy (subgraphs share the top frame's): its threads_used() is the intra-op count
  // the kernels are told, the executor's or 1 while the policy runs this run on the calling thread.
  ThreadPolicy::Run* policy = nullptr;
};

namespace {

double ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

int64_t ValueBytes(const Value& v) {
  if (v.is_tensor()) return static_cast<int64_t>(v.tensor().nbytes());
  int64_t n = 0;
  if (v.is_sequence()) {
    for (const Tensor& t : v.sequence().tensors) n += static_cast<int64_t>(t.nbytes());
  }
  return n;
}

// Device to device goes through the host.
Value CopyValue(const CopyPlan& c, const Value& v) {
  if (!c.to) return c.from->CopyToHost(v);
  return c.to->CopyToDevice(c.from ? c.from->CopyToHost(v) : v);
}

// ---- profiling (RunStats::profile) ----

// The step's record: it started at `started` and took `ms`.
NodeTime ProfiledStep(std::chrono::steady_clock::time_point started, double ms, std::string node, std::string op,
                      std::string graph, std::string backend) {
  NodeTime t;
  t.ms = ms;
  t.start_us = std::chrono::duration<double, std::micro>(started.time_since_epoch()).count();
  t.node = std::move(node);
  t.op = std::move(op);
  t.graph = std::move(graph);
  t.backend = std::move(backend);
  return t;
}

// "main" for the top graph, else the subgraph's name.
std::string GraphLabel(const ir::Graph& g) { return g.parent() ? g.name() : "main"; }

void AddStepValue(std::vector<StepValue>& out, int64_t& bytes, const std::string& name, const Value* v) {
  StepValue s;
  s.name = name;
  if (!v || v->is_none()) {
    s.dtype = "none";
  } else if (v->is_tensor()) {
    s.dtype = std::string(DataTypeName(v->tensor().dtype()));
    s.shape = v->tensor().shape();
  } else if (v->is_sequence()) {
    s.dtype = "sequence(" + std::string(DataTypeName(v->sequence().elem_type)) + ")";
    s.shape = {static_cast<int64_t>(v->sequence().tensors.size())};
  }
  s.bytes = v ? ValueBytes(*v) : 0;
  bytes += s.bytes;
  out.push_back(std::move(s));
}

std::string CopyDescription(const CopyPlan& c) {
  return "copy of '" + c.value->name() + "' from " + c.from_device + " to " + c.to_device + " (" + c.reason + ")";
}

}  // namespace

Executor::Executor(const ir::Model& model, const Placement& placement, int threads, bool memory_arena,
                   bool deterministic, ReleaseFn release, bool adaptive_threads)
    : model_(model),
      model_desc_(model.Describe()),
      threads_(threads),
      thread_policy_(adaptive_threads && threads > 1 ? std::make_unique<ThreadPolicy>(threads) : nullptr),
      memory_arena_(memory_arena),
      deterministic_(deterministic),
      release_(std::move(release)) {
  Compile(*model.graph, placement);
  // Static input shapes: the one signature there is, prepared now, so that the first run is like every other. A
  // signature that fails to prepare is left for the run, which reports the error.
  if (const auto inputs = StaticInputs(*model.graph)) {
    try {
      Prepared(*inputs);
    } catch (const Error&) {
    }
  }
}

namespace {

// The top graph's initializers a kernel may free once it has packed them (OpKernel::ReleaseConstantInput), with
// how many node inputs read each. Kept: graph inputs (a feed may override them) and outputs, string tensors,
// values read inside a subgraph, and values a copy step moves to a device.
std::unordered_map<const ir::Value*, int> ReleasableConstants(const ir::Graph& g, const Placement& placement) {
  std::unordered_set<const ir::Value*> keep(g.inputs().begin(), g.inputs().end());
  keep.insert(g.outputs().begin(), g.outputs().end());
  for (const CopyPlan& c : placement.copies) keep.insert(c.value);
  std::unordered_map<const ir::Value*, int> readers;
  for (const auto& n : g.nodes()) {
    if (!n->subgraphs().empty()) {
      std::vector<const ir::Value*> reads;
      CollectNodeReads(*n, reads);
      keep.insert(reads.begin(), reads.end());
    }
    for (const ir::Value* v : n->inputs()) {
      if (v && v->is_initializer()) ++readers[v];
    }
  }
  for (auto it = readers.begin(); it != readers.end();) {
    const bool drop = keep.count(it->first) || it->first->initializer()->dtype() == DataType::kString;
    it = drop ? readers.erase(it) : std::next(it);
  }
  return readers;
}

}  // namespace

Executor::~Executor() = default;

void Executor::Compile(const ir::Graph& g, const Placement& placement) {
  auto cg = std::make_unique<CompiledGraph>();
  cg->graph = &g;
  auto slot = [&](const ir::Value* v) {
    auto [it, inserted] = cg->slot_of.emplace(v, cg->num_slots);
    if (inserted) {
      ++cg->num_slots;
      if (v->owner() != &g && IsAncestorGraph(v->owner(), &g)) cg->captures.emplace_back(it->second, v);
    }
    return it->second;
  };
  for (const ir::Value* v : g.inputs()) cg->input_slots.push_back(slot(v));
  for (const ir::Value* v : g.initializers()) cg->constants.emplace_back(slot(v), v->initializer_ptr());

  // Copies of this graph, in execution order; copies of its initializers happen now, once.
  std::map<std::pair<const ir::Value*, std::string>, int> copy_slot;  // (value, device) -> slot of the copy
  for (const CopyPlan& c : placement.copies) {
    if (c.graph != &g) continue;
    if (c.once) {
      const int s = cg->num_slots++;
      try {
        cg->device_constants.emplace_back(s, CopyValue(c, Value(*c.value->initializer())));
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {
        throw InternalError(CopyDescription(c) + ": " + e.what());
      }
      copy_slot[{c.value, c.to_device}] = s;
    } else {
      cg->copies.push_back(c);  // the placement does not outlive compilation
    }
  }
  const std::vector<CopyPlan>& copies = cg->copies;
  size_t next_copy = 0;
  std::unordered_map<int, size_t> last_use;  // slot -> index of the last step reading it
  auto emit_copies_before = [&](size_t node_index) {
    for (; next_copy < copies.size() && copies[next_copy].before <= node_index; ++next_copy) {
      const CopyPlan& c = copies[next_copy];
      CompiledGraph::Step step;
      step.copy = &c;
      step.in.push_back(slot(c.value));
      const int s = cg->num_slots++;
      step.out.push_back(s);
      copy_slot[{c.value, c.to_device}] = s;
      last_use[step.in[0]] = cg->steps.size();
      cg->steps.push_back(std::move(step));
    }
  };

  // Weights are freed as soon as every kernel reading them has packed its own copy, so the session never holds
  // all of them twice (the top graph only; the model's reference goes through release_).
  std::unordered_map<const ir::Value*, int> releasable;
  std::unordered_map<int, size_t> constant_index;  // slot -> index in cg->constants
  if (!g.parent() && release_) {
    releasable = ReleasableConstants(g, placement);
    for (size_t c = 0; c < cg->constants.size(); ++c) constant_index[cg->constants[c].first] = c;
  }
  auto release_inputs = [&](const ir::Node& n, OpKernel& kernel) {
    for (size_t k = 0; k < n.num_inputs(); ++k) {
      auto it = releasable.find(n.input(k));
      if (it == releasable.end()) continue;
      if (!kernel.ReleaseConstantInput(k)) {
        releasable.erase(it);  // this reader needs the data
        continue;
      }
      if (--it->second > 0) continue;
      const ir::Value* v = it->first;
      releasable.erase(it);
      auto& tensor = cg->constants[constant_index.at(cg->slot_of.at(v))].second;
      released_bytes_ += static_cast<int64_t>(tensor->nbytes());
      tensor = std::make_shared<const Tensor>(Tensor::Wrap(tensor->dtype(), tensor->shape(), nullptr, nullptr));
      release_(v, tensor);
    }
  };

  for (size_t i = 0; i < g.nodes().size(); ++i) {
    emit_copies_before(i);
    const ir::Node& n = *g.nodes()[i];
    auto found = placement.nodes.find(&n);
    if (found == placement.nodes.end()) throw InternalError(n.Describe() + " was not placed");
    kernels_.push_back(found->second.kernel->create(n, KernelOptions{threads_, deterministic_}));
    if (!releasable.empty()) release_inputs(n, *kernels_.back());
    CompiledGraph::Step step;
    step.node = &n;
    step.kernel = kernels_.back().get();
    step.backend = found->second.backend;
    for (size_t k = 0; k < n.num_inputs(); ++k) {
      const ir::Value* v = n.input(k);
      if (!v) {
        step.in.push_back(-1);
        continue;
      }
      auto copied = copy_slot.find({v, InputDevice(found->second, k)});
      step.in.push_back(copied != copy_slot.end() ? copied->second : slot(v));
    }
    for (const ir::Value* v : n.outputs()) step.out.push_back(v ? slot(v) : -1);
    const size_t step_index = cg->steps.size();
    for (int s : step.in) {
      if (s >= 0) last_use[s] = step_index;
    }
    std::vector<const ir::Value*> reads;
    CollectNodeReads(n, reads);
    for (const ir::Value* v : reads) {
      // Reads of values defined inside the node's own subgraphs are not reads of this graph.
      if (v->owner() == &g || IsAncestorGraph(v->owner(), &g)) last_use[slot(v)] = step_index;
    }
    cg->steps.push_back(std::move(step));
    for (const ir::Graph* sub : n.subgraphs()) Compile(*sub, placement);
  }
  emit_copies_before(g.nodes().size());
  for (const ir::Value* v : g.outputs()) {
    auto copied = copy_slot.find({v, std::string(kHostDevice)});
    cg->output_slots.push_back(copied != copy_slot.end() ? copied->second : slot(v));
  }

  std::unordered_set<int> keep(cg->output_slots.begin(), cg->output_slots.end());
  for (const auto& [s, step_index] : last_use) {
    if (!keep.count(s)) cg->steps[step_index].release.push_back(s);
  }
  cg->release_step.assign(static_cast<size_t>(cg->num_slots), static_cast<int>(cg->steps.size()));
  for (size_t t = 0; t < cg->steps.size(); ++t) {
    for (int s : cg->steps[t].release) cg->release_step[static_cast<size_t>(s)] = static_cast<int>(t);
  }
  for (int s : cg->output_slots) cg->release_step[static_cast<size_t>(s)] = CompiledGraph::kEscapes;
  std::unordered_set<int> constant_slots;
  for (const auto& [s, t] : cg->constants) constant_slots.insert(s);
  for (int s : cg->input_slots) constant_slots.erase(s);  // a feed may override it
  std::unordered_set<int> external(cg->input_slots.begin(), cg->input_slots.end());
  for (const auto& [s, t] : cg->constants) external.insert(s);
  for (const auto& [s, v] : cg->device_constants) external.insert(s);
  for (const auto& [s, v] : cg->captures) external.insert(s);
  for (auto& step : cg->steps) {
    step.constant_input.assign(step.in.size(), 0);
    for (size_t k = 0; k < step.in.size(); ++k) step.constant_input[k] = constant_slots.count(step.in[k]) > 0;
    step.reusable.assign(step.in.size(), 0);
    for (size_t k = 0; k < step.in.size(); ++k) {
      const int s = step.in[k];
      if (s < 0 || external.count(s) || std::count(step.in.begin(), step.in.end(), s) != 1) continue;
      step.reusable[k] = std::find(step.release.begin(), step.release.end(), s) != step.release.end();
    }
  }
  compiled_[&g] = std::move(cg);
}

namespace {

// For a deterministic run: with dynamic adjustment on (OMP_DYNAMIC=true), the OpenMP runtime may give a parallel
// region fewer threads than asked (libgomp decides by the load average), and oneDNN splits its work, reductions
// included, by the threads it gets. Off on the calling thread (whose parallel regions inherit it) for the scope.
class ScopedStaticOmpTeams {
 public:
  explicit ScopedStaticOmpTeams(bool on) : saved_(on ? omp_get_dynamic() : 0), on_(on) {
    if (on_) omp_set_dynamic(0);
  }
  ~ScopedStaticOmpTeams() {
    if (on_) omp_set_dynamic(saved_);
  }
  ScopedStaticOmpTeams(const ScopedStaticOmpTeams&) = delete;
  ScopedStaticOmpTeams& operator=(const ScopedStaticOmpTeams&) = delete;

 private:
  int saved_;
  bool on_;
};

}  // namespace

std::vector<Value> Executor::Run(std::vector<Value> inputs, RunStats* stats) const {
  const CompiledGraph& top = *compiled_.at(model_.graph.get());
  const ScopedStaticOmpTeams static_teams(deterministic_);
  const std::shared_ptr<const PreparedRun> prepared = Prepared(inputs);
  // Runs of one signature compare in time; without a policy, the run has the executor's count.
  ThreadPolicy::Run policy(thread_policy_.get(), prepared.get(), threads_);
  std::vector<Value> outputs;
  if (!prepared->arena) {
    outputs = RunGraph(top, std::move(inputs), nullptr, stats, nullptr, prepared.get(), &policy);
  } else {
    ArenaRun arena(prepared->arena);
    outputs = RunGraph(top, std::move(inputs), nullptr, stats, &arena, prepared.get(), &policy);
  }
  policy.Finish();
  if (stats) {
    stats->threads_used = policy.threads_used();
    stats->cpu_wait_ms = policy.cpu_wait_ms();
  }
  return outputs;
}

int64_t Executor::kernel_held_bytes() const {
  int64_t total = 0;
  for (const auto& k : kernels_) total += k->held_bytes();
  return total;
}

namespace {

// RunStats::on_value: the values a node of the top graph produced, on the host.
void ReportValues(const ir::Node& n, const Backend* backend, const std::vector<int>& out,
                  const std::vector<Value>& slots, const RunStats& stats) {
  const bool on_host = !backend || IsHostDevice(backend->device());
  for (size_t k = 0; k < out.size(); ++k) {
    const ir::Value* v = n.output(k);
    if (out[k] < 0 || !v) continue;
    const Value& value = slots[static_cast<size_t>(out[k])];
    if (on_host || value.is_none()) {
      stats.on_value(v->name(), value);
    } else {
      stats.on_value(v->name(), backend->CopyToHost(value));
    }
  }
}

}  // namespace

std::vector<Value> Executor::RunGraph(const CompiledGraph& cg, std::vector<Value> inputs, const Frame* parent,
                                      RunStats* stats, StepAllocator* arena, const PreparedRun* prepared,
                                      ThreadPolicy::Run* policy) const {
  Frame frame;
  frame.cg = &cg;
  frame.parent = parent;
  frame.stats = stats;
  frame.policy = parent ? parent->policy : policy;
  frame.slots.resize(static_cast<size_t>(cg.num_slots));
  for (const auto& [s, tensor] : cg.constants) frame.slots[static_cast<size_t>(s)] = Value(*tensor);
  for (const auto& [s, v] : cg.device_constants) frame.slots[static_cast<size_t>(s)] = v;
  for (const auto& [s, outer] : cg.captures) {
    const Frame* f = parent;
    while (f && !f->cg->slot_of.count(outer)) f = f->parent;
    if (!f) {
      throw InternalError("outer-scope value '" + outer->name() + "' is not available to graph '" + cg.graph->name() +
                          "'");
    }
    frame.slots[static_cast<size_t>(s)] = f->slots[static_cast<size_t>(f->cg->slot_of.at(outer))];
  }
  const size_t n_in = std::min(inputs.size(), cg.input_slots.size());
  for (size_t i = 0; i < n_in; ++i) {
    if (!inputs[i].is_none() || inputs[i].is_optional()) {
      frame.slots[static_cast<size_t>(cg.input_slots[i])] = std::move(inputs[i]);
    }
  }

  SubgraphRunner runner = [this, &frame](const ir::Graph& body, std::vector<Value> body_inputs) {
    auto it = compiled_.find(&body);
    if (it == compiled_.end()) throw InternalError("subgraph '" + body.name() + "' was not compiled");
    return RunGraph(*it->second, std::move(body_inputs), &frame, frame.stats, nullptr, nullptr);
  };

  std::vector<const Value*> ins;
  std::vector<Value> outs;
  const bool profile = stats && stats->profile;
  for (size_t step_index = 0; step_index < cg.steps.size(); ++step_index) {
    const auto& step = cg.steps[step_index];
    if (arena) arena->set_step(static_cast<int>(step_index));
    const auto started = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    if (step.copy) {
      const Value& src = frame.slots[static_cast<size_t>(step.in[0])];
      try {
        frame.slots[static_cast<size_t>(step.out[0])] = CopyValue(*step.copy, src);
      } catch (const Error&) {
        throw;
      } catch (const std::bad_alloc&) {
        throw ResourceExhaustedError(CopyDescription(*step.copy) + ": out of memory");
      } catch (const std::exception& e) {
        throw InternalError(CopyDescription(*step.copy) + ": " + e.what());
      }
      if (stats) {
        ++stats->copies;
        stats->bytes_copied += ValueBytes(src);
      }
      if (profile) {
        const double ms = ElapsedMs(started);
        NodeTime t = ProfiledStep(started, ms, CopyDescription(*step.copy), "copy", GraphLabel(*cg.graph), "copy");
        AddStepValue(t.inputs, t.input_bytes, step.copy->value->name(), &src);
        AddStepValue(t.outputs, t.output_bytes, step.copy->value->name(),
                     &frame.slots[static_cast<size_t>(step.out[0])]);
        stats->node_times.push_back(std::move(t));
      }
      for (int s : step.release) frame.slots[static_cast<size_t>(s)] = Value();
      continue;
    }
    ins.assign(step.in.size(), nullptr);
    for (size_t k = 0; k < step.in.size(); ++k) {
      if (step.in[k] >= 0) ins[k] = &frame.slots[static_cast<size_t>(step.in[k])];
    }
    // The kernel as prepared for these inputs: the signature's, when the run follows it; else prepared now.
    const PreparedKernel* kernel_state = nullptr;
    std::shared_ptr<const PreparedKernel> prepared_now;
    if (prepared) {
      const PreparedRun::Step& ps = prepared->steps[step_index];
      if (ps.kernel && InputsMatch(ps.inputs, ps.derived, ps.checked, ins)) kernel_state = ps.kernel.get();
    }
    if (!kernel_state) {
      const ThreadPolicy::Run::FullTeam full_team(frame.policy);  // prepare as a run with all threads would
      prepared_now = PrepareAtRun(cg, step_index, ins);
      kernel_state = prepared_now.get();
    }
    outs.assign(step.out.size(), Value());
    const int threads = frame.policy ? frame.policy->threads_used() : threads_;
    KernelContext ctx(*step.node, ins, outs, threads, runner, step.reusable);
    ctx.set_output_allocator(arena);
    ctx.set_deterministic(deterministic_);
    ctx.set_prepared(kernel_state);
    Guarded(*step.node, [&] { step.kernel->Compute(ctx); });
    for (size_t k = 0; k < step.out.size(); ++k) {
      if (step.out[k] >= 0) frame.slots[static_cast<size_t>(step.out[k])] = std::move(outs[k]);
    }
    if (profile) {
      const double ms = ElapsedMs(started);
      const ir::Node& n = *step.node;
      NodeTime t = ProfiledStep(started, ms, n.name(), n.qualified_op(), GraphLabel(*cg.graph),
                                step.backend ? step.backend->name() : "");
      for (size_t k = 0; k < step.in.size(); ++k) {
        const ir::Value* v = n.input(k);
        AddStepValue(t.inputs, t.input_bytes, v ? v->name() : "", ins[k]);
      }
      for (size_t k = 0; k < step.out.size(); ++k) {
        const ir::Value* v = n.output(k);
        AddStepValue(t.outputs, t.output_bytes, v ? v->name() : "",
                     step.out[k] >= 0 ? &frame.slots[static_cast<size_t>(step.out[k])] : nullptr);
      }
      stats->node_times.push_back(std::move(t));
    }
    if (stats && stats->on_value && !parent) ReportValues(*step.node, step.backend, step.out, frame.slots, *stats);
    for (int s : step.release) frame.slots[static_cast<size_t>(s)] = Value();
    if (policy) policy->AfterStep();  // the top graph's steps only
  }
  std::vector<Value> result;
  result.reserve(cg.output_slots.size());
  for (int s : cg.output_slots) result.push_back(frame.slots[static_cast<size_t>(s)]);
  // Values nobody read die here, at the end of the run (the arena recorder times their release).
  if (arena) arena->set_step(static_cast<int>(cg.steps.size()));
  frame.slots.clear();
  outs.clear();
  return result;
}

}  // namespace ferry::runtime
