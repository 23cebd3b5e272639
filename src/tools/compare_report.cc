// See compare_report.h.
#include "tools/compare_report.h"

#include "tools/compare_format.h"

namespace ferry::tools {
nlohmann::json CompareSideJson(const CompareConfig& c, const Session* session) {
  nlohmann::json j = {{"config", c.text}, {"description", DescribeConfig(c)}};
  if (session) j["backends"] = session->placement().backends;
  return j;
}

CompareResult RunComparison(const CompareSetup& s, bool layerwise, const std::string& bisect_dir) {
  CompareResult r;
  r.sides = OpenSides(s);
  r.outputs = CompareOutputs(s, r.sides);
  if (!layerwise && bisect_dir.empty()) return r;
  r.layer_trial = std::max(0, r.outputs.first_failed_trial);
  const auto inputs = r.sides.Inputs(s, r.layer_trial);
  const std::unique_ptr<ir::Model> original = LoadOriginalModel(s.model);
  const auto keep = ProducedValues(*original);
  const CapturedRun a = CaptureRun(*r.sides.a, inputs, &keep);
  const CapturedRun b = CaptureRun(*r.sides.b, inputs, &keep);
  r.layers = CompareLayerwise(*original, a, b, s.tolerance);
  if (!bisect_dir.empty() && r.layers->first) r.bisect = Bisect(*original, *r.layers, a, b, s.a, s.b, bisect_dir);
  return r;
}

std::string CompareResultJson(const CompareSetup& s, const CompareResult& r) {
  nlohmann::json j = {{"model", s.model}, {"a", CompareSideJson(s.a, r.sides.a.get())}};
  j["b"] = r.sides.b ? CompareSideJson(s.b, r.sides.b.get()) : nlohmann::json{{"reference", s.reference_dir}};
  j["inputs"] = nlohmann::json::array();
  for (int t = 0; t < r.sides.trials; ++t) j["inputs"].push_back(r.sides.Source(s, t));
  j["tolerance"] = {{"atol", s.tolerance.all.atol}, {"rtol", s.tolerance.all.rtol}};
  j["outputs"] = OutputReportJson(r.outputs);
  if (r.layers) {
    j["layerwise"] = LayerwiseJson(*r.layers);
    j["layerwise"]["trial"] = r.layer_trial;
  }
  if (r.bisect) j["bisect"] = BisectJson(*r.bisect);
  j["pass"] = r.pass();
  return j.dump(2);
}

}  // namespace ferry::tools
