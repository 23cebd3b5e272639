// The tools' library side for Python: each function takes the CLI's options and returns the CLI's --json
// document as text (the Python layer, python/ferry/_tools.py, parses it): `ferry check`, `ferry ops`,
// `ferry optimize`, `ferry compare`, `ferry bench`. The GIL is released while they work.
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/plugin/plugin_loader.h"
#include "ferry/error.h"
#include "module.h"
#include "tools/bench.h"
#include "tools/bench_report.h"
#include "tools/check.h"
#include "tools/compare_config.h"
#include "tools/compare_data.h"
#include "tools/compare_report.h"
#include "tools/ops_matrix.h"
#include "tools/optimize.h"

namespace ferry::python {
namespace {

using Shapes = std::map<std::string, std::vector<int64_t>>;

std::string CheckJson(const std::string& model, const std::vector<std::string>& backends, const std::string& isa,
                      bool isa_exact, int compute_capability, const Shapes& shapes, bool allow_fallback,
                      const std::vector<std::pair<std::string, std::string>>& pins,
                      const std::vector<std::string>& plugins) {
  tools::CheckOptions o;
  if (!backends.empty()) o.backends = backends;
  o.isa = isa;
  o.isa_exact = isa_exact;
  o.compute_capability = compute_capability;
  o.shapes = shapes;
  o.allow_fallback = allow_fallback;
  o.pins = pins;
  o.plugins = plugins;
  py::gil_scoped_release nogil;
  const tools::CheckGate gate;  // no gate: the document still says it passed, as the CLI's does
  return tools::FormatCheckJson(tools::CheckModel(model, o), &gate);
}

std::string OpsJson(const std::string& backend, const std::string& op, const std::optional<std::string>& domain,
                    const std::vector<std::string>& plugins) {
  py::gil_scoped_release nogil;
  for (const std::string& p : plugins) LoadPlugin(p);
  tools::OpsFilter filter;
  filter.backend = backend;
  filter.op = op;
  filter.domain = domain;
  return tools::OpsMatrixJson(tools::BuildOpsMatrix(filter));
}

std::string OptimizeJson(const std::string& input, const std::string& output, int level, const Shapes& shapes,
                         const std::vector<std::string>& targets, const std::string& isa,
                         const std::vector<std::string>& disabled, int64_t opset, bool legalize, bool external_data) {
  tools::OptimizeOptions o;
  o.level = level;
  o.shapes = shapes;
  o.targets = targets;
  o.isa = isa;
  o.disabled = disabled;
  o.opset = opset;
  o.legalize = legalize;
  py::gil_scoped_release nogil;
  tools::ValidateOptimizeOptions(o);
  tools::OptimizeResult result = tools::OptimizeModelFile(input, o);
  ir::ExportOptions e;
  e.external_data = external_data;
  tools::WriteOptimizedModel(result, output, e);
  return tools::FormatOptimizeJson(result);
}

using Ranges = std::map<std::string, std::pair<double, double>>;

void CheckRanges(const Ranges& ranges) {
  for (const auto& [name, r] : ranges) {
    if (!(r.first < r.second)) throw InvalidArgumentError("ranges['" + name + "']: LO must be below HI");
  }
}

std::string CompareJson(const std::string& model, const std::string& a, const std::string& b,
                        const std::string& reference, const std::string& inputs, const Shapes& shapes,
                        const Ranges& ranges, std::optional<int64_t> batch, int trials, uint64_t seed, double atol,
                        double rtol, const std::map<std::string, std::pair<double, double>>& per_output,
                        bool layerwise, const std::string& bisect) {
  tools::CompareSetup s;
  s.model = model;
  s.a = tools::ParseCompareConfig(a, "a");
  s.b = tools::ParseCompareConfig(b, "b");
  s.reference_dir = reference;
  if (!reference.empty() && (layerwise || !bisect.empty())) {
    throw InvalidArgumentError("layerwise and bisect run two configurations; they do not take a reference");
  }
  s.inputs = tools::ParseInputSource(inputs);
  s.inputs_given = inputs != "random";
  s.inputs.spec.shapes = shapes;
  CheckRanges(ranges);
  s.inputs.spec.ranges = ranges;
  if (batch) s.inputs.spec.batch = *batch;
  s.inputs.spec.seed = seed;
  if (trials < 1) throw InvalidArgumentError("trials must be at least 1, got " + std::to_string(trials));
  s.trials = trials;
  if (!(atol >= 0) || !(rtol >= 0)) throw InvalidArgumentError("atol and rtol must be >= 0");
  s.tolerance.all = {atol, rtol};
  for (const auto& [name, t] : per_output) {
    if (!(t.first >= 0) || !(t.second >= 0)) throw InvalidArgumentError("per_output['" + name + "']: must be >= 0");
    s.tolerance.by_name[name] = {t.first, t.second};
  }
  py::gil_scoped_release nogil;
  return tools::CompareResultJson(s, tools::RunComparison(s, layerwise, bisect));
}

std::string BenchJson(const std::string& model, const py::dict& session, const Shapes& shapes, const Ranges& ranges,
                      uint64_t seed, const std::vector<int64_t>& batches, const std::vector<int>& threads,
                      const std::vector<int>& concurrency, int warmup, int64_t iterations, double duration_s,
                      const std::vector<double>& percentiles) {
  tools::BenchOptions o;
  o.model = model;
  o.session = SessionOptionsFrom(session);
  o.inputs.shapes = shapes;
  CheckRanges(ranges);
  o.inputs.ranges = ranges;
  o.inputs.seed = seed;
  const auto at_least = [](const auto& values, int64_t lo, const char* what) {
    if (values.empty()) throw InvalidArgumentError(std::string(what) + ": the list is empty");
    for (const auto v : values) {
      if (v < lo) throw InvalidArgumentError(std::string(what) + " must be >= " + std::to_string(lo));
    }
  };
  at_least(batches, 1, "batch");
  at_least(threads, 0, "threads");
  at_least(concurrency, 1, "concurrency");
  for (const double p : percentiles) {
    if (!(p > 0 && p <= 100)) throw InvalidArgumentError("percentiles must be in (0, 100]");
  }
  if (warmup < 0 || iterations < 0 || !(duration_s >= 0)) {
    throw InvalidArgumentError("warmup, iterations and duration must be >= 0");
  }
  o.batches = batches;
  o.threads = threads;
  o.concurrency = concurrency;
  o.warmup = warmup;
  o.iterations = iterations;
  o.duration_s = iterations > 0 ? 0 : (duration_s > 0 ? duration_s : 2.0);
  if (!percentiles.empty()) o.percentiles = percentiles;
  tools::BenchReport report;
  report.options = o;
  {
    py::gil_scoped_release nogil;
    report.run = tools::RunBench(o);
    tools::AnalyzeBench(report);
  }
  return tools::FormatBenchJson(report);
}

}  // namespace

void RegisterTools(py::module_& m) {
  m.def("check_json", &CheckJson, py::arg("model"), py::arg("backends"), py::arg("isa"), py::arg("isa_exact"),
        py::arg("compute_capability"), py::arg("shapes"), py::arg("allow_fallback"), py::arg("pins"),
        py::arg("plugins"));
  m.def("ops_json", &OpsJson, py::arg("backend"), py::arg("op"), py::arg("domain"), py::arg("plugins"));
  m.def("optimize_json", &OptimizeJson, py::arg("input"), py::arg("output"), py::arg("level"), py::arg("shapes"),
        py::arg("targets"), py::arg("isa"), py::arg("disabled"), py::arg("opset"), py::arg("legalize"),
        py::arg("external_data"));
  m.def("backend_names", [] { return BackendNames(); });
  m.def("compare_json", &CompareJson, py::arg("model"), py::arg("a"), py::arg("b"), py::arg("reference"),
        py::arg("inputs"), py::arg("shapes"), py::arg("ranges"), py::arg("batch"), py::arg("trials"), py::arg("seed"),
        py::arg("atol"), py::arg("rtol"), py::arg("per_output"), py::arg("layerwise"), py::arg("bisect"));
  m.def("bench_json", &BenchJson, py::arg("model"), py::arg("session"), py::arg("shapes"), py::arg("ranges"),
        py::arg("seed"), py::arg("batches"), py::arg("threads"), py::arg("concurrency"), py::arg("warmup"),
        py::arg("iterations"), py::arg("duration_s"), py::arg("percentiles"));
}

}  // namespace ferry::python
