// ferry-fuzz-replay TARGET FILE_OR_DIR...: the fuzz targets outside libFuzzer. Feeds the target every file named
// on the command line, and every regular file in the directories named (sorted, so runs are repeatable). ctest
// runs it over the committed corpora; a fault shows as a crash (the sanitizer build reports it), an uncaught
// exception, or the ctest timeout for a hang. Arguments starting with '-' (libFuzzer flags) are ignored.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "fuzz_targets.h"

namespace {

std::vector<std::filesystem::path> Inputs(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> in_dir;
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
        if (entry.is_regular_file(ec)) in_dir.push_back(entry.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      files.emplace_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s is neither a regular file nor a directory\n", arg.c_str());
      std::exit(2);
    }
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  const FuzzTarget* target = nullptr;
  std::string names;
  for (const FuzzTarget& t : FuzzTargets()) {
    if (argc > 1 && std::string(argv[1]) == t.name) target = &t;
    names += std::string(names.empty() ? "" : ", ") + t.name;
  }
  if (target == nullptr) {
    std::fprintf(stderr, "usage: %s TARGET FILE_OR_DIR... (targets: %s)\n", argv[0], names.c_str());
    return 2;
  }
  const std::vector<std::filesystem::path> files = Inputs(argc, argv);
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files for %s\n", target->name);
    return 2;
  }
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    // Printed before the run, so the input that crashes is the last one named.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    target->run(bytes.data(), bytes.size());
  }
  std::printf("%s: replayed %zu inputs\n%zu passed, 0 failed\n", target->name, files.size(), files.size());
  return 0;
}
