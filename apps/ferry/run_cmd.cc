// ferry run MODEL: load, feed inputs (files or random), run, print a summary of each output.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "core/file_fingerprint.h"
#include "core/peak_rss.h"
#include "memory_json.h"
#include "session_flags.h"
#include "ferry/error.h"
#include "ferry/session.h"
#include "tools/fallback_share.h"
#include "tools/npy.h"
#include "tools/profile.h"
#include "tools/run_inputs.h"

namespace ferry::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs, shapes, ranges;
  bool random = false;
  uint64_t seed = 0;
  int64_t batch = -1;
  std::string output_dir;
  int repeat = 1;
  bool json = false;
  int threads = 0;
  SessionFlags session;
  bool report = false;
  bool verbose = false;
  std::string dump_ir;
  std::string profile;           // --profile FILE: the Chrome trace
  bool profile_summary = false;  // --profile-summary
  bool lockstep = false;         // --lockstep: one run per line read on stdin
  size_t profile_top = 10;
};

// Makes --output-dir (and its parents) before the session is created; one that cannot be made is an
// InvalidArgumentError naming it and why.
void PrepareOutputDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    throw InvalidArgumentError("--output-dir: cannot create the directory '" + dir + "'" +
                               (ec ? ": " + ec.message() : ": a file of that name is in the way"));
  }
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  auto idx = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())) - 1);
  return v[std::min(idx, v.size() - 1)];
}

int Run(const RunArgs& a) {
  // The flags' own values first: a malformed or repeated --input, --shape or --range, a malformed --pin, or a
  // backend no built-in or plugin provides, is a usage error (exit 2), before the model is read. Plugins load
  // before the names are checked (their backends may be named); a bad plugin is an error (exit 1), as a bad model.
  SessionOptions options;
  tools::InputSpec spec;
  try {
    options = a.session.Options();
    ParseInputFiles(a.inputs, spec);
    ParseInputFlags(a.shapes, a.ranges, spec);
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry run: " << e.what() << "\n";
    return 2;
  }
  LoadPlugins(options.plugins);
  try {
    CheckBackendNames(options.backends, options.pins);
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry run: " << e.what() << "\n";
    return 2;
  }
  options.threads = a.threads;
  if (a.batch >= 0) spec.batch = a.batch;
  spec.random = a.random;
  spec.seed = a.seed;
  // --shape and --batch fix the inputs' free dims for the optimizer, the memory plan and the kernels, as
  // `ferry optimize --shape` does, not only the random inputs' sizes. They are checked against the inputs the
  // model declares (read without its weights): a --shape naming no input or contradicting it, or a --batch the
  // model has no free leading dim for, is a usage error.
  if (spec.batch || !spec.shapes.empty()) {
    const std::vector<IoInfo> declared = ReadModelInputs(a.model);  // a bad model: exit 1
    try {
      options.input_shapes = tools::FixedInputShapes(declared, spec);
    } catch (const InvalidArgumentError& e) {
      std::cerr << "ferry run: " << e.what() << "\n";
      return 2;
    }
  }
  if (!a.output_dir.empty()) PrepareOutputDir(a.output_dir);  // before the work it would otherwise throw away
  CapOneDnnIsa(options.isa);  // --isa narrows oneDNN's code too

  const auto created_at = std::chrono::steady_clock::now();
  auto session = Session::Create(a.model, options);
  const double session_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - created_at).count();
  if (!a.dump_ir.empty()) {
    const std::string ir = session->DumpIr();
    std::ofstream out(a.dump_ir, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(ir.data(), static_cast<std::streamsize>(ir.size())) || !out.flush()) {
      throw InvalidArgumentError("--dump-ir: cannot write '" + a.dump_ir + "'");
    }
  }
  // A flag naming no input, or an input neither --input nor --random feeds: usage errors, known once the session
  // lists its inputs.
  try {
    tools::CheckInputNames(session->inputs(), spec);
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry run: " << e.what() << "\n";
    return 2;
  }
  auto inputs = tools::BuildInputs(*session, spec);
  std::vector<double> times_ms;
  std::vector<int> threads_used;  // per run (the adaptive policy runs some on 1 thread while the host is busy)
  nlohmann::json cpu_wait_ms = nlohmann::json::array();  // per run: what the policy measured (null: not measured)
  std::vector<NamedValue> outputs;
  RunStats stats;
  const bool profiling = !a.profile.empty() || a.profile_summary;
  std::vector<tools::ProfiledRun> profiled;  // every run; the first (warm-up) is dropped below when there are several
  const int repeat = std::max(1, a.repeat);
  // --lockstep: "ready" once the inputs are built, then one run per line read on stdin, each answered with its
  // latency in ms on a line of its own, until end of input (then the usual summary). A driver alternating Ferry
  // with another runtime run by run (bench/compare_ort.py) gives both the same moment-to-moment machine load.
  std::string step;
  if (a.lockstep) std::cout << "ready" << std::endl;
  for (int r = 0; a.lockstep ? static_cast<bool>(std::getline(std::cin, step)) : r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    stats = RunStats();
    stats.profile = profiling || a.report;  // --report: the fallback's share of the run time
    outputs = session->RunValues(inputs, &stats);
    const auto t1 = std::chrono::steady_clock::now();
    times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    threads_used.push_back(stats.threads_used);
    cpu_wait_ms.push_back(stats.cpu_wait_ms >= 0 ? nlohmann::json(stats.cpu_wait_ms) : nlohmann::json(nullptr));
    if (a.lockstep) std::cout << std::to_string(times_ms.back()) << std::endl;  // ms with 6 decimals
    if (profiling) {
      const auto us = [](std::chrono::steady_clock::time_point t) {
        return std::chrono::duration<double, std::micro>(t.time_since_epoch()).count();
      };
      profiled.push_back({stats, us(t0), us(t1)});
    }
  }
  if (times_ms.empty()) {
    throw InvalidArgumentError("--lockstep: standard input ended before the first run was asked for");
  }
  if (profiled.size() > 1) profiled.erase(profiled.begin());  // the warm-up (with --lockstep, known only now)
  // The trace records the model's fingerprint: `ferry check --html --profile` refuses a trace of another model.
  if (!a.profile.empty()) tools::WriteProfileTrace(profiled, "ferry " + a.model, a.profile, FileFingerprint(a.model));
  tools::Profile profile;
  if (a.profile_summary) {
    std::vector<RunStats> runs;
    for (auto& p : profiled) runs.push_back(std::move(p.stats));
    profile = tools::SummarizeProfile(runs);
  }
  if (!a.output_dir.empty()) {
    for (const auto& [name, v] : outputs) {
      if (!v.is_tensor()) continue;
      std::string file = name;
      std::replace_if(file.begin(), file.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
      tools::WriteNpy((std::filesystem::path(a.output_dir) / (file + ".npy")).string(), v.tensor());
    }
  }
  // The last run's node times: what share of it fell to the backends after the first (a warning above 5%).
  const tools::FallbackShare share = tools::MeasureFallbackShare(session->placement(), &stats.node_times);
  if (a.report) {
    const std::string warning = tools::FallbackWarning(share);
    if (!warning.empty()) std::cerr << "ferry run: warning: " << warning << "\n";
  }
  nlohmann::json j;
  j["model"] = a.model;
  j["backends"] = session->placement().backends;
  if (a.report) {
    j["placement"] = nlohmann::json::parse(FormatPlacementJson(session->placement()));
    j["placement"]["measured"] = {{"copies", stats.copies}, {"bytes_copied", stats.bytes_copied}};
    j["placement"]["fallback_share"] = nlohmann::json::parse(tools::FallbackShareJson(share));
  }
  for (const auto& [name, v] : outputs) {
    nlohmann::json o;
    o["name"] = name;
    if (v.is_tensor()) {
      const Tensor& t = v.tensor();
      auto s = tools::Summarize(t);
      o["kind"] = "tensor";
      o["dtype"] = std::string(DataTypeName(t.dtype()));
      o["shape"] = t.shape();
      if (s.numeric && t.size() > 0) {
        o["min"] = s.min;
        o["max"] = s.max;
        o["mean"] = s.mean;
        o["nan"] = s.nan;
        o["inf"] = s.inf;
      }
    } else if (v.is_sequence()) {
      o["kind"] = "sequence";
      o["length"] = v.sequence().tensors.size();
    } else {
      o["kind"] = "none";
    }
    j["outputs"].push_back(o);
  }
  j["runs"] = times_ms.size();
  j["session_ms"] = session_ms;
  j["latencies_ms"] = times_ms;
  j["threads_used"] = threads_used;
  j["cpu_wait_ms"] = cpu_wait_ms;
  j["peak_rss_kb"] = PeakRssKb();
  {
    // Predicted (before running, from static shapes) next to what the runs planned (measured).
    const MemoryPrediction& p = session->PredictMemory();
    nlohmann::json arenas = nlohmann::json::array();
    for (const auto& s : session->arenas()) {
      arenas.push_back({{"signature", s.signature}, {"arena_bytes", s.arena_bytes},
                        {"lower_bound_bytes", s.lower_bound}, {"buffers", s.buffers}, {"blocks", s.blocks}});
    }
    nlohmann::json predicted = MemoryPredictionJson(p);
    predicted["unknown_values"] = p.unknown.size();
    j["memory"] = {{"predicted", predicted},
                   {"kernel_bytes_now", session->kernel_held_bytes()},
                   {"arenas", arenas}};
  }
  // The first run is the cold one (kernels pack, the arena is planned, caches are cold): reported apart, with the
  // median and p90 of the runs after it (of the one run when there is only one).
  const std::vector<double> warm(times_ms.begin() + (times_ms.size() > 1 ? 1 : 0), times_ms.end());
  j["latency_ms"] = {{"first", times_ms.front()},
                     {"median", Percentile(warm, 0.5)},
                     {"p90", Percentile(warm, 0.9)},
                     {"warm_runs", times_ms.size() > 1 ? warm.size() : 0}};
  if (a.profile_summary) j["profile"] = nlohmann::json::parse(tools::FormatProfileJson(profile));
  if (!a.profile.empty()) j["profile_trace"] = a.profile;
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "model " << a.model << " on ";
  for (size_t i = 0; i < session->placement().backends.size(); ++i) {
    std::cout << (i ? "," : "") << session->placement().backends[i];
  }
  std::cout << "\n";
  if (a.report) {
    std::cout << FormatPlacementText(session->placement(), a.verbose);
    std::cout << "  measured in the last run: " << stats.copies << " copies, " << stats.bytes_copied
              << " bytes copied\n";
    std::cout << "  " << tools::FormatFallbackShare(share) << "\n";
  }
  for (const auto& o : j["outputs"]) {
    std::cout << "  " << o["name"].get<std::string>() << ": ";
    if (o["kind"] == "tensor") {
      std::cout << o["dtype"].get<std::string>() << " " << ShapeToString(o["shape"].get<std::vector<int64_t>>());
      if (o.contains("min")) {
        std::cout << std::setprecision(6) << "  min " << o["min"].get<double>() << "  max " << o["max"].get<double>()
                  << "  mean " << o["mean"].get<double>();
        if (o["nan"].get<int64_t>() || o["inf"].get<int64_t>()) {
          std::cout << "  nan " << o["nan"].get<int64_t>() << "  inf " << o["inf"].get<int64_t>();
        }
      }
    } else if (o["kind"] == "sequence") {
      std::cout << "sequence of " << o["length"].get<size_t>() << " tensors";
    } else {
      std::cout << "none";
    }
    std::cout << "\n";
  }
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "session created in " << session_ms << " ms\n";
  if (times_ms.size() == 1) {
    std::cout << "run time " << times_ms.front() << " ms\n";
  } else {
    std::cout << "runs " << times_ms.size() << ": first " << times_ms.front() << " ms, then median "
              << Percentile(warm, 0.5) << " ms, p90 " << Percentile(warm, 0.9) << " ms over " << warm.size()
              << (warm.size() == 1 ? " run\n" : " runs\n");
  }
  const int most = *std::max_element(threads_used.begin(), threads_used.end());
  if (const auto fewer = std::count_if(threads_used.begin(), threads_used.end(), [&](int t) { return t < most; })) {
    std::cout << fewer << " of " << threads_used.size() << " runs used 1 thread instead of " << most
              << ": the host was busy (--adapt-threads; docs/threads.md)\n";
  }
  if (a.profile_summary) std::cout << tools::FormatProfile(profile, a.profile_top);
  if (!a.profile.empty()) {
    std::cout << "profile trace of " << profiled.size() << (profiled.size() == 1 ? " run" : " runs")
              << " written to " << a.profile << " (open it in ui.perfetto.dev or chrome://tracing)\n";
  }
  if (!a.output_dir.empty()) std::cout << "outputs written to " << a.output_dir << "\n";
  return 0;
}

}  // namespace

Command AddRunCommand(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "run a model and summarise its outputs");
  cmd->add_option("model", args->model, "model.onnx")->required();
  cmd->add_option("--input", args->inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  cmd->add_flag("--random", args->random, "random inputs: floats in [0,1), integers in [0,100)");
  cmd->add_option("--seed", args->seed, "seed for --random");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x224x224 for inputs with symbolic dims; repeatable");
  cmd->add_option("--batch", args->batch, "value for every symbolic leading (batch) dim");
  cmd->add_option("--range", args->ranges, "NAME=LO,HI value range for --random; repeatable");
  cmd->add_option("--output-dir", args->output_dir, "write each output as <name>.npy here");
  cmd->add_option("--repeat", args->repeat, "run N times: the first (cold) run, then the median and p90 of the others")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--json", args->json, "machine-readable output");
  cmd->add_flag("--lockstep", args->lockstep,
                "for benchmark drivers: print \"ready\", then run once per line read on stdin and print that run's "
                "latency (ms) on a line, until end of input; then the usual summary (--repeat is ignored)");
  cmd->add_option("--threads", args->threads, "intra-op threads (0 = all cores; at most 1024)")->check(ThreadCount());
  AddSessionFlags(*cmd, args->session);
  cmd->add_option("--dump-ir", args->dump_ir, "write the graph the session runs (after the passes) as IR text to FILE");
  cmd->add_option("--profile", args->profile,
                  "time every node and write a Chrome trace (ui.perfetto.dev, chrome://tracing) of the runs to FILE: "
                  "one event per node with its op, backend, shapes and bytes (the first of several runs is a "
                  "warm-up and not traced)")
      ->type_name("FILE");
  cmd->add_flag("--profile-summary", args->profile_summary,
                "time every node; print the median per op type and per node: ms, share, backend (with --json: a "
                "\"profile\" key; the first of several runs is a warm-up and not counted)");
  cmd->add_option("--profile-top", args->profile_top, "with --profile-summary: nodes listed (default 10, 0 = all)");
  cmd->add_flag("--report", args->report,
                "print where each node runs and why: segments, fallbacks, copies (with --json: a \"placement\" key)");
  cmd->add_flag("-v,--verbose", args->verbose, "with --report: list every node, not only the ones not native");
  return [args] { return Run(*args); };
}

}  // namespace ferry::cli
