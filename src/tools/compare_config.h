// The configurations `ferry compare` runs side by side, written as one token each:
//
//   CONFIG  := BACKENDS ( ":" OPTION )*
//   BACKENDS:= NAME ( "," NAME )*                 backends in priority order (cpu,ref; ref; a plugin's backend)
//   OPTION  := "opt=" 0..3                        graph optimization level (default 3)
//            | "threads=" N                       intra-op threads (default 0: all hardware threads)
//            | "deterministic"                    deterministic mode (needs threads=N)
//            | "isa=" EXT ( "," EXT )*            emulate a CPU with only these extensions ("none" for none)
//            | "plugin=" PATH                     load a custom-op plugin (repeatable; PATH without ':')
//            | "pin=" NODE_OR_OP "=" BACKEND      run a node, or every node of an op type, on BACKEND (repeatable)
//            | "disable-pass=" NAME               do not run this optimizer pass (repeatable)
//            | "no-fallback" | "legalize" | "no-arena"
//
// Commas separate backends only before the first ':'; after it, ':' alone separates options, so
// `cpu,ref:isa=avx2,fma:threads=1` is unambiguous. Examples: `cpu,ref` (the default side A), `ref:opt=0` (the
// default side B, the oracle), `cpu,ref:deterministic:threads=2`, `cpu,ref:pin=Conv=ref:opt=2`.
#pragma once

#include <string>
#include <vector>

#include "ferry/session.h"

namespace ferry::tools {

struct CompareConfig {
  std::string text;  // as written
  SessionOptions options;
};

inline constexpr const char* kDefaultConfigA = "cpu,ref";
inline constexpr const char* kDefaultConfigB = "ref:opt=0";

// Parses `text`; throws InvalidArgumentError naming the offending token ("--a: unknown option 'fast' in
// 'cpu:fast'"), with `flag` ("--a") first.
CompareConfig ParseCompareConfig(const std::string& text, const std::string& flag);

// The options a configuration sets, written out in full: "backends cpu,ref, opt 3, threads all".
std::string DescribeConfig(const CompareConfig& config);

}  // namespace ferry::tools
