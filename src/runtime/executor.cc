#include "runtime/executor.h"

#include <algorithm>
#include <unordered_set>

#include "ferry/error.h"

namespace ferry::runtime {

struct Executor::CompiledGraph {
  struct Step {
    const ir::Node* node = nullptr;
    const OpKernel* kernel = nullptr;
    std::vector<int> in, out;  // slot per input/output; -1 when omitted
    std::vector<int> release;  // slots whose last use is this step
  };
  const ir::Graph* graph = nullptr;
  std::unordered_map<const ir::Value*, int> slot_of;
  int num_slots = 0;
  std::vector<std::pair<int, const ir::Value*>> captures;  // local slot <- enclosing graph's value
  std::vector<std::pair<int, std::shared_ptr<const Tensor>>> constants;  // initializer slots
  std::vector<int> input_slots, output_slots;
  std::vector<Step> steps;
};

struct Executor::Frame {
  const CompiledGraph* cg = nullptr;
  std::vector<Value> slots;
  const Frame* parent = nullptr;
};

namespace {

bool IsAncestor(const ir::Graph* maybe_ancestor, const ir::Graph* g) {
  for (const ir::Graph* p = g->parent(); p; p = p->parent()) {
    if (p == maybe_ancestor) return true;
  }
  return false;
}

// Values read by `node` or, recursively, by nodes and outputs of its subgraphs.
void CollectReads(const ir::Node& node, std::vector<const ir::Value*>& out) {
  for (const ir::Value* v : node.inputs()) {
    if (v) out.push_back(v);
  }
  for (const ir::Graph* sub : node.subgraphs()) {
    for (const auto& n : sub->nodes()) CollectReads(*n, out);
    for (const ir::Value* v : sub->outputs()) out.push_back(v);
  }
}

}  // namespace

Executor::Executor(const ir::Model& model, const Placement& placement, int threads)
    : model_(model), threads_(threads) {
  Compile(*model.graph, placement);
}

Executor::~Executor() = default;

void Executor::Compile(const ir::Graph& g, const Placement& placement) {
  auto cg = std::make_unique<CompiledGraph>();
  cg->graph = &g;
  auto slot = [&](const ir::Value* v) {
    auto [it, inserted] = cg->slot_of.emplace(v, cg->num_slots);
    if (inserted) {
      ++cg->num_slots;
      if (v->owner() != &g && IsAncestor(v->owner(), &g)) cg->captures.emplace_back(it->second, v);
    }
    return it->second;
  };
  for (const ir::Value* v : g.inputs()) cg->input_slots.push_back(slot(v));
  for (const ir::Value* v : g.initializers()) cg->constants.emplace_back(slot(v), v->initializer_ptr());

  std::unordered_map<int, size_t> last_use;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const ir::Node& n = *g.nodes()[i];
    auto found = placement.nodes.find(&n);
    if (found == placement.nodes.end()) throw InternalError(n.Describe() + " was not placed");
    kernels_.push_back(found->second.kernel->create(n));
    CompiledGraph::Step step;
    step.node = &n;
    step.kernel = kernels_.back().get();
    for (const ir::Value* v : n.inputs()) step.in.push_back(v ? slot(v) : -1);
    for (const ir::Value* v : n.outputs()) step.out.push_back(v ? slot(v) : -1);
    std::vector<const ir::Value*> reads;
    CollectReads(n, reads);
    for (const ir::Value* v : reads) {
      // Reads of values defined inside the node's own subgraphs are not reads of this graph.
      if (v->owner() == &g || IsAncestor(v->owner(), &g)) last_use[slot(v)] = i;
    }
    cg->steps.push_back(std::move(step));
    for (const ir::Graph* sub : n.subgraphs()) Compile(*sub, placement);
  }
  for (const ir::Value* v : g.outputs()) cg->output_slots.push_back(slot(v));

  std::unordered_set<int> keep(cg->output_slots.begin(), cg->output_slots.end());
  for (const auto& [s, step_index] : last_use) {
    if (!keep.count(s)) cg->steps[step_index].release.push_back(s);
  }
  compiled_[&g] = std::move(cg);
}

std::vector<Value> Executor::Run(std::vector<Value> inputs) const {
  return RunGraph(*compiled_.at(model_.graph.get()), std::move(inputs), nullptr);
}

std::vector<Value> Executor::RunGraph(const CompiledGraph& cg, std::vector<Value> inputs, const Frame* parent) const {
  Frame frame;
  frame.cg = &cg;
  frame.parent = parent;
  frame.slots.resize(static_cast<size_t>(cg.num_slots));
  for (const auto& [s, tensor] : cg.constants) frame.slots[static_cast<size_t>(s)] = Value(*tensor);
  for (const auto& [s, outer] : cg.captures) {
    const Frame* f = parent;
    while (f && !f->cg->slot_of.count(outer)) f = f->parent;
    if (!f) throw InternalError("outer-scope value '" + outer->name() + "' is not available to graph '" + cg.graph->name() + "'");
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
    return RunGraph(*it->second, std::move(body_inputs), &frame);
  };

  std::vector<const Value*> ins;
  std::vector<Value> outs;
  for (const auto& step : cg.steps) {
    ins.assign(step.in.size(), nullptr);
    for (size_t k = 0; k < step.in.size(); ++k) {
      if (step.in[k] >= 0) ins[k] = &frame.slots[static_cast<size_t>(step.in[k])];
    }
    outs.assign(step.out.size(), Value());
    KernelContext ctx(*step.node, ins, outs, threads_, runner);
    try {
      step.kernel->Compute(ctx);
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw ResourceExhaustedError(step.node->Describe() + ": out of memory");
    } catch (const std::exception& e) {
      throw InternalError(step.node->Describe() + ": " + e.what());
    }
    for (size_t k = 0; k < step.out.size(); ++k) {
      if (step.out[k] >= 0) frame.slots[static_cast<size_t>(step.out[k])] = std::move(outs[k]);
    }
    for (int s : step.release) frame.slots[static_cast<size_t>(s)] = Value();
  }
  std::vector<Value> result;
  result.reserve(cg.output_slots.size());
  for (int s : cg.output_slots) result.push_back(frame.slots[static_cast<size_t>(s)]);
  return result;
}

}  // namespace ferry::runtime
