// core/file_fingerprint.h: files with the same bytes have the same fingerprint, any other byte or length another;
// what is not a readable regular file is an InvalidArgumentError naming it.
#include "core/file_fingerprint.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ferry/error.h"

namespace ferry {
namespace {

std::string Write(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/ferry_fp_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(FileFingerprint, SameBytesSameFingerprintOtherwiseNot) {
  const std::string big(3 << 20, 'a');  // more than one read block
  const std::string a = Write("a", big), b = Write("b", big), c = Write("c", big + "b"), d = Write("d", "");
  std::string flipped = big;
  flipped[(2 << 20) + 5] = 'b';
  const std::string e = Write("e", flipped);
  EXPECT_EQ(FileFingerprint(a), FileFingerprint(b));
  EXPECT_NE(FileFingerprint(a), FileFingerprint(c));
  EXPECT_NE(FileFingerprint(a), FileFingerprint(e));
  EXPECT_EQ(FileFingerprint(a).rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(FileFingerprint(a).substr(FileFingerprint(a).rfind(':') + 1), std::to_string(big.size()));
  EXPECT_EQ(FileFingerprint(d), "fnv1a64:cbf29ce484222325:0");  // FNV-1a's offset basis: nothing hashed
  for (const std::string& p : {a, b, c, d, e}) std::filesystem::remove(p);
  try {
    FileFingerprint(a);
    ADD_FAILURE() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& err) {
    EXPECT_NE(std::string(err.what()).find(a), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace ferry
