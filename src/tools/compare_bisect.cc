#include "tools/compare_bisect.h"

#include <set>
#include <sstream>

#include "ferry/error.h"
#include "ir/onnx_export.h"
#include "tools/compare.h"
#include "tools/compare_extract.h"

namespace ferry::tools {
namespace {

std::string Describe(const ErrorStats& s) {
  std::ostringstream os;
  os.precision(3);
  if (!s.problem.empty()) return s.problem;
  if (s.pass()) {
    os << "agrees (max abs " << s.max_abs << ")";
  } else {
    os << "diverges: " << s.mismatched << " of " << s.elements << " elements, max abs " << s.max_abs;
  }
  return os.str();
}

}  // namespace

std::string BisectDataDir(const std::string& model_path) {
  std::string stem = model_path;
  if (stem.size() > 5 && stem.ends_with(".onnx")) stem.resize(stem.size() - 5);
  return stem + "_data";
}

BisectResult Bisect(const ir::Model& original, const LayerwiseReport& report, const CapturedRun& a,
                    const CapturedRun& b, const CompareConfig& config_a, const CompareConfig& config_b,
                    const std::string& out_path, int max_levels) {
  if (!report.first) throw InvalidArgumentError("--bisect: the two configurations do not diverge; nothing to bisect");
  BisectResult r;
  const ValueComparison& divergent = report.values[report.first->index];
  r.value = divergent.value;
  r.tolerance = divergent.tolerance;
  const ir::Graph& g = *original.graph;
  // A's values first (what the configuration under test computed), B's where A fused a value away.
  std::map<std::string, Value> values = a.values;
  values.insert(b.values.begin(), b.values.end());
  std::set<const ir::Node*> set = {g.nodes()[divergent.order].get()};
  for (int level = 0; level <= max_levels; ++level) {
    std::vector<const ir::Node*> nodes;
    for (const auto& n : g.nodes()) {
      if (set.count(n.get())) nodes.push_back(n.get());
    }
    BisectAttempt attempt;
    attempt.nodes = nodes.size();
    try {
      ExtractedModel sub = ExtractSubgraph(original, nodes, {r.value}, values);
      const std::string bytes = ir::ExportModelBytes(*sub.model);
      const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      const auto session_a = Session::CreateFromBytes(view, config_a.options);
      const auto session_b = Session::CreateFromBytes(view, config_b.options);
      const std::vector<NamedValue> out_a = session_a->RunValues(sub.feeds);
      const std::vector<NamedValue> out_b = session_b->RunValues(sub.feeds);
      const ErrorStats stats = CompareValueStats(out_a.at(0).second, out_b.at(0).second, divergent.tolerance);
      attempt.reproduced = !stats.pass();
      attempt.detail = Describe(stats);
      if (attempt.reproduced) {
        r.reproduced = true;
        r.stats = stats;
        for (const ir::Node* n : nodes) r.nodes.push_back(n->name());
        r.model_path = out_path;
        r.data_dir = BisectDataDir(out_path);
        ir::ExportModelToFile(*sub.model, out_path);
        WriteDataSet(r.data_dir, sub.feeds, out_b);
      }
    } catch (const InvalidArgumentError& e) {
      attempt.detail = std::string("cannot cut out: ") + e.what();
    }
    r.attempts.push_back(attempt);
    if (r.reproduced) break;
    // One more level of ancestors: the producers of every input the set does not produce itself.
    std::set<const ir::Node*> grown = set;
    for (const ir::Node* n : set) {
      for (const ir::Value* in : n->inputs()) {
        if (in && !in->is_initializer() && in->producer() && in->producer()->owner() == &g) grown.insert(in->producer());
      }
    }
    if (grown.size() == set.size()) break;
    set = std::move(grown);
  }
  return r;
}

}  // namespace ferry::tools
