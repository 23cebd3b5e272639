#include "kernels/cpu/dnnl_isa.h"

#include <cstdlib>
#include <dnnl.hpp>
#include <mutex>

#include "ferry/error.h"

namespace ferry::cpu {
namespace {

struct Level {
  dnnl::cpu_isa isa;
  const char* name;
};

Level LevelFor(const IsaSet& s) {
  using dnnl::cpu_isa;
  if (s.contains({Isa::kAvx512f, Isa::kAvx512bw, Isa::kAvx512vl})) {
    if (s.has(Isa::kAvx512bf16) && s.has(Isa::kAvx512vnni)) return {cpu_isa::avx512_core_bf16, "avx512_core_bf16"};
    if (s.has(Isa::kAvx512vnni)) return {cpu_isa::avx512_core_vnni, "avx512_core_vnni"};
    return {cpu_isa::avx512_core, "avx512_core"};
  }
  if (s.contains({Isa::kAvx2, Isa::kFma})) {
    if (s.has(Isa::kAvxVnni)) return {cpu_isa::avx2_vnni, "avx2_vnni"};
    return {cpu_isa::avx2, "avx2"};
  }
  if (s.has(Isa::kAvx)) return {cpu_isa::avx, "avx"};
  return {cpu_isa::sse41, "sse41"};
}

std::string Name(dnnl::cpu_isa isa) {
  using dnnl::cpu_isa;
  switch (isa) {
    case cpu_isa::sse41: return "sse41";
    case cpu_isa::avx: return "avx";
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx2_vnni: return "avx2_vnni";
    case cpu_isa::avx512_core: return "avx512_core";
    case cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(static_cast<int>(isa));
  }
}

}  // namespace

std::string DnnlIsaFor(const IsaSet& isa) { return LevelFor(isa).name; }

namespace {

std::mutex& CapMutex() {
  static std::mutex mu;
  return mu;
}
bool capped = false;  // a cap was set by CapDnnlIsa; guarded by CapMutex()

}  // namespace

void CapDnnlIsa(const IsaSet& isa) {
  const IsaSet host = DetectHostIsa();
  if ((isa & host) == host) return;  // nothing narrowed: oneDNN uses what the CPU has
  const std::lock_guard<std::mutex> lock(CapMutex());
  capped = true;
  const Level want = LevelFor(isa & host);
  if (dnnl::set_max_cpu_isa(want.isa) == dnnl::status::success) return;
  // Refused: oneDNN fixed its ISA already (a primitive exists). oneDNN's ISA values are masks, a wider one holding
  // the narrower's bits: only one with bits beyond the cap makes the emulation unfaithful.
  const dnnl::cpu_isa now = dnnl::get_effective_cpu_isa();
  if ((static_cast<unsigned>(now) & ~static_cast<unsigned>(want.isa)) == 0) return;
  throw InvalidArgumentError("isa " + isa.ToString() + ": oneDNN's kernels in this process already use " + Name(now) +
                             " (fixed by its first primitive), not " + want.name +
                             "; emulate a narrower CPU in a process of its own (or set FERRY_ISA before it starts)");
}

void CapDnnlIsaFromEnvironment() {
  if (!std::getenv("FERRY_ISA")) return;
  {
    const std::lock_guard<std::mutex> lock(CapMutex());
    if (capped) return;
  }
  CapDnnlIsa(DefaultIsa());
}

}  // namespace ferry::cpu
