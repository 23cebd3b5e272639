#include "tools/compare_format.h"

#include <fmt/format.h>

#include <algorithm>

namespace ferry::tools {
namespace {

std::string Num(double v) { return fmt::format("{:.3g}", v); }

std::string Coord(const std::vector<int64_t>& c) {
  std::string s = "[";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + "]";
}

std::string Worst(const ErrorStats& s) {
  if (s.worst_index < 0) return "-";
  return Coord(s.worst_coord) + " " + fmt::format("{:.9g} vs {:.9g}", s.worst_a, s.worst_b);
}

// `label` cut to `width` characters in the middle: the start of an exported node name says where in the model
// it is ("/features/features.1/..."), the end what it is ("...avgpool/GlobalAveragePool (GlobalAveragePool)").
std::string Fit(const std::string& label, size_t width) {
  if (label.size() <= width || width < 8) return label;
  const size_t head = (width - 3) / 2, tail = width - 3 - head;
  return label.substr(0, head) + "..." + label.substr(label.size() - tail);
}

std::string Counts(int64_t a, int64_t b) { return std::to_string(a) + "/" + std::to_string(b); }

std::string Result(const ErrorStats& s) {
  if (!s.problem.empty()) return "FAIL (" + s.problem + ")";
  if (s.pass()) return "ok";
  return fmt::format("FAIL ({} of {})", s.mismatched, s.elements);
}

// One table row of error figures, after a `label` column of `width`.
std::string StatsRow(const std::string& label, size_t width, const ErrorStats& s) {
  if (!s.problem.empty()) return fmt::format("  {:<{}}  {}\n", label, width, Result(s));
  return fmt::format("  {:<{}}  {:>9}  {:>9}  {:>9}  {:>9}  {:>7}  {:>7}  {}  worst {}\n", label, width,
                     Num(s.max_abs), Num(s.max_rel), Num(s.mean_abs), fmt::format("{:.6f}", s.cosine),
                     Counts(s.nan_a, s.nan_b), Counts(s.inf_a, s.inf_b), Result(s), Worst(s));
}

std::string StatsHeader(const std::string& label, size_t width) {
  return fmt::format("  {:<{}}  {:>9}  {:>9}  {:>9}  {:>9}  {:>7}  {:>7}  result\n", label, width, "max abs",
                     "max rel", "mean abs", "cosine", "nan A/B", "inf A/B");
}

}  // namespace

std::string ToleranceText(const CompareTolerance& t) {
  return "|a-b| <= " + Num(t.atol) + " + " + Num(t.rtol) + "*|b|";
}

nlohmann::json StatsJson(const ErrorStats& s) {
  nlohmann::json j;
  if (!s.problem.empty()) j["problem"] = s.problem;
  j["pass"] = s.pass();
  j["elements"] = s.elements;
  j["mismatched"] = s.mismatched;
  j["max_abs"] = s.max_abs;
  j["max_rel"] = s.max_rel;
  j["mean_abs"] = s.mean_abs;
  j["cosine"] = s.cosine;
  if (s.worst_index >= 0) {
    j["worst"] = {{"index", s.worst_index}, {"coord", s.worst_coord}, {"a", s.worst_a}, {"b", s.worst_b}};
  }
  j["nan"] = {{"a", s.nan_a}, {"b", s.nan_b}};
  j["inf"] = {{"a", s.inf_a}, {"b", s.inf_b}};
  return j;
}

nlohmann::json OutputReportJson(const OutputReport& r) {
  nlohmann::json j;
  j["pass"] = r.pass();
  j["trials"] = r.trials;
  if (r.first_failed_trial >= 0) j["first_failed_trial"] = r.first_failed_trial;
  j["outputs"] = nlohmann::json::array();
  for (const auto& o : r.outputs) {
    nlohmann::json x = {{"name", o.name}, {"compared", o.compared()}, {"pass", o.pass()}};
    x["tolerance"] = {{"atol", o.tolerance.atol}, {"rtol", o.tolerance.rtol}};
    if (o.compared()) {
      x["stats"] = StatsJson(o.stats);
      x["worst_trial"] = o.worst_trial;
      x["failed_trials"] = o.failed_trials;
    } else {
      x["note"] = o.note;
    }
    j["outputs"].push_back(x);
  }
  return j;
}

std::string FormatOutputReport(const OutputReport& r) {
  size_t width = 6;
  for (const auto& o : r.outputs) width = std::max(width, o.name.size());
  std::string out = StatsHeader("output", width);
  int failed = 0, compared = 0;
  for (const auto& o : r.outputs) {
    if (!o.compared()) {
      out += fmt::format("  {:<{}}  not compared: {}\n", o.name, width, o.note);
      continue;
    }
    ++compared;
    failed += !o.pass();
    out += StatsRow(o.name, width, o.stats);
    if (r.trials > 1 && !o.pass()) {
      out += fmt::format("  {:<{}}  worst in trial {}; {} of {} trials fail\n", "", width, o.worst_trial,
                         o.failed_trials, r.trials);
    }
  }
  if (failed) {
    out += fmt::format("FAIL: {} of {} output{} beyond tolerance", failed, compared, compared == 1 ? "" : "s");
    if (r.trials > 1) out += fmt::format(" (first in trial {})", r.first_failed_trial);
    out += "\n";
  } else {
    out += fmt::format("PASS: {} output{} within tolerance{}\n", compared, compared == 1 ? "" : "s",
                       r.trials > 1 ? fmt::format(" in all {} trials", r.trials) : "");
  }
  return out;
}

nlohmann::json LayerwiseJson(const LayerwiseReport& r) {
  nlohmann::json j;
  j["compared"] = r.compared;
  j["failed"] = r.failed;
  j["not_compared"] = r.not_compared;
  j["through_twin"] = r.through_twin;
  j["values"] = nlohmann::json::array();
  for (const auto& v : r.values) {
    nlohmann::json x = {{"value", v.value}, {"node", v.node}, {"op", v.op}, {"order", v.order},
                        {"compared", v.compared}};
    if (v.compared) x["stats"] = StatsJson(v.stats);
    if (!v.note.empty()) x["note"] = v.note;
    if (!v.step_a.empty()) x["step_a"] = v.step_a;
    if (!v.step_b.empty()) x["step_b"] = v.step_b;
    if (!v.twin_a.empty()) x["twin_a"] = v.twin_a;
    if (!v.twin_b.empty()) x["twin_b"] = v.twin_b;
    j["values"].push_back(x);
  }
  if (r.first) {
    const auto& d = *r.first;
    nlohmann::json f = {{"node", d.node}, {"op", d.op}, {"value", r.values[d.index].value},
                        {"inherited", d.inherited}, {"uncertain", d.uncertain},
                        {"stats", StatsJson(r.values[d.index].stats)}};
    if (!r.values[d.index].step_a.empty()) f["step_a"] = r.values[d.index].step_a;
    if (!r.values[d.index].step_b.empty()) f["step_b"] = r.values[d.index].step_b;
    if (!r.values[d.index].twin_a.empty()) f["twin_a"] = r.values[d.index].twin_a;
    if (!r.values[d.index].twin_b.empty()) f["twin_b"] = r.values[d.index].twin_b;
    f["inputs"] = nlohmann::json::array();
    for (const auto& in : d.inputs) {
      nlohmann::json x = {{"value", in.value}, {"kind", in.kind}};
      if (in.comparison) {
        const ValueComparison& c = r.values[*in.comparison];
        x["compared"] = c.compared;
        if (c.compared) x["stats"] = StatsJson(c.stats);
        if (!c.note.empty()) x["note"] = c.note;
      }
      f["inputs"].push_back(x);
    }
    j["first_divergence"] = f;
  } else {
    j["first_divergence"] = nullptr;
  }
  return j;
}

// "through its blocked twin on A" for a value a side computed only in a blocked layout; "" otherwise.
std::string TwinText(const ValueComparison& v) {
  if (v.twin_a.empty() && v.twin_b.empty()) return "";
  const char* sides = v.twin_b.empty() ? "A" : v.twin_a.empty() ? "B" : "A and B";
  return fmt::format("through its blocked twin on {}", sides);
}

std::string FormatLayerwise(const LayerwiseReport& r) {
  std::string out = fmt::format("layerwise: {} values compared{}, {} beyond tolerance, {} not compared (fused or "
                                "not computed on a side)\n",
                                r.compared,
                                r.through_twin ? fmt::format(" ({} through a blocked-layout twin mapped back to the "
                                                             "ONNX layout, marked [twin])",
                                                             r.through_twin)
                                               : "",
                                r.failed, r.not_compared);
  if (!r.first) return out + "no divergence: every value both sides computed is within tolerance\n";
  const Divergence& d = *r.first;
  const ValueComparison& v = r.values[d.index];
  out += fmt::format("first divergence: node '{}' ({}), output '{}'\n", d.node, d.op, v.value);
  out += fmt::format("  error: max abs {}, max rel {}, {} of {} elements beyond {}\n", Num(v.stats.max_abs),
                     Num(v.stats.max_rel), v.stats.mismatched, v.stats.elements, ToleranceText(v.tolerance));
  if (!v.step_a.empty()) out += "  computed on A by " + v.step_a + (v.twin_a.empty() ? "" : ", as " + v.twin_a) + "\n";
  if (!v.step_b.empty()) out += "  computed on B by " + v.step_b + (v.twin_b.empty() ? "" : ", as " + v.twin_b) + "\n";
  for (const auto& in : d.inputs) {
    std::string what;
    if (in.kind != "value") {
      what = in.kind + (in.kind == "graph input" ? " (the same on both sides)" : " (the same weights)");
    } else {
      const ValueComparison& c = r.values[*in.comparison];
      what = c.compared ? fmt::format("max abs {}, {}", Num(c.stats.max_abs), c.stats.pass() ? "within tolerance"
                                                                                               : "beyond tolerance")
                        : "not compared: " + c.note;
      if (c.compared && !TwinText(c).empty()) what += " (" + TwinText(c) + ")";
    }
    out += fmt::format("  input '{}': {}\n", in.value, what);
  }
  if (d.inherited) {
    out += "  => inherited: an input already differs beyond tolerance\n";
  } else if (d.uncertain) {
    out += "  => introduced here or in the nodes fused with it (an input was not compared)\n";
  } else {
    out += "  => introduced here: every input is within tolerance\n";
  }
  size_t width = 5;
  const std::vector<size_t> rows = r.TableRows();
  for (size_t i : rows) width = std::max(width, r.values[i].node.size() + r.values[i].op.size() + 3);
  width = std::min<size_t>(width, 72);
  out += "error table (topological order; --json lists every value):\n";
  out += StatsHeader("node (op)", width);
  size_t last = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    const ValueComparison& c = r.values[rows[k]];
    if (k > 0 && rows[k] > last + 1) out += "  ...\n";
    last = rows[k];
    std::string row = StatsRow(Fit(c.node + " (" + c.op + ")", width), width, c.stats);
    if (!c.twin_a.empty() || !c.twin_b.empty()) {
      row.insert(row.size() - 1, c.twin_b.empty() ? "  [twin A]" : c.twin_a.empty() ? "  [twin B]" : "  [twin A,B]");
    }
    out += row;
  }
  return out;
}

nlohmann::json BisectJson(const BisectResult& r) {
  nlohmann::json j = {{"reproduced", r.reproduced}, {"value", r.value}, {"nodes", r.nodes}};
  if (r.reproduced) {
    j["stats"] = StatsJson(r.stats);
    j["model"] = r.model_path;
    j["data"] = r.data_dir;
  }
  j["attempts"] = nlohmann::json::array();
  for (const auto& a : r.attempts) {
    j["attempts"].push_back({{"nodes", a.nodes}, {"reproduced", a.reproduced}, {"detail", a.detail}});
  }
  return j;
}

std::string FormatBisect(const BisectResult& r, const CompareConfig& a,
                         const CompareConfig& b) {
  std::string out = "bisect:\n";
  for (const auto& at : r.attempts) out += fmt::format("  {} node{}: {}\n", at.nodes, at.nodes == 1 ? "" : "s", at.detail);
  if (!r.reproduced) {
    return out + "  no subgraph around the divergence reproduces it when both sides get the same inputs: the error "
                 "accumulates over earlier nodes (each within tolerance), or needs more of the model\n";
  }
  std::string nodes;
  for (const auto& n : r.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
  out += fmt::format("  smallest reproducer: {} node{} ({}) -> '{}'\n", r.nodes.size(), r.nodes.size() == 1 ? "" : "s",
                     nodes, r.value);
  out += fmt::format("  wrote {} and its inputs in {}\n", r.model_path, r.data_dir);
  out += fmt::format("  reproduce: ferry compare {} --inputs {} --a {} --b {} --atol {} --rtol {}\n", r.model_path,
                     r.data_dir, a.text, b.text, r.tolerance.atol, r.tolerance.rtol);
  return out;
}

nlohmann::json OpsJson(const OpsReport& r) {
  nlohmann::json j = {{"ops", r.ops}, {"absent", r.absent}, {"flagged", r.flagged()}, {"unchecked", r.unchecked()}};
  j["nodes"] = nlohmann::json::array();
  for (const auto& c : r.checks) {
    nlohmann::json x = {{"node", c.node}, {"op", c.op}, {"inputs", c.inputs}, {"pass", c.pass()}};
    if (c.checked()) {
      x["backend_a"] = c.backend_a;
      x["backend_b"] = c.backend_b;
      x["trials"] = c.trials;
      x["worst_output"] = c.worst_output;
      x["worst_trial"] = c.worst_trial;
      x["stats"] = StatsJson(c.stats);
    } else {
      x["error"] = c.error;
    }
    j["nodes"].push_back(x);
  }
  return j;
}

std::string FormatOps(const OpsReport& r) {
  size_t width = 4;
  for (const auto& c : r.checks) width = std::max(width, c.node.size() + c.op.size() + 3);
  width = std::min<size_t>(width, 72);
  std::string out = fmt::format("  {:<{}}  {:<9}", "node (op)", width, "A / B");
  out += StatsHeader("", 0).substr(4);
  for (const auto& c : r.checks) {
    const std::string label = Fit(c.node + " (" + c.op + ")", width);
    if (!c.checked()) {
      out += fmt::format("  {:<{}}  not checked: {}\n", label, width, c.error);
      continue;
    }
    out += fmt::format("  {:<{}}  {:<9}", label, width, c.backend_a + "/" + c.backend_b);
    out += StatsRow("", 0, c.stats).substr(4);
  }
  if (!r.absent.empty()) {
    std::string absent;
    for (const auto& op : r.absent) absent += (absent.empty() ? "" : ", ") + op;
    out += "not in the model: " + absent + "\n";
  }
  const int checked = static_cast<int>(r.checks.size()) - r.unchecked();
  out += r.flagged() ? fmt::format("FAIL: {} of {} nodes beyond tolerance\n", r.flagged(), checked)
                     : fmt::format("PASS: {} nodes within tolerance\n", checked);
  return out;
}

}  // namespace ferry::tools
