// The problems of the `ferry check --html` page, by severity: the report's non-native nodes grouped by what is
// wrong with them (one row per op, verdict, backend, layer and reason, with a count and the list of its nodes),
// ranked so that what stops the model comes first, then the fallbacks that cost the most, and fallbacks of
// negligible cost (shape arithmetic, constants) last. Also the graph's "problems only" view control, and the
// small formatting helpers the page's parts share. Internal to the page (check_html.cc); exposed for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "tools/check.h"
#include "tools/profile_overlay.h"

namespace ferry::tools::check_html {

// ---- shared by the page's parts ------------------------------------------------------------------------------

std::string QualifiedOp(const NodeCheck& n);  // "Conv", "com.example::Mystery"
std::string LayerName(FailureLayer layer);     // "" for kNone
std::string HumanFlops(double v);              // "2.30 GFLOP"; "-" for 0 or unknown
std::string FormatPercent(double percent);     // "12.3%", "<0.1%"
std::string FormatMs(double ms);               // "0.456 ms"

// ---- severity -----------------------------------------------------------------------------------------------

// error: the node runs nowhere, so the model will not run. slow: a fallback that does a noticeable share of the
// work (or whose cost is unknown). minor: a fallback of negligible cost. info: a node --pin placed.
enum class Severity { kError, kSlow, kMinor, kInfo };
const char* SeverityName(Severity s);  // "error", "slow", "minor", "info"

// A fallback group is minor below this share of the model's estimated FLOPs (or, with a profile that timed it,
// of the run time).
constexpr double kNegligibleShare = 0.001;
// Without any FLOPs estimate for the model, a fallback that does no arithmetic is minor while each of its nodes
// writes at most this many elements (shape tensors, scalars, axes: what check loads of the initializers too).
constexpr double kSmallElements = 1024;

// What one node costs, as the report can tell without running it.
struct NodeCost {
  enum class Kind {
    kFlops,     // an arithmetic op with static shapes: `ops` is its FLOPs estimate
    kMoved,     // an op without arithmetic (Reshape, Gather, Concat...): `ops` counts the elements it writes
    kHostSide,  // Shape, Size, Constant, ConstantOfShape: no input data read, ops = 0
    kUnknown,   // arithmetic without static shapes, an op outside ai.onnx, outputs of unknown size
  };
  Kind kind = Kind::kUnknown;
  double ops = 0;
};
NodeCost CostOf(const NodeCheck& n);

// Nodes with the same op, verdict, backend, layer and reason: one row of the table.
struct ProblemGroup {
  Severity severity = Severity::kError;
  std::vector<size_t> nodes;  // indices into report.nodes, in report order
  double flops = 0;           // the members' FLOPs estimates, summed
  double ops = 0;             // flops + elements written by members without arithmetic
  int64_t unknown = 0;        // members of unknown cost
  int64_t host_side = 0;      // members of kind kHostSide
  bool timed = false;         // with a profile: some member has time of its own
  double ms = 0, time_percent = 0;  // with a profile: the members' time and share of the run time, summed
  std::string cost;           // one line for the table: "12.3% of FLOPs", "negligible: shape arithmetic"...
};

// Every non-native node of `r` in groups, ordered: error (by node count), then slow, then minor (each by time
// when the profile timed the group, else by estimated cost, groups of unknown cost last), then info.
std::vector<ProblemGroup> GroupProblems(const CheckReport& r, const ProfileOverlay* overlay);

// The "Problems" section: model-level problems, the table of GroupProblems (`<table id="problems">`, one
// `<tr data-severity=... data-count=...>` per group; a group of several nodes lists them in a <details>), and
// the warnings.
void ProblemTable(std::ostringstream& os, const CheckReport& r, const ProfileOverlay* overlay);

// The graph toolbar's view control: a "problems only" checkbox (#problems-only: hide the nodes that run natively
// or where --pin put them) and "+ neighbours" (#neighbours: keep the nodes next to a problem too), both checked
// when `default_on` (and the report has problem nodes); the page script applies them.
std::string ViewControls(const CheckReport& r, bool default_on);

}  // namespace ferry::tools::check_html
