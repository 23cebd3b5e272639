#include "tools/profile_overlay.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace ferry::tools {
namespace {

bool IsMain(const std::string& graph) { return graph.empty() || graph == "main"; }

std::string QualifiedOp(const NodeCheck& n) { return n.domain.empty() ? n.op : n.domain + "::" + n.op; }

}  // namespace

ProfileOverlay MatchProfile(const CheckReport& r, const Profile& p) {
  ProfileOverlay o;
  o.nodes.resize(r.nodes.size());
  std::map<std::string_view, std::vector<const ProfileRow*>> by_name;
  std::map<std::string, const ProfileRow*> writer;  // value name -> the step that wrote it
  for (const ProfileRow& row : p.nodes) by_name[row.name].push_back(&row);
  // Layout reorders and copies only move a value: they are never what a node was fused into. blocked_layout has a
  // node write Y's blocked twin "Y_blocked" instead of Y: exact names first, then the twins.
  for (int pass = 0; pass < 2; ++pass) {
    for (const ProfileRow& row : p.nodes) {
      if (row.op == "copy" || row.op.ends_with("ReorderFromBlocked") || row.op.ends_with("ReorderToBlocked")) continue;
      for (const std::string& v : row.outputs) {
        static constexpr std::string_view kBlocked = "_blocked";
        if (pass == 0 && !v.empty()) writer.emplace(v, &row);
        if (pass == 1 && v.size() > kBlocked.size() && v.ends_with(kBlocked)) {
          writer.emplace(v.substr(0, v.size() - kBlocked.size()), &row);
        }
      }
    }
  }
  std::set<const ProfileRow*> used;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const NodeCheck& n = r.nodes[i];
    auto it = by_name.find(n.name);
    if (n.name.empty() || it == by_name.end()) continue;
    NodeTiming& t = o.nodes[i];
    std::set<std::string> ops, backends;
    for (const ProfileRow* row : it->second) {
      if (IsMain(row->graph) != IsMain(n.graph) || !used.insert(row).second) continue;
      t.kind = NodeTiming::Kind::kTimed;
      t.ms += row->ms;
      t.percent += row->percent;
      t.count = std::max(t.count, row->count);
      ops.insert(row->op);
      if (!row->backend.empty()) backends.insert(row->backend);
    }
    for (const std::string& b : backends) t.backend += (t.backend.empty() ? "" : ",") + b;
    if (!(ops.size() == 1 && *ops.begin() == QualifiedOp(n))) {
      for (const std::string& op : ops) t.ran_as += (t.ran_as.empty() ? "" : ", ") + op;
    }
  }
  for (const ProfileRow& row : p.nodes) {
    if (!used.count(&row)) o.other_percent += row.percent;
  }
  std::map<std::string_view, std::vector<size_t>> readers;
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    for (const std::string& in : r.nodes[i].inputs) {
      if (!in.empty()) readers[in].push_back(i);
    }
  }
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    NodeTiming& t = o.nodes[i];
    if (t.kind == NodeTiming::Kind::kTimed) {
      ++o.timed;
      o.max_percent = std::max(o.max_percent, t.percent);
      continue;
    }
    std::vector<size_t> queue = {i};
    std::set<size_t> seen = {i};
    for (size_t q = 0; q < queue.size() && q < 16 && t.fused_into.empty(); ++q) {
      for (const std::string& out : r.nodes[queue[q]].outputs) {
        if (auto w = writer.find(out); w != writer.end()) {
          t.fused_into = w->second->name.empty() ? w->second->op : w->second->name;
          break;
        }
        auto rd = readers.find(out);
        if (rd == readers.end()) continue;
        for (size_t next : rd->second) {
          if (o.nodes[next].kind != NodeTiming::Kind::kTimed && seen.insert(next).second) queue.push_back(next);
        }
      }
    }
    if (!t.fused_into.empty()) {
      t.kind = NodeTiming::Kind::kFused;
      ++o.fused;
    } else {
      ++o.none;
    }
  }
  return o;
}


}  // namespace ferry::tools
