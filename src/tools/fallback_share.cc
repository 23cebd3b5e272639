#include "tools/fallback_share.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

namespace ferry::tools {
namespace {

std::string Pct(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

std::string Flops(double f) {
  char buf[32];
  if (f >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.1f GFLOPs", f / 1e9);
  } else if (f >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.1f MFLOPs", f / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f FLOPs", f);
  }
  return buf;
}

std::string QualifiedOp(const NodePlacementInfo& n) { return n.domain.empty() ? n.op : n.domain + "::" + n.op; }

// The ops that take the fallback, the costliest first: "Resize 40.1%, HardSigmoid 9.8%" when timed, else
// "Resize x3, HardSigmoid x2". At most `limit`, then "+N more".
std::string OpList(const FallbackShare& s, size_t limit) {
  std::string out;
  for (size_t i = 0; i < s.ops.size() && i < limit; ++i) {
    const FallbackOp& o = s.ops[i];
    out += (i ? ", " : "") + o.op + " " +
           (s.timed && s.ms > 0 ? Pct(o.ms / s.ms) : "x" + std::to_string(o.nodes));
  }
  if (s.ops.size() > limit) out += ", +" + std::to_string(s.ops.size() - limit) + " more";
  return out;
}

std::string Targets(const FallbackShare& s) {
  std::string out;
  for (size_t i = 0; i < s.to.size(); ++i) out += (i ? "," : "") + s.to[i];
  return out.empty() ? std::string("later backends") : out;
}

}  // namespace

FallbackShare MeasureFallbackShare(const PlacementReport& placement, const std::vector<NodeTime>* times) {
  FallbackShare s;
  if (!placement.backends.empty()) s.first_backend = placement.backends.front();
  std::map<std::string, FallbackOp> ops;
  // A node on a later backend that placement calls native (a plugin's own custom op, on its plugin) is no
  // fallback: that backend is where the op lives.
  const auto off_first = [&](const NodePlacementInfo& n) { return n.backend != s.first_backend && n.kind != "native"; };
  std::set<std::string> off_first_nodes;  // of the main graph, for the node times
  for (const NodePlacementInfo& n : placement.nodes) {
    ++s.nodes;
    s.flops += n.flops;
    if (!off_first(n)) continue;
    if (n.graph == "main") off_first_nodes.insert(n.name);
    ++s.fallback_nodes;
    s.fallback_flops += n.flops;
    if (std::find(s.to.begin(), s.to.end(), n.backend) == s.to.end()) s.to.push_back(n.backend);
    FallbackOp& o = ops[QualifiedOp(n)];
    o.op = QualifiedOp(n);
    ++o.nodes;
  }
  if (times) {
    s.timed = true;
    for (const NodeTime& t : *times) {
      if (t.graph != "main") continue;  // inside an If/Loop/Scan step, whose time already holds it
      s.ms += t.ms;
      if (!off_first_nodes.count(t.node)) continue;  // on the first backend, native on a plugin, or a copy
      s.fallback_ms += t.ms;
      FallbackOp& o = ops[t.op];
      if (o.op.empty()) o.op = t.op;  // a node the placement lists under another name (never, but stay whole)
      o.ms += t.ms;
    }
  }
  for (auto& [name, o] : ops) s.ops.push_back(o);
  std::stable_sort(s.ops.begin(), s.ops.end(), [](const FallbackOp& a, const FallbackOp& b) {
    return a.ms != b.ms ? a.ms > b.ms : a.nodes > b.nodes;
  });
  return s;
}

std::string FormatFallbackShare(const FallbackShare& s) {
  std::string out = "fallback to " + Targets(s) + ": " + std::to_string(s.fallback_nodes) + " of " +
                    std::to_string(s.nodes) + " nodes (" + Pct(s.node_share()) + ")";
  out += s.flops > 0 ? ", " + Pct(s.flop_share()) + " of " + Flops(s.flops) : std::string(", FLOPs unknown");
  if (s.timed) out += ", " + Pct(s.time_share()) + " of the run time";
  if (!s.ops.empty()) out += " (" + OpList(s, 6) + ")";
  return out;
}

std::string FallbackWarning(const FallbackShare& s) {
  if (s.fallback_nodes == 0) return "";
  std::string what;
  double share = 0;
  if (s.timed && s.ms > 0) {
    share = s.time_share();
    what = "of the run time";
  } else if (s.flops > 0) {
    share = s.flop_share();
    what = "of the estimated FLOPs";
  } else {
    share = s.node_share();
    what = "of the nodes";
  }
  if (share <= kFallbackWarnShare) return "";
  return Pct(share) + " " + what + " falls to " + Targets(s) + " (" + OpList(s, 6) + "), which is written to be " +
         "correct, not fast (`ferry check MODEL` says why each node is not on " + s.first_backend + ")";
}

std::string FallbackShareJson(const FallbackShare& s) {
  nlohmann::ordered_json j;
  j["first_backend"] = s.first_backend;
  j["to"] = s.to;
  j["nodes"] = s.nodes;
  j["fallback_nodes"] = s.fallback_nodes;
  j["node_share"] = s.node_share();
  j["flops"] = s.flops;
  j["fallback_flops"] = s.fallback_flops;
  j["flop_share"] = s.flop_share();
  j["timed"] = s.timed;
  j["ms"] = s.ms;
  j["fallback_ms"] = s.fallback_ms;
  j["time_share"] = s.time_share();
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const FallbackOp& o : s.ops) ops.push_back({{"op", o.op}, {"nodes", o.nodes}, {"ms", o.ms}});
  j["ops"] = ops;
  j["warning"] = FallbackWarning(s);
  return j.dump();
}

}  // namespace ferry::tools
