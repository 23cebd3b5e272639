// The executor: compiles a graph (and its subgraphs) into steps with value slots, creates one kernel per node
// on the backend placement chose, turns the placement's copy plans into copy steps (initializer copies are done
// once, here), prepares the kernels per input signature (kernel.h: create -> prepare -> run) and plans the
// signature's activation arena from what they prepared (arena.h), then runs the steps. Run() is const and
// thread-safe: per-run state lives in a Frame on the caller's stack; prepared signatures are shared, immutable.
#pragma once

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "ferry/session.h"
#include "ferry/value.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "runtime/arena.h"
#include "runtime/placement.h"
#include "runtime/thread_policy.h"

namespace ferry::runtime {

class Executor {
 public:
  // Creates kernels for every node of `graph` and its subgraphs as `placement` decided. Throws ferry::Error
  // naming the node when a kernel rejects its node.
  // `memory_arena`: plan activation arenas per input-shape signature (runtime/arena.h). `deterministic`:
  // SessionOptions::deterministic, passed to every kernel (KernelContext::deterministic) and keeping OpenMP from
  // shrinking thread teams during a run.
  // `release`: called with an initializer of the top graph whose data the executor freed because every kernel
  // reading it packed its own copy (OpKernel::ReleaseConstantInput), and the data-less tensor (same dtype and
  // shape) that replaces it; the owner of the model puts that in place of its reference to the data. Without
  // `release` nothing is freed.
  using ReleaseFn = std::function<void(const ir::Value*, std::shared_ptr<const Tensor> dataless)>;
  // `adaptive_threads`: runs follow the adaptive thread policy (runtime/thread_policy.h) over `threads`.
  Executor(const ir::Model& model, const Placement& placement, int threads, bool memory_arena = true,
           bool deterministic = false, ReleaseFn release = {}, bool adaptive_threads = false);
  ~Executor();

  // Runs the top graph. `inputs` is one Value per graph input (graph().inputs() order); a kNone entry for an
  // input that also has an initializer means "use the initializer". Returns one Value per graph output.
  std::vector<Value> Run(std::vector<Value> inputs, RunStats* stats = nullptr) const;

  struct CompiledGraph;

  // The activation arenas planned so far (src/runtime/arena.h), one per prepared input-shape signature, newest
  // first.
  struct ArenaInfo {
    std::string signature;  // input dtypes and shapes
    int64_t arena_bytes = 0, lower_bound = 0;
    size_t slices = 0, blocks = 0;  // planned buffers; arenas allocated (one per concurrent run)
  };
  std::vector<ArenaInfo> arenas() const;
  // What the kernels hold for themselves (OpKernel::held_bytes: pre-packed weights), summed.
  int64_t kernel_held_bytes() const;
  // The scratch buffers the kernels keep for running (PreparedKernel::workspace) at the graph inputs' static
  // shapes with this executor's thread count, by the device of the backend running them: per buffer the largest
  // request of any kernel, since one buffer serves them all. Empty when an input's shape is not static. Prepares
  // that signature (as its first run would) when it is not prepared yet; runs nothing.
  std::map<std::string, Workspace> kernel_workspace() const;
  // The activation arena planned for the graph inputs' static shapes (preparing that signature when it is not
  // prepared yet): what every run at those shapes takes. nullopt when an input's shape is not static or the arena
  // is off; zero bytes when nothing is planned.
  std::optional<ArenaInfo> static_arena() const;
  // Bytes of initializers freed after their kernels packed them (see `release`).
  int64_t released_bytes() const { return released_bytes_; }

 private:
  struct Frame;
  struct PreparedRun;
  void Compile(const ir::Graph& graph, const Placement& placement);
  // The prepared signature of `inputs` (top graph): found, or prepared now and kept.
  std::shared_ptr<const PreparedRun> Prepared(const std::vector<Value>& inputs) const;
  std::shared_ptr<const PreparedRun> PrepareRun(const std::vector<Value>& inputs) const;
  // The activation arena of a prepared signature of `cg` (the top graph), or nullptr when nothing is planned.
  static std::shared_ptr<ArenaPlan> PlanArena(const CompiledGraph& cg, const PreparedRun& run);
  // The kernel of a step prepared for the inputs it runs with (PreparedCache).
  std::shared_ptr<const PreparedKernel> PrepareAtRun(const CompiledGraph& cg, size_t step_index,
                                                     std::span<const Value* const> ins) const;
  // `prepared`: the top graph's prepared signature (nullptr for subgraphs: their steps prepare as they run).
  // `policy`: the top graph's run under the thread policy (told after each step; nullptr for subgraphs, which
  // follow their parent's).
  std::vector<Value> RunGraph(const CompiledGraph& cg, std::vector<Value> inputs, const Frame* parent,
                              RunStats* stats, StepAllocator* arena, const PreparedRun* prepared,
                              ThreadPolicy::Run* policy = nullptr) const;

  const ir::Model& model_;
  std::string model_desc_;  // for Prepare's messages
  int threads_;
  std::unique_ptr<ThreadPolicy> thread_policy_;  // nullptr: every run uses threads_
  bool memory_arena_;
  bool deterministic_;
  ReleaseFn release_;
  int64_t released_bytes_ = 0;
  std::unordered_map<const ir::Graph*, std::unique_ptr<CompiledGraph>> compiled_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  // Prepared signatures, most recently used first; at most kMaxPrepared.
  static constexpr size_t kMaxPrepared = 8;
  mutable std::mutex prepared_mu_;
  mutable std::list<std::pair<std::string, std::shared_ptr<const PreparedRun>>> prepared_;
};

}  // namespace ferry::runtime
