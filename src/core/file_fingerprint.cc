#include "core/file_fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/regular_file.h"
#include "ferry/error.h"

namespace ferry {

namespace {

constexpr uint64_t kOffset = 14695981039346656037ull, kPrime = 1099511628211ull;

uint64_t Mix(uint64_t h, std::span<const uint8_t> bytes) {
  for (uint8_t b : bytes) h = (h ^ b) * kPrime;
  return h;
}

std::string Format(uint64_t h, uint64_t size) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex + ":" + std::to_string(size);
}

}  // namespace

std::string FileFingerprint(const std::string& path) {
  const RegularFile file = RegularFile::Open(path);
  if (!file.ok()) throw InvalidArgumentError("'" + path + "': cannot read the file: it " + file.error());
  uint64_t h = kOffset;
  std::vector<uint8_t> block(1 << 20);
  for (uint64_t at = 0; at < file.size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), file.size() - at));
    if (const std::string err = file.ReadAt(at, block.data(), n); !err.empty()) {
      throw InvalidArgumentError("'" + path + "': " + err);
    }
    h = Mix(h, std::span<const uint8_t>(block.data(), n));
    at += n;
  }
  return Format(h, file.size());
}

std::string BytesFingerprint(std::span<const uint8_t> bytes) { return Format(Mix(kOffset, bytes), bytes.size()); }

}  // namespace ferry
