// The process's peak resident set size (Linux VmHWM), for the memory figures of `ferry run` and `ferry bench`.
#pragma once

#include <cstdint>

namespace ferry {

// VmHWM from /proc/self/status, in KiB; -1 when it cannot be read (no /proc, no such line, a malformed value).
int64_t PeakRssKb();

// Resets VmHWM to the current resident set ("5" to /proc/self/clear_refs, Linux >= 4.0); false when refused.
bool ResetPeakRss();

}  // namespace ferry
