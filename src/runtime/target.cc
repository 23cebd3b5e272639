#include "runtime/target.h"

#include <algorithm>

#include "core/isa.h"
#include "ferry/error.h"

namespace ferry::runtime {

ResolvedTarget ResolveTarget(const TargetOptions& options) {
  ResolvedTarget r;
  r.placement = ResolvePlacementOptions(options.backends, options.pins, options.plugins, options.allow_fallback);
  Target& target = r.placement.target;
  if (options.isa_exact) {
    target.isa = IsaSet::Parse(options.isa);
  } else if (!options.isa.empty()) {
    target.isa = target.isa & IsaSet::Parse(options.isa);  // --isa narrows this CPU
  }
  r.isa_narrowed = !options.isa_exact && target.isa != DetectHostIsa();

  switch (options.devices) {
    case DeviceRule::kRequire:
      // A GPU backend needs its device; its kernels are judged against that device's compute capability.
      for (const Backend* b : r.placement.backends) {
        b->RequireDevice();
        target.compute_capability = std::max(target.compute_capability, b->compute_capability());
      }
      break;
    case DeviceRule::kProbe:
      for (const Backend* b : r.placement.backends) {
        if (IsHostDevice(b->device())) continue;
        target.compute_capability = std::max(target.compute_capability, b->compute_capability());
        try {
          b->RequireDevice();
        } catch (const Error& e) {
          r.missing_devices.push_back({b, e.what()});
        }
      }
      break;
    case DeviceRule::kGiven: target.compute_capability = options.compute_capability; break;
  }

  r.legalize_backends = r.placement.backends;
  if (!options.allow_fallback && !r.placement.backends.empty()) {
    // Without fallback a node must run on the first backend (or on a plugin): legalize for those alone.
    r.legalize_backends = {r.placement.backends.front()};
    for (const Backend* b : r.placement.backends) {
      if (b->is_plugin() && b != r.legalize_backends.front()) r.legalize_backends.push_back(b);
    }
  }
  return r;
}

}  // namespace ferry::runtime
