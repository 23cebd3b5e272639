// core/peak_rss.h: VmHWM is read in KiB and, after a reset, rises with a large allocation.
#include "core/peak_rss.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace ferry {
namespace {

TEST(PeakRss, ReadsThePeakAndFollowsAnAllocation) {
  const int64_t before = PeakRssKb();
  ASSERT_GT(before, 0) << "VmHWM not read from /proc/self/status";
  if (!ResetPeakRss()) GTEST_SKIP() << "/proc/self/clear_refs refused the VmHWM reset";
  const int64_t after_reset = PeakRssKb();
  ASSERT_GT(after_reset, 0);
  constexpr size_t kBytes = size_t{48} << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);  // touch every page so it becomes resident
  const int64_t grown = PeakRssKb();
  EXPECT_EQ(block[kBytes - 1], 1);
  EXPECT_GE(grown, after_reset + 40 * 1024) << "a 48 MiB touched block did not raise VmHWM";
}

}  // namespace
}  // namespace ferry
