#include "tools/profile.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ferry/error.h"

namespace ferry::tools {

Profile SummarizeProfile(const std::vector<RunStats>& runs) {
  Profile p;
  p.runs = static_cast<int>(runs.size());
  if (runs.empty()) return p;
  const size_t steps = runs.front().node_times.size();
  for (const RunStats& r : runs) {
    if (r.node_times.size() != steps) {
      throw InvalidArgumentError("profile: runs timed different step counts (" + std::to_string(steps) + " vs " +
                                 std::to_string(r.node_times.size()) + ")");
    }
  }
  std::map<std::string, size_t> op_index;
  for (size_t i = 0; i < steps; ++i) {
    std::vector<double> t;
    for (const RunStats& r : runs) t.push_back(r.node_times[i].ms);
    std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
    const double median = t[t.size() / 2];
    const NodeTime& n = runs.front().node_times[i];
    p.nodes.push_back({n.node, n.op, 1, median, 0});
    auto [it, added] = op_index.emplace(n.op, p.by_op.size());
    if (added) p.by_op.push_back({n.op, n.op, 0, 0, 0});
    p.by_op[it->second].count += 1;
    p.by_op[it->second].ms += median;
    p.total_ms += median;
  }
  for (auto* rows : {&p.by_op, &p.nodes}) {
    for (ProfileRow& r : *rows) r.percent = p.total_ms > 0 ? 100.0 * r.ms / p.total_ms : 0;
    std::stable_sort(rows->begin(), rows->end(), [](const ProfileRow& a, const ProfileRow& b) { return a.ms > b.ms; });
  }
  return p;
}

std::string FormatProfile(const Profile& p, size_t top) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "profile: median of %d runs, %.3f ms in %zu steps\n", p.runs, p.total_ms,
                p.nodes.size());
  out += line;
  out += "  op                                   nodes        ms      %\n";
  for (const ProfileRow& r : p.by_op) {
    std::snprintf(line, sizeof line, "  %-36s %5d %9.3f %6.1f\n", r.op.c_str(), r.count, r.ms, r.percent);
    out += line;
  }
  out += "  slowest nodes:\n";
  for (size_t i = 0; i < std::min(top, p.nodes.size()); ++i) {
    const ProfileRow& r = p.nodes[i];
    std::snprintf(line, sizeof line, "  %9.3f ms %5.1f%%  %s (%s)\n", r.ms, r.percent, r.name.c_str(), r.op.c_str());
    out += line;
  }
  return out;
}

}  // namespace ferry::tools
