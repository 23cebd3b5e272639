// The per-op profile of `ferry run --profile`: node times of several runs (RunStats::node_times) reduced to the
// median per node, then summed per op type.
#pragma once

#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry::tools {

struct ProfileRow {
  std::string name;  // node name, or op type in by_op
  std::string op;
  int count = 0;     // nodes of this op (by_op), 1 for a node
  double ms = 0;     // median over runs (a node) or the sum of its nodes' medians (an op)
  double percent = 0;  // of total_ms
};

struct Profile {
  int runs = 0;
  double total_ms = 0;           // sum of every step's median
  std::vector<ProfileRow> by_op;  // descending ms
  std::vector<ProfileRow> nodes;  // descending ms
};

// `runs`: the RunStats of each profiled run (same model, so the same steps in the same order). Throws
// InvalidArgumentError when the runs did not time the same steps.
Profile SummarizeProfile(const std::vector<RunStats>& runs);

// A text table: the ops, then the `top` slowest nodes.
std::string FormatProfile(const Profile& p, size_t top = 10);

}  // namespace ferry::tools
