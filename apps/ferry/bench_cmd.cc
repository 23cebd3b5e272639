// ferry bench MODEL: latency and throughput over batch sizes x intra-op threads x concurrency (docs/bench.md);
// ferry bench --server URL --model NAME: the same sweeps against a running KServe v2 server (HTTP or gRPC).
// The runners, the statistics, the reports and the chart live in src/tools/bench*.h.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>

#include "commands.h"
#include "core/parse_number.h"
#include "ferry/error.h"
#include "ferry/limits.h"
#include "session_flags.h"
#include "tools/bench.h"
#include "tools/bench_report.h"
#include "server/grpc_bench_client.h"
#include "tools/bench_server.h"
#include "tools/bench_svg.h"

namespace ferry::cli {
namespace {

struct BenchArgs {
  std::string model;
  std::string batches = "1", threads = "0", concurrency = "1", percentiles = "50,90,99";
  double duration_s = 0;
  int64_t iterations = 0;
  int warmup = 2;
  double knee_threshold_percent = 10;
  double max_latency_ms = 0;
  std::vector<std::string> shapes, ranges;
  uint64_t seed = 0;
  SessionFlags session;
  bool json = false, csv = false;
  std::string plot;
  std::string server, server_model, model_version, protocol = "http", tensors = "binary";
  double request_timeout_s = 30;
};

// Flags that only mean something for a model run in process (a server has its own threads and sessions).
const char* const kInProcessFlags[] = {"--threads", "--backends", "--level", "--isa", "--disable-pass", "--legalize",
                                       "--no-memory-arena", "--deterministic", "--adapt-threads", "--plugin", "--pin",
                                       "--no-fallback"};
// Flags that only mean something with --server.
const char* const kServerFlags[] = {"--model", "--model-version", "--protocol", "--tensors", "--request-timeout"};

// "" when the combination of flags is usable, else the usage error.
std::string CheckTarget(const CLI::App& cmd, const BenchArgs& a) {
  if (a.server.empty()) {
    for (const char* f : kServerFlags) {
      if (cmd.count(f) > 0) return std::string(f) + " needs --server URL";
    }
    if (a.model.empty()) return "give a MODEL file, or --server URL --model NAME";
    return "";
  }
  if (!a.model.empty()) {
    return "give either a MODEL file or --server URL --model NAME, not both ('" + a.model +
           "'; the model's name on the server goes after --model)";
  }
  if (a.server_model.empty()) return "--server needs --model NAME (the model's name on the server)";
  for (const char* f : kInProcessFlags) {
    if (cmd.count(f) > 0) return std::string(f) + " does not apply to --server (the server runs the model)";
  }
  if (a.protocol == "grpc" && a.tensors == "json") {
    return "--tensors json is for --protocol http; gRPC requests carry raw tensor contents";
  }
  return "";
}

// A comma-separated list of integers in `min`..`max` ("1,2,4"); an error message, or "" when `text` is one.
template <typename T>
std::string ParseIntList(const std::string& text, T min, T max, std::vector<T>* out) {
  std::vector<T> values;
  for (const std::string& item : SplitList(text)) {
    const std::optional<int64_t> v = ParseInt64(item);
    if (!v) return "'" + item + "' is not an integer";
    if (*v < static_cast<int64_t>(min)) return std::to_string(*v) + " is below " + std::to_string(min);
    if (*v > static_cast<int64_t>(max)) return std::to_string(*v) + " is above " + std::to_string(max);
    values.push_back(static_cast<T>(*v));
  }
  if (values.empty()) return "the list is empty";
  if (out) *out = std::move(values);
  return "";
}

std::string ParsePercentiles(const std::string& text, std::vector<double>* out) {
  std::vector<double> values;
  for (const std::string& item : SplitList(text)) {
    const std::optional<double> v = ParseDouble(item);
    if (!v) return "'" + item + "' is not a number";
    if (!(*v > 0 && *v <= 100)) return item + " is not in (0, 100]";
    values.push_back(*v);
  }
  if (values.empty()) return "the list is empty";
  if (out) *out = std::move(values);
  return "";
}

template <typename T>
CLI::Validator IntList(T min, T max = std::numeric_limits<T>::max()) {
  return CLI::Validator([min, max](std::string& s) { return ParseIntList<T>(s, min, max, nullptr); }, "LIST");
}

// One updating line on a terminal: configuration i/n, what it is doing, elapsed time, the p50 so far.
void ShowProgress(const tools::BenchProgress& p) {
  std::string line = "[" + std::to_string(p.index + 1) + "/" + std::to_string(p.total) + "] batch " +
                     std::to_string(p.config.batch) + ", threads " +
                     (p.config.threads == 0 ? std::string("all") : std::to_string(p.config.threads)) +
                     ", concurrency " + std::to_string(p.config.concurrency) + ": ";
  char buf[96];
  if (p.warming_up) {
    line += "warming up";
  } else {
    line += std::to_string(p.done) + " requests";
    if (p.p50_ms) {
      std::snprintf(buf, sizeof buf, ", p50 %.2f ms", *p.p50_ms);
      line += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "  (%.1f s)", p.elapsed_s);
  line += buf;
  std::cerr << "\r\x1b[K" << line << std::flush;
}

int Bench(const BenchArgs& a) {
  tools::BenchOptions o;
  o.model = a.model;
  LoadPlugins(a.session.placement.plugins);  // a bad plugin: exit 1; its backends may be named below
  try {  // a malformed or repeated --shape or --range, a malformed --pin, an unknown backend: usage errors
    o.session = a.session.Options();
    CheckBackendNames(o.session.backends, o.session.pins);
    ParseInputFlags(a.shapes, a.ranges, o.inputs);
  } catch (const InvalidArgumentError& e) {
    std::cerr << "ferry bench: " << e.what() << "\n";
    return 2;
  }
  o.inputs.seed = a.seed;
  // A --shape or --range naming no input of the model is a usage error too, as in ferry run (read without weights).
  if (a.server.empty() && (!o.inputs.shapes.empty() || !o.inputs.ranges.empty())) {
    tools::InputSpec names = o.inputs;
    names.random = true;  // only the names are checked here
    const std::vector<IoInfo> declared = ReadModelInputs(a.model);  // a bad model: exit 1
    try {
      tools::CheckInputNames(declared, names);
    } catch (const InvalidArgumentError& e) {
      std::cerr << "ferry bench: " << e.what() << "\n";
      return 2;
    }
  }
  CapOneDnnIsa(o.session.isa);  // --isa narrows oneDNN's code too
  // Validated while parsing the command line (the validators below), with the same bounds.
  ParseIntList<int64_t>(a.batches, 1, std::numeric_limits<int64_t>::max(), &o.batches);
  ParseIntList<int>(a.threads, 0, kMaxThreads, &o.threads);
  ParseIntList<int>(a.concurrency, 1, kMaxThreads, &o.concurrency);
  ParsePercentiles(a.percentiles, &o.percentiles);
  o.warmup = a.warmup;
  o.iterations = a.iterations;
  o.duration_s = a.iterations > 0 ? 0 : (a.duration_s > 0 ? a.duration_s : 2.0);

  // Open the chart's file first: a path that cannot be written fails before the benchmark, not after it.
  std::ofstream plot;
  if (!a.plot.empty()) {
    plot.open(a.plot, std::ios::binary | std::ios::trunc);
    if (!plot) throw InvalidArgumentError("--plot: cannot write '" + a.plot + "'");
  }
  const bool progress = isatty(STDERR_FILENO) != 0;
  tools::BenchReport report;
  report.options = o;
  report.knee_threshold = a.knee_threshold_percent / 100.0;
  if (a.max_latency_ms > 0) report.max_latency_ms = a.max_latency_ms;
  const auto show = progress ? ShowProgress : std::function<void(const tools::BenchProgress&)>();
  try {
    if (a.server.empty()) {
      report.run = tools::RunBench(o, show);
    } else {
      tools::ServerBenchOptions so;
      so.url = a.server;
      so.model = a.server_model;
      so.version = a.model_version;
      so.binary = a.tensors == "binary";
      so.timeout_s = a.request_timeout_s;
      so.sweep = o;
      so.sweep.threads = {0};
      const auto transport =
          a.protocol == "grpc" ? server::MakeGrpcBenchTransport(so) : tools::MakeHttpBenchTransport(so);
      report.run = tools::RunServerBench(so, *transport, show);
    }
  } catch (...) {
    if (progress) std::cerr << "\r\x1b[K" << std::flush;
    throw;
  }
  if (progress) std::cerr << "\r\x1b[K" << std::flush;
  tools::AnalyzeBench(report);
  if (!a.plot.empty()) {
    tools::BenchPlot chart = tools::BenchPlotFromReport(report);
    chart.host = tools::BenchHostDescription();
    if (report.run.server) chart.host += " (the client; the model ran on the server)";
    chart.ferry_version = FERRY_VERSION;  // CMakeLists.txt's project() version
    chart.date = tools::UtcDate(std::time(nullptr));
    const std::string svg = tools::RenderBenchSvg(chart);
    if (!plot.write(svg.data(), static_cast<std::streamsize>(svg.size())) || !plot.flush()) {
      throw InvalidArgumentError("--plot: cannot write '" + a.plot + "'");
    }
  }
  if (a.json) {
    std::cout << tools::FormatBenchJson(report);
  } else if (a.csv) {
    std::cout << tools::FormatBenchCsv(report);
  } else {
    std::cout << tools::FormatBenchTable(report);
    if (!a.plot.empty()) std::cout << "chart written to " << a.plot << " (open it in a browser)\n";
  }
  // Failed requests (server runs) fail the command once the report is out.
  if (const int64_t errors = tools::BenchErrorCount(report.run); errors > 0) {
    std::cerr << "ferry bench: " << errors << " measured request(s) failed (see the report); exit 1\n";
    return 1;
  }
  return 0;
}

}  // namespace

Command AddBenchCommand(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "latency and throughput over batch sizes, threads and concurrency");
  cmd->add_option("model", args->model, "model.onnx (or --server URL --model NAME)");
  cmd->add_option("--batch", args->batches, "batch sizes, comma-separated (default 1): dim 0 of every input whose dim 0 is "
                  "symbolic (a model without one runs at its own shapes)")
      ->check(IntList<int64_t>(1));
  cmd->add_option("--threads", args->threads,
                  "intra-op thread counts, comma-separated (default 0 = all cores; at most 1024)")
      ->check(IntList<int>(0, kMaxThreads));
  cmd->add_option("--concurrency", args->concurrency,
                  "requests in flight on the one session, each from its own thread; comma-separated (default 1; "
                  "at most 1024)")
      ->check(IntList<int>(1, kMaxThreads));
  auto* duration = cmd->add_option("--duration", args->duration_s,
                                   "seconds of measured requests per configuration (default 2)")
                       ->check(CLI::PositiveNumber);
  auto* iterations = cmd->add_option("--iterations", args->iterations,
                                     "measured requests per configuration, all concurrent workers together")
                         ->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  duration->excludes(iterations);
  cmd->add_option("--warmup", args->warmup, "requests per configuration run and discarded first (default 2)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--percentiles", args->percentiles, "latency percentiles, comma-separated (default 50,90,99)")
      ->check(CLI::Validator([](std::string& s) { return ParsePercentiles(s, nullptr); }, "LIST"));
  cmd->add_option("--knee-threshold", args->knee_threshold_percent,
                  "percent: the knee is the largest batch whose throughput beats every smaller batch's by more "
                  "than this (default 10)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-latency", args->max_latency_ms,
                  "ms: also report the batch with the best throughput whose largest requested percentile latency "
                  "is at most this")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--shape", args->shapes,
                  "NAME=1x3x224x224 for inputs with symbolic dims (dim 0 is replaced by each batch); repeatable");
  cmd->add_option("--range", args->ranges, "NAME=LO,HI value range of the random inputs; repeatable");
  cmd->add_option("--seed", args->seed, "seed of the random inputs (default 0)");
  AddSessionFlags(*cmd, args->session);
  auto* json = cmd->add_flag("--json", args->json, "machine-readable output (fields: docs/bench.md)");
  auto* csv = cmd->add_flag("--csv", args->csv, "one CSV row per configuration, with a header");
  json->excludes(csv);
  cmd->add_option("--plot", args->plot,
                  "draw latency, throughput and peak memory against batch size as an SVG chart (a row of panels "
                  "per thread count)")
      ->type_name("FILE.svg");
  cmd->add_option("--server", args->server,
                  "benchmark a running KServe v2 server (ferry serve, Triton) instead of a model file: "
                  "http://HOST:PORT, or HOST:PORT with --protocol grpc")
      ->type_name("URL");
  cmd->add_option("--model", args->server_model, "with --server: the model's name on the server")->type_name("NAME");
  cmd->add_option("--model-version", args->model_version, "with --server: the version (default: the server's choice)");
  cmd->add_option("--protocol", args->protocol, "with --server: http (KServe v2 REST, default) or grpc")
      ->check(CLI::IsMember({"http", "grpc"}));
  cmd->add_option("--tensors", args->tensors,
                  "with --server over http: binary (the binary tensor data extension, default) or json tensors")
      ->check(CLI::IsMember({"binary", "json"}));
  cmd->add_option("--request-timeout", args->request_timeout_s,
                  "with --server: seconds a request may take before it counts as failed (default 30)")
      ->check(CLI::PositiveNumber);
  CLI::App* self = cmd;
  return [args, self] {
    if (const std::string usage = CheckTarget(*self, *args); !usage.empty()) {
      std::cerr << "ferry bench: " << usage << "\n";
      return 2;
    }
    return Bench(*args);
  };
}

}  // namespace ferry::cli
