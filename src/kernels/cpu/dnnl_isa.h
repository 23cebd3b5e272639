// oneDNN's instruction set, capped to the one Ferry emulates. Ferry's own kernels honour a narrowed ISA
// (`--isa`, FERRY_ISA, SessionOptions::isa) per session; oneDNN picks its code by the CPU it runs on, once per
// process, unless told a maximum (dnnl::set_max_cpu_isa) before its first primitive. So that "run as on an AVX2
// server" runs what an AVX2 server runs, the cap follows FERRY_ISA for every process (set when the engine is made)
// and `--isa` for the CLI's verbs, which make one session's worth of primitives per process.
#pragma once

#include <string>

#include "core/isa.h"

namespace ferry::cpu {

// oneDNN's name for the widest of its instruction sets that `isa` holds: "avx512_core_bf16", "avx512_core_vnni",
// "avx512_core" (AVX-512 F, BW and VL), "avx2_vnni", "avx2" (AVX2 and FMA), "avx", else "sse41" (oneDNN's
// floor: a set without SSE4.1 still gets its SSE4.1 code).
std::string DnnlIsaFor(const IsaSet& isa);

// Caps oneDNN at DnnlIsaFor(isa) for the rest of the process; nothing when `isa` holds everything this CPU has.
// Throws InvalidArgumentError naming the ISA in effect when oneDNN has already fixed a wider one (a primitive
// was created first): the emulation would not be faithful.
void CapDnnlIsa(const IsaSet& isa);

// What the engine does when it is made: caps oneDNN at FERRY_ISA's set, unless CapDnnlIsa set a cap already (the
// CLI's --isa, given FERRY_ISA's set narrowed by it, as a session's target is). Nothing without FERRY_ISA.
void CapDnnlIsaFromEnvironment();

}  // namespace ferry::cpu
