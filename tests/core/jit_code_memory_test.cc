// ResidentJitCodeBytes counts the resident pages of anonymous executable mappings (where JIT code lives) and
// nothing else; JitCodeGrowth measures what a phase added.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "core/jit_code_memory.h"

namespace ferry {
namespace {

const size_t kPage = static_cast<size_t>(::sysconf(_SC_PAGESIZE));

// An anonymous mapping of `pages` pages, `touched` of them written, then made read+execute like JIT code.
struct CodeMapping {
  explicit CodeMapping(size_t pages, size_t touched) : bytes(pages * kPage) {
    p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    for (size_t i = 0; i < touched; ++i) static_cast<unsigned char*>(p)[i * kPage] = 0xC3;  // ret
    ok = ::mprotect(p, bytes, PROT_READ | PROT_EXEC) == 0;
  }
  ~CodeMapping() {
    if (p != MAP_FAILED) ::munmap(p, bytes);
  }
  size_t bytes;
  void* p = MAP_FAILED;
  bool ok = false;
};

TEST(JitCodeMemory, CountsResidentPagesOfAnonymousExecutableMappings) {
  const int64_t before = ResidentJitCodeBytes();
  ASSERT_GE(before, 0) << "no /proc/self/maps";
  {
    const JitCodeGrowth growth;
    CodeMapping code(64, 5);  // 64 pages reserved, 5 written: only those are resident
    if (!code.ok) GTEST_SKIP() << "cannot make an anonymous mapping executable here";
    EXPECT_EQ(ResidentJitCodeBytes() - before, static_cast<int64_t>(5 * kPage));
    EXPECT_EQ(growth.Bytes(), static_cast<int64_t>(5 * kPage));
  }
  EXPECT_EQ(ResidentJitCodeBytes(), before);  // unmapped: gone
}

TEST(JitCodeMemory, DataAndLibraryCodeAreNotCounted) {
  const JitCodeGrowth growth;
  std::vector<unsigned char> data(64 * kPage, 1);  // anonymous, written, not executable
  void* rw = ::mmap(nullptr, 8 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(rw, MAP_FAILED);
  std::memset(rw, 1, 8 * kPage);
  EXPECT_EQ(growth.Bytes(), 0);
  ::munmap(rw, 8 * kPage);
}

TEST(JitCodeMemory, GrowthIsNeverNegative) {
  auto* code = new CodeMapping(4, 4);
  if (!code->ok) {
    delete code;
    GTEST_SKIP() << "cannot make an anonymous mapping executable here";
  }
  const JitCodeGrowth growth;
  delete code;  // the phase freed code that existed before it
  EXPECT_EQ(growth.Bytes(), 0);
}

}  // namespace
}  // namespace ferry
