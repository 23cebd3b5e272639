// Flags every verb that creates a session and feeds it generated inputs shares (`ferry run`, `ferry bench`):
// backends, optimization level, ISA, passes, placement; and the parsing of --shape / --range into an InputSpec.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "ferry/session.h"
#include "placement_flags.h"
#include "tools/run_inputs.h"

namespace ferry::cli {

struct SessionFlags {
  std::string backends = "cpu,ref";
  std::string isa;
  int level = 3;
  std::vector<std::string> disabled_passes;
  bool legalize = false;
  bool no_memory_arena = false;
  bool deterministic = false;
  std::string adapt_threads = "auto";  // --adapt-threads auto|on|off (SessionOptions::adapt_threads)
  PlacementFlags placement;

  // The SessionOptions these flags ask for (threads left at 0: each verb sets its own). Throws
  // InvalidArgumentError for a malformed --pin or --isa (or FERRY_ISA), or an unknown --disable-pass.
  SessionOptions Options() const;
};

// --backends, -O/--level, --isa, --disable-pass, --legalize, --no-memory-arena, --deterministic, --adapt-threads,
// --plugin, --pin, --no-fallback.
void AddSessionFlags(CLI::App& cmd, SessionFlags& flags);

// Loads each plugin (a bad one throws InvalidArgumentError naming it, which a verb reports as an error, exit 1, as
// it does a bad model), so that CheckBackendNames knows the plugins' backends.
void LoadPlugins(const std::vector<std::string>& plugins);

// Throws InvalidArgumentError (a usage error, exit 2) when `backends` is empty or names, or a pin names, a
// backend neither built in nor loaded from a plugin, naming the flag and the backends there are. `where` prefixes
// the message ("--a 'cpu,ref': "); empty: "--backends: " and "--pin P=B: ".
void CheckBackendNames(const std::vector<std::string>& backends,
                       const std::vector<std::pair<std::string, std::string>>& pins, const std::string& where = "");

// Caps oneDNN's instruction set at --isa's for the rest of the process (kernels/cpu/dnnl_isa.h), so that the
// emulation covers oneDNN's kernels too; nothing without --isa. Call before the verb's first session.
void CapOneDnnIsa(const std::string& isa);

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> SplitList(const std::string& s, char sep = ',');

// Parses --shape NAME=DIMS and --range NAME=LO,HI values into `spec.shapes` and `spec.ranges`; throws
// InvalidArgumentError naming the flag and the input for a malformed value or a NAME given twice in one flag.
void ParseInputFlags(const std::vector<std::string>& shapes, const std::vector<std::string>& ranges,
                     tools::InputSpec& spec);

// Parses --input NAME=FILE values into `spec.files`; throws InvalidArgumentError for a malformed value or a NAME
// given twice (which file would feed it is not for the command to guess).
void ParseInputFiles(const std::vector<std::string>& inputs, tools::InputSpec& spec);

// The check of an intra-op thread count flag (`--threads N`): an integer from 0 (all cores) to kMaxThreads
// (ferry/limits.h); CLI11 reports anything else as a usage error naming the flag.
CLI::Validator ThreadCount();

}  // namespace ferry::cli
