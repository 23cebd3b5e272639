#include "core/isa.h"

#include <cpuid.h>

#include <array>
#include <cstdlib>

#include "ferry/error.h"

namespace ferry {
namespace {

struct IsaName {
  Isa isa;
  std::string_view name;
};

constexpr std::array<IsaName, 11> kNames = {{
    {Isa::kSse41, "sse4.1"},
    {Isa::kAvx, "avx"},
    {Isa::kAvx2, "avx2"},
    {Isa::kFma, "fma"},
    {Isa::kF16c, "f16c"},
    {Isa::kAvx512f, "avx512f"},
    {Isa::kAvx512bw, "avx512bw"},
    {Isa::kAvx512vl, "avx512vl"},
    {Isa::kAvx512vnni, "avx512vnni"},
    {Isa::kAvx512bf16, "avx512bf16"},
    {Isa::kAvxVnni, "avxvnni"},
}};

uint64_t Xgetbv() {
  uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

}  // namespace

IsaSet IsaSet::All() {
  IsaSet s;
  for (const auto& n : kNames) s.add(n.isa);
  return s;
}

IsaSet IsaSet::Parse(std::string_view list) {
  IsaSet s;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty() && item != "none") {
      bool found = false;
      for (const auto& n : kNames) {
        if (n.name == item) {
          s.add(n.isa);
          found = true;
        }
      }
      if (!found) {
        std::string known;
        for (const auto& n : kNames) known += (known.empty() ? "" : ", ") + std::string(n.name);
        throw InvalidArgumentError("unknown ISA '" + std::string(item) + "' (known: " + known + ", none)");
      }
    }
    start = end + 1;
  }
  return s;
}

std::vector<std::string> IsaSet::Names() const {
  std::vector<std::string> out;
  for (const auto& n : kNames) {
    if (has(n.isa)) out.emplace_back(n.name);
  }
  return out;
}

std::string IsaSet::ToString() const {
  std::string s;
  for (const auto& n : Names()) s += (s.empty() ? "" : ",") + n;
  return s.empty() ? "none" : s;
}

IsaSet DetectHostIsa() {
  IsaSet s;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return s;
  if (c & bit_SSE4_1) s.add(Isa::kSse41);
  const uint64_t xcr0 = (c & bit_OSXSAVE) ? Xgetbv() : 0;
  const bool ymm = (xcr0 & 0x6) == 0x6;    // the OS saves SSE and AVX state
  const bool zmm = (xcr0 & 0xe6) == 0xe6;  // ... and opmask and ZMM state
  if (ymm && (c & bit_AVX)) s.add(Isa::kAvx);
  if (ymm && (c & bit_FMA)) s.add(Isa::kFma);
  if (ymm && (c & bit_F16C)) s.add(Isa::kF16c);
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    if (ymm && (b & bit_AVX2)) s.add(Isa::kAvx2);
    if (zmm && (b & bit_AVX512F)) s.add(Isa::kAvx512f);
    if (zmm && (b & bit_AVX512BW)) s.add(Isa::kAvx512bw);
    if (zmm && (b & bit_AVX512VL)) s.add(Isa::kAvx512vl);
    if (zmm && (c & bit_AVX512VNNI)) s.add(Isa::kAvx512vnni);
  }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
    if (zmm && (a & bit_AVX512BF16)) s.add(Isa::kAvx512bf16);
    if (ymm && (a & bit_AVXVNNI)) s.add(Isa::kAvxVnni);
  }
  return s;
}

IsaSet DefaultIsa() {
  static const IsaSet host = DetectHostIsa();
  const char* env = std::getenv("FERRY_ISA");
  if (!env || !*env) return host;
  return host & IsaSet::Parse(env);
}

}  // namespace ferry
