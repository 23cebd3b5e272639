// ferry compare MODEL: run a model under two configurations (or one against stored outputs) and report how far
// apart the outputs are; --layerwise finds the first divergent node, --bisect cuts out a reproducer, --ops checks
// nodes of some op types on their own. The work is in src/tools/compare*.h.
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "ferry/error.h"
#include "session_flags.h"
#include "tools/compare.h"
#include "tools/compare_bisect.h"
#include "tools/compare_format.h"
#include "tools/compare_layerwise.h"
#include "tools/compare_ops.h"
#include "tools/compare_report.h"

namespace ferry::cli {
namespace {

struct CompareArgs {
  std::string model;
  std::string a = tools::kDefaultConfigA, b = tools::kDefaultConfigB;
  std::string reference, inputs = "random";
  std::vector<std::string> shapes, ranges, per_output;
  int64_t batch = -1;
  int trials = 0;
  uint64_t seed = 0;
  double atol = tools::CompareTolerance().atol, rtol = tools::CompareTolerance().rtol;
  bool layerwise = false, json = false;
  std::string bisect, ops;
  CLI::App* cmd = nullptr;
};

// Everything that can be wrong with the command line itself (exit 2).
tools::CompareSetup ParseSetup(const CompareArgs& a) {
  tools::CompareSetup s;
  s.model = a.model;
  s.a = tools::ParseCompareConfig(a.a, "--a");
  s.b = tools::ParseCompareConfig(a.b, "--b");
  s.reference_dir = a.reference;
  if (!a.reference.empty()) {
    if (a.cmd->count("--b")) throw InvalidArgumentError("--b and --reference both name side B; give one");
    if (a.layerwise || !a.bisect.empty() || !a.ops.empty()) {
      throw InvalidArgumentError("--layerwise, --bisect and --ops run two configurations; they do not take --reference");
    }
  }
  if (!a.bisect.empty() && !a.ops.empty()) throw InvalidArgumentError("--bisect and --ops do not go together");
  s.inputs = tools::ParseInputSource(a.inputs);
  s.inputs_given = a.cmd->count("--inputs") > 0;
  ParseInputFlags(a.shapes, a.ranges, s.inputs.spec);
  if (a.batch >= 0) s.inputs.spec.batch = a.batch;
  s.inputs.spec.seed = a.seed;
  s.trials = a.trials > 0 ? a.trials : 1;
  if (!(a.atol >= 0) || !(a.rtol >= 0)) throw InvalidArgumentError("--atol and --rtol must be >= 0");
  s.tolerance.all = {a.atol, a.rtol};
  for (const std::string& p : a.per_output) {
    auto [name, tolerance] = tools::ParsePerOutputTolerance(p, a.rtol);
    if (!s.tolerance.by_name.emplace(name, tolerance).second) {
      throw InvalidArgumentError("--per-output " + name + " is given twice");
    }
  }
  return s;
}

void PrintHeader(const tools::CompareSetup& s, const tools::CompareSides* sides, int trials) {
  std::cout << "model " << s.model << "\n";
  std::cout << "  A: " << s.a.text << "  (" << tools::DescribeConfig(s.a) << ")\n";
  if (s.reference_dir.empty()) {
    std::cout << "  B: " << s.b.text << "  (" << tools::DescribeConfig(s.b) << ")\n";
  } else {
    std::cout << "  B: the outputs stored in " << s.reference_dir << "\n";
  }
  std::string source = s.inputs.dir;
  if (sides) source = sides->Source(s, 0);
  else if (s.inputs.kind == tools::InputSource::Kind::kRandom) source = "random, seed " + std::to_string(s.inputs.spec.seed);
  else if (s.inputs.kind != tools::InputSource::Kind::kDir) source = s.inputs.kind == tools::InputSource::Kind::kOnes ? "ones" : "zeros";
  std::cout << "  inputs: " << source;
  if (trials > 1) std::cout << " (" << trials << " trials, the worst reported)";
  std::cout << "\n  tolerance: " << tools::ToleranceText(s.tolerance.all);
  for (const auto& [name, t] : s.tolerance.by_name) std::cout << "; '" << name << "': " << tools::ToleranceText(t);
  std::cout << "\n";
}

int RunOps(const CompareArgs& args, const tools::CompareSetup& s) {
  std::vector<std::string> ops = SplitList(args.ops);
  const int trials = args.trials > 0 ? args.trials : 3;
  const auto session_b = Session::Create(s.model, s.b.options);
  std::vector<tools::DataSet> sets;
  if (s.inputs.kind == tools::InputSource::Kind::kDir) {
    sets = tools::ReadDataDir(s.inputs.dir, session_b->inputs(), session_b->outputs());
  }
  const auto inputs = tools::MakeTrialInputs(*session_b, s.inputs, 0, sets.empty() ? nullptr : &sets.front());
  const auto original = tools::LoadOriginalModel(s.model);
  const tools::CapturedRun captured = tools::CaptureRun(*session_b, inputs, nullptr);
  const tools::OpsReport r = tools::CompareOps(*original, captured, ops, s.a, s.b, s.tolerance, trials, s.inputs.spec.seed);
  if (args.json) {
    nlohmann::json j = {{"model", s.model},
                        {"a", tools::CompareSideJson(s.a, nullptr)},
                        {"b", tools::CompareSideJson(s.b, session_b.get())}};
    j["tolerance"] = {{"atol", s.tolerance.all.atol}, {"rtol", s.tolerance.all.rtol}};
    j["ops"] = tools::OpsJson(r);
    j["pass"] = r.flagged() == 0;
    std::cout << j.dump(2) << "\n";
  } else {
    PrintHeader(s, nullptr, 1);
    std::cout << "ops " << args.ops << ": each node alone, " << trials
              << (trials == 1 ? " trial" : " trials (the first with the values the model computed, then random in "
                                           "their ranges)")
              << "\n";
    std::cout << tools::FormatOps(r);
  }
  return r.flagged() ? 3 : 0;
}

int Run(const CompareArgs& args) {
  tools::CompareSetup s;
  try {
    s = ParseSetup(args);
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry compare: " << e.what() << "\n";
    return 2;
  }
  // A side's plugins load first (a bad one: exit 1), then its backend names are checked (unknown: exit 2).
  const bool two_sides = s.reference_dir.empty();
  LoadPlugins(s.a.options.plugins);
  if (two_sides) LoadPlugins(s.b.options.plugins);
  try {
    CheckBackendNames(s.a.options.backends, s.a.options.pins, "--a '" + s.a.text + "': ");
    if (two_sides) CheckBackendNames(s.b.options.backends, s.b.options.pins, "--b '" + s.b.text + "': ");
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry compare: " << e.what() << "\n";
    return 2;
  }
  if (!args.ops.empty()) return RunOps(args, s);
  const tools::CompareResult r = tools::RunComparison(s, args.layerwise, args.bisect);
  if (args.json) {
    std::cout << tools::CompareResultJson(s, r) << "\n";
    return r.pass() ? 0 : 3;
  }
  PrintHeader(s, &r.sides, r.sides.trials);
  std::cout << tools::FormatOutputReport(r.outputs);
  if (r.layers) {
    if (r.sides.trials > 1) {
      std::cout << "layerwise on trial " << r.layer_trial << " (" << r.sides.Source(s, r.layer_trial) << ")\n";
    }
    std::cout << tools::FormatLayerwise(*r.layers);
  }
  if (r.bisect) std::cout << tools::FormatBisect(*r.bisect, s.a, s.b);
  if (!args.bisect.empty() && !r.bisect) std::cout << "bisect: no divergence, nothing written\n";
  return r.pass() ? 0 : 3;
}

}  // namespace

Command AddCompareCommand(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand("compare", "compare a model's results under two configurations (exit 3: beyond tolerance)");
  args->cmd = cmd;
  cmd->add_option("model", args->model, "model.onnx")->required();
  cmd->add_option("--a", args->a,
                  "side A: BACKENDS[:opt=N][:threads=N][:deterministic][:isa=EXTS][:plugin=PATH][:pin=NODE_OR_OP=BACKEND]"
                  "[:disable-pass=NAME][:no-fallback][:legalize][:no-arena] (default cpu,ref; docs/compare.md)")
      ->capture_default_str();
  cmd->add_option("--b", args->b, "side B, the oracle: a configuration as for --a (default ref:opt=0)")
      ->capture_default_str();
  cmd->add_option("--reference", args->reference,
                  "side B is stored outputs: a folder of NAME.npy/NAME.pb, or test_data_set_N/output_K.pb (their "
                  "input_K.pb feed the model unless --inputs is given)");
  cmd->add_option("--inputs", args->inputs, "random (default), zeros, ones, or a folder of inputs (as --reference)");
  cmd->add_option("--range", args->ranges, "NAME=LO,HI value range for random inputs; repeatable");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x224x224 for inputs with symbolic dims; repeatable");
  cmd->add_option("--batch", args->batch, "value for every symbolic leading (batch) dim");
  cmd->add_option("--trials", args->trials, "random input draws (seeds S, S+1, ...), the worst reported (default 1; 3 with --ops)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", args->seed, "seed S of the first random draw (default 0)");
  cmd->add_option("--atol", args->atol, "absolute tolerance: |a-b| <= atol + rtol*|b|, b = side B")->capture_default_str();
  cmd->add_option("--rtol", args->rtol, "relative tolerance")->capture_default_str();
  cmd->add_option("--per-output", args->per_output, "NAME=ATOL[,RTOL]: the tolerance for one value; repeatable");
  cmd->add_flag("--layerwise", args->layerwise,
                "find the first node whose output differs beyond tolerance (both sides run their optimized graphs; "
                "values are compared where both computed them); a breach inside also fails the check");
  cmd->add_option("--bisect", args->bisect,
                  "with the first divergence, write the smallest subgraph that reproduces it to FILE.onnx and its "
                  "inputs to FILE_data/ (implies --layerwise)")
      ->type_name("FILE.onnx");
  cmd->add_option("--ops", args->ops,
                  "OP,OP,...: run each node of these op types on its own under both configurations (N trials) and "
                  "flag those beyond tolerance");
  cmd->add_flag("--json", args->json, "machine-readable output");
  return [args] { return Run(*args); };
}

}  // namespace ferry::cli
