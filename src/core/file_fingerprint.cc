#include "core/file_fingerprint.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "core/regular_file.h"
#include "ferry/error.h"

namespace ferry {

std::string FileFingerprint(const std::string& path) {
  const RegularFile file = RegularFile::Open(path);
  if (!file.ok()) throw InvalidArgumentError("'" + path + "': cannot read the file: it " + file.error());
  constexpr uint64_t kOffset = 14695981039346656037ull, kPrime = 1099511628211ull;
  uint64_t h = kOffset;
  std::vector<unsigned char> block(1 << 20);
  for (uint64_t at = 0; at < file.size();) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), file.size() - at));
    if (const std::string err = file.ReadAt(at, block.data(), n); !err.empty()) {
      throw InvalidArgumentError("'" + path + "': " + err);
    }
    for (size_t i = 0; i < n; ++i) h = (h ^ block[i]) * kPrime;
    at += n;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex + ":" + std::to_string(file.size());
}

}  // namespace ferry
