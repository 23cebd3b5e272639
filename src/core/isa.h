// CPU instruction-set extensions a kernel may require, detected once with cpuid. `--isa LIST` / FERRY_ISA
// narrow the set to emulate a lesser CPU: kernels needing a missing extension are never placed, so Ferry never
// executes an illegal instruction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ferry {

enum class Isa : uint32_t {
  kSse41 = 1u << 0,
  kAvx = 1u << 1,
  kAvx2 = 1u << 2,
  kFma = 1u << 3,
  kF16c = 1u << 4,
  kAvx512f = 1u << 5,
  kAvx512bw = 1u << 6,
  kAvx512vl = 1u << 7,
  kAvx512vnni = 1u << 8,
  kAvx512bf16 = 1u << 9,
  kAvxVnni = 1u << 10,
};

class IsaSet {
 public:
  constexpr IsaSet() = default;
  constexpr IsaSet(std::initializer_list<Isa> isas) {
    for (Isa i : isas) bits_ |= static_cast<uint32_t>(i);
  }
  static IsaSet All();
  // Parses "avx2,fma,f16c" (also "none" for the empty set); throws InvalidArgumentError naming unknown entries.
  static IsaSet Parse(std::string_view list);

  bool has(Isa i) const { return bits_ & static_cast<uint32_t>(i); }
  void add(Isa i) { bits_ |= static_cast<uint32_t>(i); }
  bool empty() const { return bits_ == 0; }
  bool contains(IsaSet other) const { return (bits_ & other.bits_) == other.bits_; }
  IsaSet operator&(IsaSet o) const { return FromBits(bits_ & o.bits_); }
  IsaSet operator-(IsaSet o) const { return FromBits(bits_ & ~o.bits_); }
  bool operator==(const IsaSet&) const = default;
  // "avx2,fma" in canonical order; "none" when empty.
  std::string ToString() const;
  std::vector<std::string> Names() const;

 private:
  static IsaSet FromBits(uint32_t b) {
    IsaSet s;
    s.bits_ = b;
    return s;
  }
  uint32_t bits_ = 0;
};

// What this CPU supports (cpuid, including the OS's XSAVE support for AVX/AVX-512 state).
IsaSet DetectHostIsa();
// The host set narrowed by FERRY_ISA when that is set (throws InvalidArgumentError on a bad value).
IsaSet DefaultIsa();

}  // namespace ferry
