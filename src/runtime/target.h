// Target resolution: from the names a user gives (backends, pins, plugins, --isa, --cc) to what the passes and the
// partitioner judge kernels against. Sessions, `ferry check`, `ferry optimize` and the front-end pipeline
// (runtime/pipeline.h) all resolve their target here, so the `--isa` narrowing, the GPU's compute capability and
// the backends `--legalize` rewrites for follow one rule everywhere.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backends/backend.h"
#include "runtime/placement.h"

namespace ferry::runtime {

// Where the compute capability GPU kernels are judged against comes from.
enum class DeviceRule {
  // A session: every backend must be able to run here (Backend::RequireDevice throws UnsupportedError naming the
  // device otherwise); the target is the highest compute capability among the backends' devices.
  kRequire,
  // `ferry check` without --cc: as kRequire, but a GPU backend without its device is not an error: it is listed
  // in ResolvedTarget::missing_devices and its kernels are judged against no GPU (its device's capability, 0).
  kProbe,
  // `ferry check --cc`, `ferry optimize`: exactly TargetOptions::compute_capability; no device is needed.
  kGiven,
};

struct TargetOptions {
  std::vector<std::string> backends;  // priority order; empty: no backend (`ferry optimize`'s portable mode)
  std::vector<std::pair<std::string, std::string>> pins;  // (node name or op type, backend): --pin
  std::vector<std::string> plugins;                       // shared libraries to load first: --plugin
  bool allow_fallback = true;                             // false: --no-fallback
  // "" = the host's extensions narrowed by FERRY_ISA (DefaultIsa); else a list such as "avx2,fma" (IsaSet::Parse).
  std::string isa;
  // false: `isa` narrows the host's set (--isa emulates a lesser CPU). true: the target is exactly `isa`
  // (`ferry check --target-isa`: judging for another machine than this one).
  bool isa_exact = false;
  DeviceRule devices = DeviceRule::kRequire;
  int compute_capability = 0;  // DeviceRule::kGiven: e.g. 75 for 7.5; 0 = no GPU
};

// A GPU backend whose device this machine lacks (DeviceRule::kProbe).
struct MissingDevice {
  const Backend* backend = nullptr;
  std::string problem;  // what Backend::RequireDevice said
};

struct ResolvedTarget {
  // The backends (plugins' appended), the pins, allow_fallback and the target (ISA, compute capability).
  PlacementOptions placement;
  // The backends whose support the `legalize` pass (and `ferry check`'s rewrite column) judges a node by, as a
  // session would place it: every backend; without fallback, the first one and the plugins (for their custom ops).
  std::vector<const Backend*> legalize_backends;
  // The ISA differs from this CPU's because the user narrowed it (--isa, FERRY_ISA); never with isa_exact.
  bool isa_narrowed = false;
  std::vector<MissingDevice> missing_devices;  // DeviceRule::kProbe only

  const Target& target() const { return placement.target; }
};

// Loads the plugins, finds every backend and pinned backend (InvalidArgumentError naming the available ones), parses
// `isa` (InvalidArgumentError naming an unknown extension) and finds the compute capability by `devices`.
ResolvedTarget ResolveTarget(const TargetOptions& options);

}  // namespace ferry::runtime
