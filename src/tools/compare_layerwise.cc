#include "tools/compare_layerwise.h"

#include <algorithm>
#include <set>

#include "kernels/ref/control_flow_util.h"  // CloneValue: the deep copy the control-flow kernels use
#include "runtime/pipeline.h"
#include "tools/compare.h"
#include "tools/compare_unblock.h"

namespace ferry::tools {
namespace {

std::string NodeLabel(const ir::Node& n, size_t order) {
  return n.name().empty() ? "#" + std::to_string(order) + " (unnamed)" : n.name();
}

std::string QualifiedOp(const ir::Node& n) { return n.domain().empty() ? n.op_type() : n.domain() + "::" + n.op_type(); }

// The shape `producer` declares for its output `name`, -1 for a dim that is not static; empty when its rank is
// unknown.
std::vector<int64_t> LogicalDims(const ir::Node& producer, const std::string& name) {
  std::vector<int64_t> dims;
  for (const ir::Value* v : producer.outputs()) {
    if (!v || v->name() != name || !v->type().is_tensor() || !v->type().shape) continue;
    for (const ir::Dim& d : *v->type().shape) dims.push_back(d.is_static() ? d.value : -1);
  }
  return dims;
}

std::string TypeText(const Value& v) {
  if (v.is_tensor()) return std::string(DataTypeName(v.tensor().dtype())) + ShapeToString(v.tensor().shape());
  if (v.is_sequence()) return "sequence of " + std::to_string(v.sequence().tensors.size());
  return "none";
}

// Why `value` has no step on `side`: a blocked-layout twin that could not be mapped back; else the step a
// consumer chain leads to ("fused into 'x' (op) on cpu"), looking through at most 16 nodes; else "not computed"
// (folded, removed).
std::string MissingReason(const ir::Value& value, const CapturedRun& side) {
  if (auto it = side.twin_problem.find(value.name()); it != side.twin_problem.end()) {
    auto step = side.step.find(value.name());
    return "kept in a blocked layout only" + (step == side.step.end() ? "" : ", by " + step->second) +
           ", and not mapped back: " + it->second;
  }
  std::vector<const ir::Value*> queue = {&value};
  std::set<const ir::Value*> seen = {&value};
  for (size_t q = 0; q < queue.size() && q < 16; ++q) {
    for (const ir::Node* consumer : queue[q]->consumers()) {
      for (const ir::Value* out : consumer->outputs()) {
        if (!out) continue;
        if (auto it = side.step.find(out->name()); it != side.step.end()) return "fused into " + it->second;
        if (seen.insert(out).second) queue.push_back(out);
      }
    }
  }
  return "not computed (folded into a constant or removed)";
}

}  // namespace

std::unique_ptr<ir::Model> LoadOriginalModel(const std::string& path) {
  // Through type inference: the logical shapes blocked twins map back to.
  std::unique_ptr<ir::Model> model =
      runtime::PrepareModel(path, runtime::PipelineOptions(), runtime::Stage::kTypesInferred).model;
  model->graph->TopologicalSort();
  return model;
}

std::map<std::string, const ir::Node*> ProducedValues(const ir::Model& model) {
  std::map<std::string, const ir::Node*> out;
  for (const auto& n : model.graph->nodes()) {
    for (const ir::Value* v : n->outputs()) {
      if (v) out.emplace(v->name(), n.get());
    }
  }
  return out;
}

CapturedRun CaptureRun(const Session& session, const std::vector<NamedValue>& inputs,
                       const std::map<std::string, const ir::Node*>* keep) {
  CapturedRun run;
  for (const auto& [name, v] : inputs) run.values.emplace(name, ref::CloneValue(v));
  std::map<std::string, std::pair<std::string, Unblocked>> twins;  // X -> (its twin's name, X mapped back)
  RunStats stats;
  stats.profile = true;
  stats.on_value = [&](const std::string& name, const Value& v) {
    if (!keep || keep->count(name)) {
      run.values.insert_or_assign(name, ref::CloneValue(v));
      return;
    }
    const std::string plain = BlockedTwinOf(name, *keep);
    if (plain.empty()) return;
    Unblocked u;
    if (!v.is_tensor()) {
      u.problem = "it is not a tensor";
    } else {
      u = UnblockTwin(v.tensor(), LogicalDims(*keep->at(plain), plain));
    }
    twins.insert_or_assign(plain, std::make_pair(name, std::move(u)));
  };
  run.outputs = session.RunValues(inputs, &stats);
  for (const NodeTime& t : stats.node_times) {
    if (t.graph != "main" || t.op == "copy") continue;
    for (const StepValue& out : t.outputs) {
      if (!out.name.empty()) run.step[out.name] = "'" + t.node + "' (" + t.op + ") on " + t.backend;
    }
  }
  for (auto& [plain, twin] : twins) {
    if (run.values.count(plain)) continue;  // a plain reader needed X too: the plain value is compared
    auto& [name, u] = twin;
    if (auto it = run.step.find(name); it != run.step.end()) run.step.emplace(plain, it->second);
    if (!u.ok()) {
      run.twin_problem[plain] = "'" + name + "': " + u.problem;
      continue;
    }
    run.twin[plain] = "'" + name + "' (" + BlockLayoutText(u.block) + ")";
    run.values.emplace(plain, Value(std::move(u.tensor)));
  }
  return run;
}

LayerwiseReport CompareLayerwise(const ir::Model& original, const CapturedRun& a, const CapturedRun& b,
                                 const ToleranceSet& tolerance) {
  LayerwiseReport r;
  const ir::Graph& g = *original.graph;
  std::map<std::string, size_t> index;  // value name -> its row
  for (size_t order = 0; order < g.nodes().size(); ++order) {
    const ir::Node& n = *g.nodes()[order];
    for (const ir::Value* v : n.outputs()) {
      if (!v) continue;
      ValueComparison c;
      c.value = v->name();
      c.node = NodeLabel(n, order);
      c.op = QualifiedOp(n);
      c.order = order;
      c.tolerance = tolerance.For(v->name());
      if (auto it = a.step.find(v->name()); it != a.step.end()) c.step_a = it->second;
      if (auto it = b.step.find(v->name()); it != b.step.end()) c.step_b = it->second;
      if (auto it = a.twin.find(v->name()); it != a.twin.end()) c.twin_a = it->second;
      if (auto it = b.twin.find(v->name()); it != b.twin.end()) c.twin_b = it->second;
      auto va = a.values.find(v->name());
      auto vb = b.values.find(v->name());
      if (va == a.values.end() || vb == b.values.end()) {
        if (va == a.values.end()) c.note = "on A: " + MissingReason(*v, a);
        if (vb == b.values.end()) c.note += (c.note.empty() ? "" : "; ") + std::string("on B: ") + MissingReason(*v, b);
      } else if (TypeText(va->second) != TypeText(vb->second) || va->second.is_none() != vb->second.is_none()) {
        c.note = "differs in type or layout: " + TypeText(va->second) + " on A, " + TypeText(vb->second) + " on B";
      } else {
        c.compared = true;
        c.stats = CompareValueStats(va->second, vb->second, c.tolerance);
      }
      r.compared += c.compared;
      r.through_twin += c.compared && (!c.twin_a.empty() || !c.twin_b.empty());
      r.failed += c.failed();
      r.not_compared += !c.compared;
      index[c.value] = r.values.size();
      r.values.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    if (!r.values[i].failed()) continue;
    Divergence d;
    d.index = i;
    d.node = r.values[i].node;
    d.op = r.values[i].op;
    const ir::Node& n = *g.nodes()[r.values[i].order];
    for (const ir::Value* in : n.inputs()) {
      if (!in) continue;
      InputError e;
      e.value = in->name();
      if (in->is_initializer()) {
        e.kind = "initializer";
      } else if (auto it = index.find(in->name()); it != index.end()) {
        e.kind = "value";
        e.comparison = it->second;
        const ValueComparison& c = r.values[it->second];
        d.inherited |= c.failed();
        d.uncertain |= !c.compared;
      } else {
        e.kind = "graph input";
      }
      d.inputs.push_back(std::move(e));
    }
    if (d.inherited) d.uncertain = false;
    r.first = std::move(d);
    break;
  }
  return r;
}

std::vector<size_t> LayerwiseReport::TableRows(size_t around, size_t worst) const {
  std::set<size_t> rows;
  std::vector<size_t> compared_rows;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].compared) compared_rows.push_back(i);
  }
  if (first) {
    auto at = std::find(compared_rows.begin(), compared_rows.end(), first->index);
    const size_t pos = static_cast<size_t>(at - compared_rows.begin());
    for (size_t k = pos >= around ? pos - around : 0; k < std::min(compared_rows.size(), pos + around + 1); ++k) {
      rows.insert(compared_rows[k]);
    }
  }
  std::vector<size_t> ranked = compared_rows;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t x, size_t y) {
    const double bx = BreachScore(values[x].stats), by = BreachScore(values[y].stats);
    return bx != by ? bx > by : values[x].stats.max_abs > values[y].stats.max_abs;
  });
  for (size_t k = 0; k < std::min(worst, ranked.size()); ++k) rows.insert(ranked[k]);
  if (!compared_rows.empty()) rows.insert(compared_rows.back());
  return {rows.begin(), rows.end()};
}

}  // namespace ferry::tools
