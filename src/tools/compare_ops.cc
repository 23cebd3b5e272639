#include "tools/compare_ops.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "ferry/error.h"
#include "ir/onnx_export.h"
#include "tools/compare.h"
#include "tools/compare_extract.h"
#include "tools/run_inputs.h"

namespace ferry::tools {
namespace {

// `t` redrawn uniformly within the range of its finite values.
Tensor Redraw(const Tensor& t, std::mt19937_64& rng) {
  if (!IsFloatingPoint(t.dtype()) || t.size() == 0) return t;
  const TensorSummary s = Summarize(t);
  double lo = s.min, hi = s.max;
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -1, hi = 1;
  if (!(lo < hi)) lo -= 1, hi += 1;
  std::uniform_real_distribution<double> real(lo, hi);
  switch (t.dtype()) {
    case DataType::kFloat: {
      Tensor out(DataType::kFloat, t.shape());
      for (int64_t i = 0; i < out.size(); ++i) out.data<float>()[i] = static_cast<float>(real(rng));
      return out;
    }
    case DataType::kDouble: {
      Tensor d(DataType::kDouble, t.shape());
      for (int64_t i = 0; i < d.size(); ++i) d.data<double>()[i] = real(rng);
      return d;
    }
    default: return t;  // float16 and friends keep their values
  }
}

std::string StepBackends(const RunStats& stats) {
  std::set<std::string> backends;
  for (const NodeTime& t : stats.node_times) {
    if (t.op != "copy" && !t.backend.empty()) backends.insert(t.backend);
  }
  std::string out;
  for (const std::string& b : backends) out += (out.empty() ? "" : ",") + b;
  return out;
}

std::string InputsText(const ir::Node& n, const std::map<std::string, Value>& values) {
  std::string out;
  for (const ir::Value* v : n.inputs()) {
    if (!v) continue;
    std::string text = "?";
    if (v->is_initializer()) {
      text = std::string(DataTypeName(v->initializer()->dtype())) + ShapeToString(v->initializer()->shape()) +
             " (initializer)";
    } else if (auto it = values.find(v->name()); it != values.end() && it->second.is_tensor()) {
      text = std::string(DataTypeName(it->second.tensor().dtype())) + ShapeToString(it->second.tensor().shape());
    }
    out += (out.empty() ? "" : ", ") + text;
  }
  return out;
}

OpCheck CheckNode(const ir::Model& original, const ir::Node& n, const CapturedRun& captured, const CompareConfig& ca,
                  const CompareConfig& cb, const ToleranceSet& tolerance, int trials, std::mt19937_64& rng) {
  OpCheck c;
  c.node = n.name();
  c.op = n.qualified_op();
  c.inputs = InputsText(n, captured.values);
  std::vector<std::string> outputs;
  for (const ir::Value* v : n.outputs()) {
    if (v && captured.values.count(v->name())) outputs.push_back(v->name());
  }
  try {
    if (outputs.empty()) throw InvalidArgumentError("no output of the node was computed in the whole-model run");
    ExtractedModel sub = ExtractSubgraph(original, {&n}, outputs, captured.values);
    const std::string bytes = ir::ExportModelBytes(*sub.model);
    const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    const auto a = Session::CreateFromBytes(view, ca.options);
    const auto b = Session::CreateFromBytes(view, cb.options);
    std::vector<OutputComparison> worst;
    for (int t = 0; t < trials; ++t) {
      std::vector<NamedValue> feeds = sub.feeds;
      if (t > 0) {
        for (auto& [name, v] : feeds) {
          if (v.is_tensor()) v = Value(Redraw(v.tensor(), rng));
        }
      }
      RunStats sa, sb;
      sa.profile = sb.profile = t == 0;
      const std::vector<NamedValue> out_a = a->RunValues(feeds, &sa);
      const std::vector<NamedValue> out_b = b->RunValues(feeds, &sb);
      if (t == 0) {
        c.backend_a = StepBackends(sa);
        c.backend_b = StepBackends(sb);
      }
      CompareValueLists(out_a, out_b, tolerance, t, worst);
    }
    c.trials = trials;
    const OutputComparison* w = nullptr;
    for (const auto& o : worst) {
      if (!w || BreachScore(o.stats) > BreachScore(w->stats) ||
          (BreachScore(o.stats) == BreachScore(w->stats) && o.stats.max_abs > w->stats.max_abs)) {
        w = &o;
      }
    }
    c.worst_output = w->name;
    c.stats = w->stats;
    c.worst_trial = w->worst_trial;
  } catch (const Error& e) {
    c.error = e.what();
  }
  return c;
}

}  // namespace

int OpsReport::flagged() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const OpCheck& c) { return !c.pass(); }));
}

int OpsReport::unchecked() const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [](const OpCheck& c) { return !c.checked(); }));
}

OpsReport CompareOps(const ir::Model& original, const CapturedRun& captured, const std::vector<std::string>& ops,
                     const CompareConfig& a, const CompareConfig& b, const ToleranceSet& tolerance, int trials,
                     uint64_t seed) {
  OpsReport r;
  r.ops = ops;
  std::set<std::string> seen;
  std::mt19937_64 rng(seed);
  for (const auto& n : original.graph->nodes()) {
    const std::string op = n->qualified_op();
    if (std::find(ops.begin(), ops.end(), op) == ops.end() &&
        std::find(ops.begin(), ops.end(), n->op_type()) == ops.end()) {
      continue;
    }
    seen.insert(op);
    seen.insert(n->op_type());
    r.checks.push_back(CheckNode(original, *n, captured, a, b, tolerance, std::max(1, trials), rng));
  }
  for (const std::string& op : ops) {
    if (!seen.count(op)) r.absent.push_back(op);
  }
  if (r.checks.empty()) {
    std::set<std::string> present;
    for (const auto& n : original.graph->nodes()) present.insert(n->qualified_op());
    std::string list;
    for (const std::string& op : present) list += (list.empty() ? "" : ", ") + op;
    throw InvalidArgumentError("--ops: " + original.Describe() + " has no node of those op types (it has: " + list + ")");
  }
  return r;
}

}  // namespace ferry::tools
