// The profiler behind `ferry run --profile FILE` and `--profile-summary`: the node times of several runs
// (RunStats::node_times) written as a Chrome trace (the Trace Event Format that chrome://tracing and
// ui.perfetto.dev load), read back from one (`ferry check --html --profile`), and reduced to a summary: the
// median per node over the runs, summed per op type.
//
// The trace is one JSON object:
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {"generator": "ferry run --profile", ...}}
// with, on pid 1 / tid 1: two metadata events ("ph": "M", process_name and thread_name "ferry MODEL"); per
// profiled run one complete event ("ph": "X", "cat": "run", "name": "run N") spanning the run; and inside it one
// complete event per executed step ("cat": "node" or "copy", "name": the node's name) whose args are
//   op (with its domain: "ai.ferry::BlockedConv"), node, backend ("cpu", "ref", a plugin's; "copy" for a copy),
//   graph ("main" or the subgraph's name), run (1-based), inputs and outputs (each {name, dtype, shape, bytes}),
//   input_bytes, output_bytes.
// ts and dur are microseconds (ts from the start of the first profiled run). A subgraph's steps lie inside the
// step of their If/Loop/Scan node, whose time includes them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry::tools {

struct ProfileRow {
  std::string name;  // node name, or op type in by_op
  std::string op;
  int count = 0;     // nodes of this op (by_op); times the node ran per run (a node: 1, more in a loop body)
  double ms = 0;     // median over runs of the node's time per run (a node), or the sum of its nodes' (an op)
  double percent = 0;  // of total_ms
  std::string backend;  // the node's backend ("copy" for a copy step); by_op: its nodes' backends, "cpu,ref"
  std::string graph;    // nodes: "main" or the subgraph's name
  std::vector<std::string> outputs;  // nodes: the values it wrote (what `check --html --profile` matches)
};

struct Profile {
  int runs = 0;
  double total_ms = 0;            // sum of every node's median (a subgraph's steps also count in their node)
  size_t steps = 0;               // steps per run (every execution of a loop body's node counts)
  std::vector<ProfileRow> by_op;  // descending ms
  std::vector<ProfileRow> nodes;  // descending ms; one row per (graph, node name, op)
};

// `runs`: the RunStats of each profiled run of one session. Steps are matched across runs by (graph, node, op),
// so runs may differ (a loop that iterates more in one run).
Profile SummarizeProfile(const std::vector<RunStats>& runs);

// A text table: the ops, then the `top` slowest nodes (0: every node).
std::string FormatProfile(const Profile& p, size_t top = 10);
// The summary as JSON text: {"runs", "total_ms", "steps", "by_op": [...], "nodes": [...]}, each row
// {"name", "op", "backend", "count", "ms", "percent"} (nodes also "graph").
std::string FormatProfileJson(const Profile& p);

// One profiled run and when it ran, in NodeTime::start_us's clock (steady_clock µs).
struct ProfiledRun {
  RunStats stats;
  double start_us = 0;  // read before the run
  double end_us = 0;    // read after it
};

// The trace of `runs` (see above); `process_name` names the process and thread ("ferry MODEL"). `model`, when
// given, is the measured model's FileFingerprint (core/file_fingerprint.h), kept as otherData.model so that a
// reader can tell a trace of another model (ferry check --html --profile).
std::string ProfileTraceJson(const std::vector<ProfiledRun>& runs, const std::string& process_name,
                             const std::string& model = "");
// Writes it to `path`; throws InvalidArgumentError naming the path when it cannot be written.
void WriteProfileTrace(const std::vector<ProfiledRun>& runs, const std::string& process_name, const std::string& path,
                       const std::string& model = "");

// Reads a trace written by WriteProfileTrace back into its runs: every step event (one with args.node) becomes a
// NodeTime (node, op, graph, backend, ms, start_us, output names) of run args.run. Other events are ignored, so
// a trace merged with other tools' events still loads. Throws InvalidArgumentError naming the file and what is
// wrong (missing, not JSON, no traceEvents, a step event without a numeric ts/dur or with a negative dur, no
// step events at all); the file is untrusted: nothing in it can crash the reader.
std::vector<RunStats> LoadProfileTrace(const std::string& path);

// The model fingerprint a trace records (otherData.model), "" when it records none (a trace of another tool, or
// written without one). Throws as LoadProfileTrace does for a file that is no trace.
std::string ProfileTraceModel(const std::string& path);

}  // namespace ferry::tools
