#include "tools/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/regular_file.h"
#include "ferry/error.h"

namespace ferry::tools {
namespace {

using Json = nlohmann::json;

// The median (the upper one of an even count) of `values` (>= 0) padded with zeros to `n` values.
double MedianWithZeros(std::vector<double> values, size_t n) {
  const size_t zeros = n > values.size() ? n - values.size() : 0;
  const size_t mid = (values.size() + zeros) / 2;
  if (mid < zeros || values.empty()) return 0;
  const auto k = static_cast<std::ptrdiff_t>(mid - zeros);
  std::nth_element(values.begin(), values.begin() + k, values.end());
  return values[static_cast<size_t>(k)];
}

// Microseconds rounded to the nanosecond (a trace stays short and exact enough).
double RoundUs(double us) { return std::round(us * 1000.0) / 1000.0; }

Json StepValuesJson(const std::vector<StepValue>& values) {
  Json out = Json::array();
  for (const StepValue& v : values) {
    out.push_back({{"name", v.name}, {"dtype", v.dtype}, {"shape", v.shape}, {"bytes", v.bytes}});
  }
  return out;
}

Json RowsJson(const std::vector<ProfileRow>& rows, bool nodes) {
  Json out = Json::array();
  for (const ProfileRow& r : rows) {
    Json j = {{"name", r.name}, {"op", r.op},     {"backend", r.backend},
              {"count", r.count}, {"ms", r.ms}, {"percent", r.percent}};
    if (nodes) j["graph"] = r.graph;
    out.push_back(std::move(j));
  }
  return out;
}

// ---- reading a trace (untrusted) ------------------------------------------------------------------------------

[[noreturn]] void Bad(const std::string& path, const std::string& what) {
  throw InvalidArgumentError("profile trace '" + path + "': " + what);
}

// The deepest nesting of arrays and objects in `text` (outside strings), to refuse absurd documents up front.
size_t NestingDepth(const std::string& text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

std::string StringField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A finite number field, or NaN when absent or not a number.
double NumberField(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::numeric_limits<double>::quiet_NaN();
  const double v = it->get<double>();
  return std::isfinite(v) ? v : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Profile SummarizeProfile(const std::vector<RunStats>& runs) {
  Profile p;
  p.runs = static_cast<int>(runs.size());
  if (runs.empty()) return p;
  // Per (graph, node, op): its first appearance, and its time and executions in each run.
  // Sparse per run (a trace read back may name many runs, each with few steps): the runs it ran in, in order.
  struct Acc {
    std::string backend;
    std::vector<std::string> outputs;
    std::vector<size_t> run;  // run index
    std::vector<double> ms;   // its time in that run
    std::vector<int> count;   // its executions in that run
  };
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, Acc> acc;
  std::vector<const std::pair<const Key, Acc>*> ordered;  // by first appearance (first run, then later ones)
  size_t steps = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    steps = std::max(steps, runs[r].node_times.size());
    for (const NodeTime& t : runs[r].node_times) {
      auto [it, added] = acc.try_emplace(Key{t.graph, t.node, t.op});
      Acc& a = it->second;
      if (added) {
        ordered.push_back(&*it);
        a.backend = t.backend;
        for (const StepValue& v : t.outputs) a.outputs.push_back(v.name);
      }
      if (a.run.empty() || a.run.back() != r) {
        a.run.push_back(r);
        a.ms.push_back(0);
        a.count.push_back(0);
      }
      a.ms.back() += std::isfinite(t.ms) && t.ms > 0 ? t.ms : 0;
      a.count.back() += 1;
    }
  }
  p.steps = steps;
  std::map<std::string, size_t> op_index;
  std::map<std::string, std::set<std::string>> op_backends;
  for (const auto* entry : ordered) {
    const auto& [key, a] = *entry;
    const auto& [graph, node, op] = key;
    const double median = MedianWithZeros(a.ms, runs.size());
    ProfileRow row;
    row.name = node;
    row.op = op;
    row.count = *std::max_element(a.count.begin(), a.count.end());
    row.ms = median;
    row.backend = a.backend;
    row.graph = graph;
    row.outputs = a.outputs;
    p.nodes.push_back(std::move(row));
    auto [it, added] = op_index.emplace(op, p.by_op.size());
    if (added) {
      ProfileRow o;
      o.name = o.op = op;
      p.by_op.push_back(std::move(o));
    }
    p.by_op[it->second].count += 1;
    p.by_op[it->second].ms += median;
    if (!a.backend.empty()) op_backends[op].insert(a.backend);
    p.total_ms += median;
  }
  for (ProfileRow& o : p.by_op) {
    for (const std::string& b : op_backends[o.op]) o.backend += (o.backend.empty() ? "" : ",") + b;
  }
  for (auto* rows : {&p.by_op, &p.nodes}) {
    for (ProfileRow& r : *rows) r.percent = p.total_ms > 0 ? 100.0 * r.ms / p.total_ms : 0;
    std::stable_sort(rows->begin(), rows->end(), [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
  }
  return p;
}

std::string FormatProfile(const Profile& p, size_t top) {
  std::string out;
  char line[1024];
  std::snprintf(line, sizeof line, "profile: median of %d runs, %.3f ms in %zu steps\n", p.runs, p.total_ms, p.steps);
  out += line;
  out += "  op                                   nodes        ms      %  backend\n";
  for (const ProfileRow& r : p.by_op) {
    std::snprintf(line, sizeof line, "  %-36s %5d %9.3f %6.1f  %s\n", r.op.c_str(), r.count, r.ms, r.percent,
                  r.backend.c_str());
    out += line;
  }
  const size_t shown = top == 0 ? p.nodes.size() : std::min(top, p.nodes.size());
  if (shown == p.nodes.size()) {
    out += "  nodes:\n";
  } else {
    std::snprintf(line, sizeof line, "  slowest nodes (%zu of %zu):\n", shown, p.nodes.size());
    out += line;
  }
  out += "         ms      %  count  backend  node (op)\n";
  for (size_t i = 0; i < shown; ++i) {
    const ProfileRow& r = p.nodes[i];
    const std::string where = r.graph.empty() || r.graph == "main" ? "" : " in " + r.graph;
    std::snprintf(line, sizeof line, "  %9.3f %5.1f%%  %5d  %-7s  %s (%s)%s\n", r.ms, r.percent, r.count,
                  r.backend.c_str(), r.name.c_str(), r.op.c_str(), where.c_str());
    out += line;
  }
  return out;
}

std::string FormatProfileJson(const Profile& p) {
  Json j = {{"runs", p.runs},
            {"total_ms", p.total_ms},
            {"steps", p.steps},
            {"by_op", RowsJson(p.by_op, false)},
            {"nodes", RowsJson(p.nodes, true)}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string ProfileTraceJson(const std::vector<ProfiledRun>& runs, const std::string& process_name,
                             const std::string& model) {
  Json events = Json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", process_name}}}});
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", process_name}}}});
  const double origin = runs.empty() ? 0 : runs.front().start_us;
  for (size_t r = 0; r < runs.size(); ++r) {
    const ProfiledRun& run = runs[r];
    // Steps are clamped into their run's span, so rounding can never leave one sticking out.
    const double run_begin = std::floor((run.start_us - origin) * 1000.0) / 1000.0;
    const double run_end = std::max(run_begin, std::ceil((run.end_us - origin) * 1000.0) / 1000.0);
    const int number = static_cast<int>(r) + 1;
    events.push_back({{"name", "run " + std::to_string(number)},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"ts", run_begin},
                      {"dur", RoundUs(run_end - run_begin)},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"run", number}, {"steps", run.stats.node_times.size()}}}});
    for (const NodeTime& t : run.stats.node_times) {
      const double ms = std::isfinite(t.ms) && t.ms > 0 ? t.ms : 0;
      const double begin = std::clamp(RoundUs(t.start_us - origin), run_begin, run_end);
      const double end = std::clamp(RoundUs(t.start_us + ms * 1000.0 - origin), begin, run_end);
      events.push_back({{"name", t.node.empty() ? t.op : t.node},
                        {"cat", t.op == "copy" ? "copy" : "node"},
                        {"ph", "X"},
                        {"ts", begin},
                        {"dur", RoundUs(end - begin)},
                        {"pid", 1},
                        {"tid", 1},
                        {"args",
                         {{"op", t.op},
                          {"node", t.node},
                          {"backend", t.backend},
                          {"graph", t.graph},
                          {"run", number},
                          {"inputs", StepValuesJson(t.inputs)},
                          {"outputs", StepValuesJson(t.outputs)},
                          {"input_bytes", t.input_bytes},
                          {"output_bytes", t.output_bytes}}}});
    }
  }
  Json trace = {{"traceEvents", std::move(events)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"generator", "ferry run --profile"}, {"process", process_name}, {"runs", runs.size()}}}};
  if (!model.empty()) trace["otherData"]["model"] = model;
  // Model strings are arbitrary bytes: invalid UTF-8 becomes U+FFFD rather than an exception.
  return trace.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void WriteProfileTrace(const std::vector<ProfiledRun>& runs, const std::string& process_name, const std::string& path,
                       const std::string& model) {
  const std::string text = ProfileTraceJson(runs, process_name, model);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("--profile: cannot open '" + path + "' for writing");
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out << "\n";
  out.close();
  if (!out) throw InvalidArgumentError("--profile: could not write '" + path + "'");
}

namespace {

// The trace's document, checked to hold an event list: a bare array, or an object's "traceEvents" (Events()).
struct TraceDoc {
  Json doc;
  const Json& Events() const { return doc.is_array() ? doc : doc.at("traceEvents"); }
};

TraceDoc ReadTrace(const std::string& path) {
  // Only a regular file is read, and anything else is refused without blocking (core/regular_file.h).
  const RegularFile file = RegularFile::Open(path);
  if (!file.ok()) Bad(path, "cannot open the file: it " + file.error());
  std::string text(static_cast<size_t>(file.size()), '\0');
  if (const std::string err = file.ReadAt(0, text.data(), text.size()); !err.empty()) Bad(path, "read error: " + err);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) Bad(path, "the file is empty");
  if (NestingDepth(text) > 64) Bad(path, "JSON nested deeper than 64 levels (not a trace)");
  TraceDoc t;
  Json& doc = t.doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    Bad(path, std::string("not valid JSON: ") + e.what());
  }
  // The Trace Event Format allows a bare array of events too.
  if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end()) {
      Bad(path, "no \"traceEvents\" key (not a Chrome trace; write one with ferry run --profile FILE)");
    }
    if (!it->is_array()) Bad(path, "\"traceEvents\" is not an array");
  } else if (!doc.is_array()) {
    Bad(path, "expected a JSON object with \"traceEvents\", got a " + std::string(doc.type_name()));
  }
  return t;
}

}  // namespace

std::string ProfileTraceModel(const std::string& path) {
  const TraceDoc t = ReadTrace(path);
  if (!t.doc.is_object()) return "";
  const auto other = t.doc.find("otherData");
  if (other == t.doc.end() || !other->is_object()) return "";
  const auto model = other->find("model");
  return model != other->end() && model->is_string() ? model->get<std::string>() : "";
}

std::vector<RunStats> LoadProfileTrace(const std::string& path) {
  const TraceDoc t = ReadTrace(path);
  const Json* events = &t.Events();

  std::map<int64_t, RunStats> by_run;
  for (size_t i = 0; i < events->size(); ++i) {
    const Json& e = (*events)[i];
    const std::string where = "event " + std::to_string(i);
    if (!e.is_object()) Bad(path, where + " is not an object");
    if (StringField(e, "ph") != "X") continue;
    auto args = e.find("args");
    if (args == e.end() || !args->is_object() || !args->contains("node")) continue;  // not a Ferry step
    if (!(*args)["node"].is_string()) Bad(path, where + ": args.node is not a string");
    const double ts = NumberField(e, "ts"), dur = NumberField(e, "dur");
    if (std::isnan(ts)) Bad(path, where + " (node '" + (*args)["node"].get<std::string>() + "'): no numeric \"ts\"");
    if (std::isnan(dur)) Bad(path, where + " (node '" + (*args)["node"].get<std::string>() + "'): no numeric \"dur\"");
    if (dur < 0) Bad(path, where + " (node '" + (*args)["node"].get<std::string>() + "'): negative \"dur\"");
    int64_t run = 1;
    if (auto r = args->find("run"); r != args->end()) {
      if (!r->is_number_integer()) Bad(path, where + ": args.run is not an integer");
      run = r->get<int64_t>();
    }
    NodeTime t;
    t.node = (*args)["node"].get<std::string>();
    t.op = StringField(*args, "op");
    t.graph = StringField(*args, "graph");
    if (t.graph.empty()) t.graph = "main";
    t.backend = StringField(*args, "backend");
    t.ms = dur / 1000.0;
    t.start_us = ts;
    if (auto outs = args->find("outputs"); outs != args->end() && outs->is_array()) {
      for (const Json& o : *outs) {
        StepValue v;
        if (o.is_object()) v.name = StringField(o, "name");
        else if (o.is_string()) v.name = o.get<std::string>();
        t.outputs.push_back(std::move(v));
      }
    }
    by_run[run].node_times.push_back(std::move(t));
  }
  if (by_run.empty()) {
    Bad(path, "no node events (complete events with args.node, as ferry run --profile FILE writes)");
  }
  std::vector<RunStats> runs;
  for (auto& [n, stats] : by_run) {
    std::stable_sort(stats.node_times.begin(), stats.node_times.end(),
                     [](const NodeTime& a, const NodeTime& b) { return a.start_us < b.start_us; });
    runs.push_back(std::move(stats));
  }
  return runs;
}

}  // namespace ferry::tools
