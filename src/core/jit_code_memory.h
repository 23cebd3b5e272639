// The resident machine code the process generated at run time (oneDNN's JIT kernels), measured from the pages
// the kernel reports: the memory prediction counts what building a session's kernels generated.
#pragma once

#include <cstdint>

namespace ferry {

// Resident bytes of the process's anonymous executable mappings (/proc/self/maps, mincore): where JIT compilers,
// oneDNN's among them, put the code they generate. Libraries' code is file-backed and not counted. -1 when it
// cannot be measured (no /proc).
int64_t ResidentJitCodeBytes();

// Measures how much JIT code the process gained from construction to Bytes(): the code a phase generated (a
// session's kernels building their oneDNN primitives). A process-wide figure: code other threads generated
// meanwhile counts too, and code a phase reused (oneDNN's primitive cache) does not. 0 when it cannot be measured,
// never negative.
class JitCodeGrowth {
 public:
  JitCodeGrowth() : before_(ResidentJitCodeBytes()) {}
  int64_t Bytes() const;

 private:
  int64_t before_;
};

}  // namespace ferry
