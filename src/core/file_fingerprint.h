// A file's identity by content, for telling whether two tools saw the same file (a profile trace records the
// model it was measured on; `ferry check --profile` compares it with the model it checks).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace ferry {

// "fnv1a64:<16 hex digits>:<size in bytes>" of the file's bytes (FNV-1a, 64 bit: not a cryptographic hash; it
// tells files apart, it does not authenticate them). Reads the file once, in blocks; only a regular file
// (core/regular_file.h). Throws InvalidArgumentError naming the path when it cannot be read.
std::string FileFingerprint(const std::string& path);

// The same fingerprint of bytes in memory (a model given as bytes): equal to FileFingerprint of a file holding them.
std::string BytesFingerprint(std::span<const uint8_t> bytes);

}  // namespace ferry
