#include "core/jit_code_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

namespace ferry {

int64_t ResidentJitCodeBytes() {
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return -1;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  int64_t resident = 0;
  std::vector<unsigned char> pages;
  char line[4096 + 128];  // a path is at most PATH_MAX
  while (std::fgets(line, sizeof line, maps)) {
    // "start-end perms offset dev inode [path]": anonymous mappings have inode 0 and no path ([vdso] and
    // [vsyscall] are named, and are the kernel's).
    unsigned long start = 0, end = 0, inode = 0;
    char perms[8] = {}, dev[16] = {};
    unsigned long long offset = 0;
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %llx %15s %lu %n", &start, &end, perms, &offset, dev, &inode, &path_at) < 6) {
      continue;
    }
    const bool named = path_at > 0 && line[path_at] != '\0' && line[path_at] != '\n';
    if (perms[2] != 'x' || inode != 0 || named || end <= start) continue;
    const size_t n = (end - start + page - 1) / page;
    pages.assign(n, 0);
    if (::mincore(reinterpret_cast<void*>(start), end - start, pages.data()) != 0) continue;
    for (unsigned char p : pages) resident += (p & 1) ? static_cast<int64_t>(page) : 0;
  }
  std::fclose(maps);
  return resident;
}

int64_t JitCodeGrowth::Bytes() const {
  if (before_ < 0) return 0;
  const int64_t now = ResidentJitCodeBytes();
  return now > before_ ? now - before_ : 0;
}

}  // namespace ferry
