// The profile overlay of `ferry check --html --profile TRACE`: which node of a check report (the model as
// written) each step of a profile (the optimized graph a session ran) belongs to.
//
// Steps are matched to nodes by name, a main-graph node to main-graph steps and a subgraph's to subgraph steps:
// a fused node keeps the name of the node it was anchored on (passes/fusion_util.h), and blocked_layout keeps
// the convolution's name. A node without a step is "fused into" the step that writes its output (an absorbed
// activation, a folded BatchNormalization) or the output of a node it feeds that also has no step (the Sigmoid
// of a SiLU), looking through at most 16 such nodes; else it has no time recorded (folded, removed or not run).
#pragma once

#include <string>
#include <vector>

#include "tools/check.h"
#include "tools/profile.h"

namespace ferry::tools {

// What the profile says about one node of the report.
struct NodeTiming {
  enum class Kind { kNone, kTimed, kFused };
  Kind kind = Kind::kNone;
  double ms = 0, percent = 0;  // kTimed: the sum of its steps' (ProfileRow::ms, ProfileRow::percent)
  int count = 0;               // executions per run
  std::string backend;         // where it ran ("cpu", "cpu,ref")
  std::string ran_as;          // the op(s) of its steps when not the model's op ("ai.ferry::BlockedConv")
  std::string fused_into;      // kFused: the name of the step that computes it now
};

struct ProfileOverlay {
  std::vector<NodeTiming> nodes;  // one per report node
  double max_percent = 0;         // of a timed node
  double other_percent = 0;       // steps matching no node of the report (layout reorders, copies)
  int timed = 0, fused = 0, none = 0;
};

ProfileOverlay MatchProfile(const CheckReport& report, const Profile& profile);

}  // namespace ferry::tools
