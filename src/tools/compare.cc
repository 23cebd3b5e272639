#include "tools/compare.h"

#include <algorithm>
#include <map>

#include "ferry/error.h"

namespace ferry::tools {

std::string CompareSides::Source(const CompareSetup& setup, int trial) const {
  if (!input_sets.empty()) return input_sets[static_cast<size_t>(trial)].dir;
  switch (setup.inputs.kind) {
    case InputSource::Kind::kZeros: return "zeros";
    case InputSource::Kind::kOnes: return "ones";
    default: return "random, seed " + std::to_string(setup.inputs.spec.seed + static_cast<uint64_t>(trial));
  }
}

std::vector<NamedValue> CompareSides::Inputs(const CompareSetup& setup, int trial) const {
  const DataSet* set = input_sets.empty() ? nullptr : &input_sets[static_cast<size_t>(trial)];
  return MakeTrialInputs(*a, setup.inputs, trial, set);
}

CompareSides OpenSides(const CompareSetup& setup) {
  CompareSides s;
  s.a = Session::Create(setup.model, setup.a.options);
  if (setup.reference_dir.empty()) s.b = Session::Create(setup.model, setup.b.options);
  if (!setup.reference_dir.empty()) {
    s.reference_sets = ReadDataDir(setup.reference_dir, s.a->inputs(), s.a->outputs());
  }
  if (setup.inputs.kind == InputSource::Kind::kDir) {
    s.input_sets = ReadDataDir(setup.inputs.dir, s.a->inputs(), s.a->outputs());
  } else if (!setup.inputs_given && !s.reference_sets.empty() && !s.reference_sets.front().inputs.empty()) {
    s.input_sets = s.reference_sets;
  }
  if (!s.reference_sets.empty()) {
    s.trials = static_cast<int>(s.reference_sets.size());
    if (!s.input_sets.empty() && s.input_sets.size() != s.reference_sets.size()) {
      throw InvalidArgumentError("--inputs '" + setup.inputs.dir + "' has " + std::to_string(s.input_sets.size()) +
                                 " data sets but --reference '" + setup.reference_dir + "' has " +
                                 std::to_string(s.reference_sets.size()));
    }
  } else if (!s.input_sets.empty()) {
    s.trials = static_cast<int>(s.input_sets.size());
  } else if (setup.inputs.kind == InputSource::Kind::kRandom) {
    s.trials = std::max(1, setup.trials);
  }
  return s;
}

ErrorStats CompareValueStats(const Value& a, const Value& b, const CompareTolerance& tol) {
  ErrorStats s;
  if (a.is_none() || b.is_none()) {
    if (!(a.is_none() && b.is_none())) s.problem = a.is_none() ? "no value vs a value" : "a value vs no value";
    return s;
  }
  if (a.is_tensor() != b.is_tensor()) {
    s.problem = a.is_tensor() ? "tensor vs sequence" : "sequence vs tensor";
    return s;
  }
  if (a.is_tensor()) return CompareStats(a.tensor(), b.tensor(), tol);
  const auto& as = a.sequence().tensors;
  const auto& bs = b.sequence().tensors;
  if (as.size() != bs.size()) {
    s.problem = "sequence of " + std::to_string(as.size()) + " vs " + std::to_string(bs.size()) + " tensors";
    return s;
  }
  for (size_t i = 0; i < as.size(); ++i) {
    ErrorStats e = CompareStats(as[i], bs[i], tol);
    if (!e.problem.empty()) e.problem = "sequence element " + std::to_string(i) + ": " + e.problem;
    if (i == 0 || BreachScore(e) > BreachScore(s) || (BreachScore(e) == BreachScore(s) && e.max_abs > s.max_abs)) {
      s = e;
    }
  }
  return s;
}

void CompareValueLists(const std::vector<NamedValue>& a, const std::vector<NamedValue>& b, const ToleranceSet& tol,
                       int trial, std::vector<OutputComparison>& into) {
  std::map<std::string, const Value*> by_name;
  for (const auto& [n, v] : b) by_name[n] = &v;
  for (const auto& [name, value] : a) {
    OutputComparison* o = nullptr;
    for (auto& existing : into) {
      if (existing.name == name) o = &existing;
    }
    if (!o) {
      into.push_back({});
      o = &into.back();
      o->name = name;
      o->tolerance = tol.For(name);
    }
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      o->note = "no value on side B (no reference file)";
      continue;
    }
    ErrorStats s = CompareValueStats(value, *it->second, o->tolerance);
    if (!s.pass()) ++o->failed_trials;
    const double now = BreachScore(s), before = BreachScore(o->stats);
    if (trial == 0 || now > before || (now == before && s.max_abs > o->stats.max_abs)) {
      o->stats = std::move(s);
      o->worst_trial = trial;
    }
  }
}

OutputReport CompareOutputs(const CompareSetup& setup, const CompareSides& sides) {
  OutputReport r;
  r.trials = sides.trials;
  for (int t = 0; t < sides.trials; ++t) {
    const std::vector<NamedValue> inputs = sides.Inputs(setup, t);
    const std::vector<NamedValue> a = sides.a->RunValues(inputs);
    std::vector<NamedValue> b;
    if (sides.b) {
      b = sides.b->RunValues(inputs);
    } else {
      for (const auto& [name, v] : sides.reference_sets[static_cast<size_t>(t)].outputs) b.emplace_back(name, v);
    }
    CompareValueLists(a, b, setup.tolerance, t, r.outputs);
    bool failed = false;
    for (const auto& o : r.outputs) failed |= o.compared() && o.worst_trial == t && !o.stats.pass();
    if (failed && r.first_failed_trial < 0) r.first_failed_trial = t;
  }
  bool any = false;
  for (const auto& o : r.outputs) any |= o.compared();
  if (!any) {
    throw InvalidArgumentError("--reference '" + setup.reference_dir + "' holds no output of the model");
  }
  return r;
}

}  // namespace ferry::tools
