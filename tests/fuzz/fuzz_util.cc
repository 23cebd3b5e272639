#include "fuzz_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace ferry::fuzz {
namespace {

void WriteFile(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail("fuzz scratch: cannot write " + path.string());
}

std::string MakeScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ferry-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) Fail("fuzz scratch: mkdtemp " + pattern + " failed");
  const std::filesystem::path dir = pattern;
  std::vector<uint8_t> weights(64 * 1024);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<uint8_t>(i % 251);
  WriteFile(dir / "weights.bin", weights);
  std::filesystem::create_directory(dir / "sub");
  WriteFile(dir / "sub" / "weights.bin", weights);
  std::filesystem::create_directory(dir / "dir");
  if (mkfifo((dir / "fifo").c_str(), 0600) != 0) Fail("fuzz scratch: mkfifo failed");
  std::filesystem::create_symlink("/etc/passwd", dir / "outside");
  std::filesystem::create_symlink("/dev/zero", dir / "zero");
  static const std::string kDir = dir.string();
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(kDir, ec);
  });
  return dir.string();
}

}  // namespace

const std::string& ScratchDir() {
  static const std::string dir = MakeScratchDir();
  return dir;
}

std::string WriteScratchFile(const std::string& name, std::span<const uint8_t> bytes) {
  const std::filesystem::path path = std::filesystem::path(ScratchDir()) / name;
  WriteFile(path, bytes);
  return path.string();
}

void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz target invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace ferry::fuzz
