// What the fuzz targets (tests/fuzz/*_fuzzer.cc) share: a scratch directory holding the files that mutated
// external-data locations and input paths can name, and the rule for what counts as a finding.
//
// A target's contract: bad input ends in a ferry::Error (or the server's BadRequest / ServiceError, which become
// a 4xx/5xx reply) and leaves the process usable. Everything else is a finding that libFuzzer reports: a crash, a
// sanitizer report, any other exception escaping (uncaught, it aborts), a hang (-timeout), or an allocation past
// -malloc_limit_mb / -rss_limit_mb.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "ferry/error.h"

namespace ferry::fuzz {

// The per-process scratch directory (made on first use under $TMPDIR or /tmp, removed at exit), holding:
//   weights.bin      64 KiB, byte i = i % 251: external data an offset/length mutation can index anywhere into
//   sub/weights.bin  the same, one directory down
//   fifo             a FIFO: opening it for reading blocks, so Ferry must refuse it before it opens it
//   outside          a symlink to /etc/passwd (leaves the directory)
//   zero             a symlink to /dev/zero (not a regular file)
//   dir/             a directory
const std::string& ScratchDir();

// Writes `bytes` to ScratchDir()/name (replacing it) and returns the path.
std::string WriteScratchFile(const std::string& name, std::span<const uint8_t> bytes);

// Runs `f`, swallowing a ferry::Error: the expected end of bad input. Any other exception escapes.
template <class F>
void ExpectFerryErrors(F&& f) {
  try {
    f();
  } catch (const ferry::Error&) {
  }
}

// Reports a broken invariant (a round trip that does not reproduce its input, a request that got no reply):
// prints `what` and aborts, which libFuzzer records as a crash with the input that caused it.
[[noreturn]] void Fail(const std::string& what);

}  // namespace ferry::fuzz
