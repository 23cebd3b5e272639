#include "passes/pass_manager.h"

#include <chrono>
#include <unordered_set>

#include "ferry/error.h"
#include "ir/value_query.h"

namespace ferry::passes {

const Backend* PassContext::BackendFor(const ir::Node& node) const {
  if (Frozen(node)) return nullptr;
  std::vector<DataType> types;
  for (const ir::Value* v : node.inputs()) {
    types.push_back(ir::TensorElementType(v));
  }
  for (const Backend* b : backends) {
    try {
      if (b->kernels().Query(node, types, target).supported()) return b;
    } catch (const Error&) {  // a predicate refusing a malformed node: not this backend
    }
  }
  return nullptr;
}

void VerifyGraph(const ir::Graph& graph, const std::string& after) {
  std::unordered_set<const ir::Value*> defined;
  for (const ir::Value* v : graph.inputs()) defined.insert(v);
  for (const ir::Value* v : graph.initializers()) defined.insert(v);
  auto is_defined = [&](const ir::Value* v) {
    return defined.count(v) || v->owner() != &graph;  // outer-scope values are the enclosing graph's
  };
  for (const auto& n : graph.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      const ir::Value* v = n->input(i);
      if (v && !is_defined(v)) {
        throw InternalError("after pass " + after + ": " + n->Describe() + " input " + std::to_string(i) + " '" +
                            v->name() + "' is not defined before it");
      }
    }
    for (const ir::Value* v : n->outputs()) {
      if (v) defined.insert(v);
    }
  }
  for (const ir::Value* v : graph.outputs()) {
    if (!is_defined(v)) throw InternalError("after pass " + after + ": graph output '" + v->name() + "' is not defined");
  }
}

std::string OpKey(const ir::Node& node) {
  return node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type() : node.domain() + "::" + node.op_type();
}

namespace {

void CountInto(const ir::Graph& graph, std::map<std::string, int>& counts) {
  for (const auto& n : graph.nodes()) {
    ++counts[OpKey(*n)];
    for (const ir::Graph* sub : n->subgraphs()) CountInto(*sub, counts);
  }
}

std::map<std::string, int> Delta(const std::map<std::string, int>& before, const std::map<std::string, int>& after) {
  std::map<std::string, int> delta;
  for (const auto& [op, n] : before) {
    auto it = after.find(op);
    const int d = (it == after.end() ? 0 : it->second) - n;
    if (d) delta[op] = d;
  }
  for (const auto& [op, n] : after) {
    if (!before.count(op)) delta[op] = n;
  }
  return delta;
}

}  // namespace

std::map<std::string, int> CountOps(const ir::Graph& graph) {
  std::map<std::string, int> counts;
  CountInto(graph, counts);
  return counts;
}

std::string FormatOpDelta(const std::map<std::string, int>& delta) {
  std::string out;
  for (const bool removed : {true, false}) {
    for (const auto& [op, d] : delta) {
      if ((d < 0) != removed) continue;
      out += (out.empty() ? "" : ", ") + std::string(d < 0 ? "-" : "+") + std::to_string(d < 0 ? -d : d) + " " + op;
    }
  }
  return out;
}

void CheckPassNames(const std::set<std::string, std::less<>>& names, const std::string& what) {
  for (const std::string& d : names) {
    bool known = false;
    std::string all;
    for (const auto& p : AllPasses()) {
      known = known || p->name() == d;
      all += (all.empty() ? "" : ", ") + std::string(p->name());
    }
    if (!known) throw InvalidArgumentError(what + "unknown pass '" + d + "' (passes: " + all + ")");
  }
}

PassReport OptimizeModel(ir::Model& model, const PassContext& ctx) {
  if (ctx.level < 0 || ctx.level > kMaxLevel) {
    throw InvalidArgumentError("optimization level " + std::to_string(ctx.level) + " is not one of 0.." +
                               std::to_string(kMaxLevel));
  }
  const auto& passes = AllPasses();
  CheckPassNames(ctx.disabled);
  PassReport report;
  report.level = ctx.level;
  if (ctx.instrument) ctx.instrument(nullptr, model);
  std::map<std::string, int> counts = CountOps(*model.graph);
  for (const auto& p : passes) {
    if (p->level() > ctx.level || ctx.disabled.count(p->name())) continue;
    PassRun run{std::string(p->name()), p->level()};
    run.nodes_before = static_cast<int>(model.graph->nodes().size());
    const auto t0 = std::chrono::steady_clock::now();
    run.changed = p->Apply(model, ctx);
    run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    run.nodes_after = static_cast<int>(model.graph->nodes().size());
    if (run.changed) {
      VerifyGraph(*model.graph, run.name);
      std::map<std::string, int> after = CountOps(*model.graph);
      run.op_delta = Delta(counts, after);
      counts = std::move(after);
      if (ctx.instrument) ctx.instrument(&run, model);
    }
    report.runs.push_back(std::move(run));
  }
  return report;
}

}  // namespace ferry::passes
