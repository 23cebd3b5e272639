// The executor's compiled and prepared forms, shared by executor.cc (compiling and running) and
// executor_prepare.cc (preparing signatures and planning their arenas). Internal to src/runtime/.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <new>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferry/error.h"
#include "runtime/executor.h"

namespace ferry::runtime {

// A small bounded cache of kernels prepared during runs, keyed by their inputs' kinds, dtypes and shapes.
class PreparedCache {
 public:
  std::shared_ptr<const PreparedKernel> Find(const std::vector<int64_t>& key) const {
    std::lock_guard lock(mu_);
    for (const auto& [k, v] : entries_) {
      if (k == key) return v;
    }
    return nullptr;
  }
  void Add(std::vector<int64_t> key, std::shared_ptr<const PreparedKernel> prepared) {
    std::lock_guard lock(mu_);
    for (const auto& [k, v] : entries_) {
      if (k == key) return;
    }
    if (entries_.size() >= kCapacity) entries_.erase(entries_.begin());  // bounded: forget the oldest signature
    entries_.emplace_back(std::move(key), std::move(prepared));
  }

 private:
  static constexpr size_t kCapacity = 16;
  mutable std::mutex mu_;
  std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const PreparedKernel>>> entries_;
};

struct Executor::CompiledGraph {
  struct Step {
    const ir::Node* node = nullptr;  // a kernel step, or
    const CopyPlan* copy = nullptr;  // a copy step (in: the value where it lives, out: its copy)
    OpKernel* kernel = nullptr;
    const Backend* backend = nullptr;  // the backend running `kernel` (named in profiles)
    std::vector<int> in, out;  // slot per input/output; -1 when omitted
    std::vector<int> release;  // slots whose last use is this step
    // Per input: its value dies at this step and came from a node of this graph (not a graph input, initializer
    // or outer-scope value), so a kernel may write an output into its buffer (KernelContext::ReuseInput).
    std::vector<char> reusable;
    // Per input: an initializer of this graph that no feed overrides, whose data Prepare may see.
    std::vector<char> constant_input;
    // Kernels prepared as the step runs (subgraph steps, and top-graph steps whose inputs the signature's
    // preparation could not know), by input signature.
    std::unique_ptr<PreparedCache> cache = std::make_unique<PreparedCache>();
  };
  const ir::Graph* graph = nullptr;
  std::unordered_map<const ir::Value*, int> slot_of;
  int num_slots = 0;
  std::vector<std::pair<int, const ir::Value*>> captures;  // local slot <- enclosing graph's value
  std::vector<std::pair<int, std::shared_ptr<const Tensor>>> constants;  // initializer slots
  std::vector<std::pair<int, Value>> device_constants;  // initializers copied to a device at creation
  std::vector<CopyPlan> copies;  // the per-run copies of this graph (steps point into it)
  std::vector<int> input_slots, output_slots;
  std::vector<Step> steps;
  // Per slot: the step during which its value is released; kEscapes for graph outputs, steps.size() for values
  // nobody reads (released when the run ends).
  static constexpr int kEscapes = -2;
  std::vector<int> release_step;
};

// One input signature of the top graph, prepared: per step what its kernel's Prepare made and the input specs
// it made it for, the signature's arena plan, and the kernels' workspace by device.
struct Executor::PreparedRun {
  struct Step {
    std::shared_ptr<const PreparedKernel> kernel;  // null: not preparable before the run (prepared as it runs)
    std::vector<InputSpec> inputs;
    // Per input: a value the preparation computed from shapes alone (InputSpec::data pointed at it); the run
    // checks that the input holds exactly this before using `kernel`.
    std::vector<std::shared_ptr<const Tensor>> derived;
    std::vector<int> checked;  // the inputs a run may change (not initializers), checked before using `kernel`
  };
  std::vector<Step> steps;
  std::shared_ptr<ArenaPlan> arena;
  std::map<std::string, Workspace> workspace;
};

// The graph inputs of a signature with static shapes: a data-less tensor per required input (Prepare reads only
// dtypes and shapes of graph inputs), none for inputs with an initializer or an optional type (what a run that
// does not feed them passes). nullopt when a required input's element type or a dim is not static.
std::optional<std::vector<Value>> StaticInputs(const ir::Graph& g);

// Runs `body` (Prepare or Compute of `n`), turning what is not a ferry::Error into one naming the node.
template <typename F>
void Guarded(const ir::Node& n, F&& body) {
  try {
    body();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw ResourceExhaustedError(n.Describe() + ": out of memory");
  } catch (const std::exception& e) {
    throw InternalError(n.Describe() + ": " + e.what());
  }
}

// True when the run's inputs `checked` are exactly what a step was prepared for (`specs`): kinds, dtypes, shapes,
// and the values the preparation derived. Runs once per step and run: kept cheap (no calls for the dims).
inline bool InputsMatch(const std::vector<InputSpec>& specs, const std::vector<std::shared_ptr<const Tensor>>& derived,
                        const std::vector<int>& checked, std::span<const Value* const> ins) {
  for (int k : checked) {
    const Value* v = ins[static_cast<size_t>(k)];
    const InputSpec& s = specs[static_cast<size_t>(k)];
    if (!v || v->is_none()) {
      if (s.kind != InputSpec::Kind::kAbsent) return false;
      continue;
    }
    if (!v->is_tensor()) {
      if (s.kind != InputSpec::Kind::kOther) return false;
      continue;
    }
    const Tensor& t = v->tensor();
    const Shape& shape = t.shape();
    if (s.kind != InputSpec::Kind::kTensor || s.dtype != t.dtype() || s.shape.size() != shape.size()) return false;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (s.shape[d] != shape[d]) return false;
    }
    if (const Tensor* known = derived[static_cast<size_t>(k)].get()) {
      if (!t.raw_data() || std::memcmp(t.raw_data(), known->raw_data(), known->nbytes()) != 0) return false;
    }
  }
  return true;
}

}  // namespace ferry::runtime
