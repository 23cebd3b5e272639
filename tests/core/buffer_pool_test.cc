// The tensor buffer pool: large blocks come back for the next allocation of their size class (or a class up to a
// third larger), zeroed when asked; small ones bypass the pool; blocks of 1 MiB and more are pages of their own
// that leave the process when freed outside the pool; ScopedPoolBypass and ReleasePooledBuffers empty it;
// Tensor::Uninitialized shares it.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "core/buffer_pool.h"
#include "ferry/error.h"
#include "ferry/tensor.h"

namespace ferry {
namespace {

TEST(BufferPool, ReusesLargeBlocksAndZeroesWhenAsked) {
  const size_t bytes = (size_t{1} << 20) + 100;
  void* first = nullptr;
  {
    auto b = AllocateBuffer(bytes, /*zero=*/false);
    first = b.get();
    std::memset(first, 0xAB, bytes);
  }
  const size_t held = PooledBytes();
  EXPECT_GE(held, bytes);
  auto again = AllocateBuffer(bytes + 64, /*zero=*/true);  // same size class
  EXPECT_EQ(again.get(), first);
  EXPECT_LT(PooledBytes(), held);  // the block left the free list
  const auto* p = static_cast<const unsigned char*>(again.get());
  for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(p[i], 0) << i;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(again.get()) % 64, 0u);
}

TEST(BufferPool, TakesASlightlyLargerClassButNotAMuchLargerOne) {
  ReleasePooledBuffers();
  const size_t bytes = size_t{4} << 20;
  void* big = nullptr;
  {
    auto b = AllocateBuffer(bytes, false);
    big = b.get();
  }
  ASSERT_EQ(PooledBytes(), bytes);
  {
    auto much_smaller = AllocateBuffer(bytes / 2, false);  // the 4 MiB block would waste half of itself
    EXPECT_NE(much_smaller.get(), big);
    EXPECT_EQ(PooledBytes(), bytes);
  }
  auto slightly_smaller = AllocateBuffer(bytes * 7 / 8, true);  // an eighth of the block unused: taken
  EXPECT_EQ(slightly_smaller.get(), big);
  const auto* p = static_cast<const unsigned char*>(slightly_smaller.get());
  for (size_t i = 0; i < bytes * 7 / 8; i += 4093) ASSERT_EQ(p[i], 0) << i;
  ReleasePooledBuffers();
  EXPECT_EQ(PooledBytes(), 0u);
}

// Resident set size in KiB (VmRSS), or -1.
int64_t RssKb() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long pages = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? resident * 4 : -1;
}

TEST(BufferPool, BypassedAndReleasedBlocksLeaveTheProcess) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the sanitizer's allocator maps memory its own way";
#endif
  ReleasePooledBuffers();
  const size_t bytes = size_t{8} << 20;
  auto touched = [&] {
    auto b = AllocateBuffer(bytes, false);
    std::memset(b.get(), 1, bytes);
    return b;
  };
  {
    const ScopedPoolBypass bypass;
    auto b = touched();
    const int64_t with = RssKb();
    b.reset();
    EXPECT_EQ(PooledBytes(), 0u);
    if (with > 0) {
      EXPECT_LT(RssKb(), with - 6 * 1024) << "an 8 MiB block freed under the bypass stayed resident";
    }
  }
  {
    auto b = touched();
    b.reset();
  }
  EXPECT_EQ(PooledBytes(), bytes);  // no bypass: pooled
  const int64_t pooled = RssKb();
  EXPECT_EQ(ReleasePooledBuffers(), bytes);
  EXPECT_EQ(PooledBytes(), 0u);
  if (pooled > 0) {
    EXPECT_LT(RssKb(), pooled - 6 * 1024) << "released pool blocks stayed resident";
  }
}

TEST(BufferPool, SmallBlocksBypassThePool) {
  const size_t before = PooledBytes();
  { auto b = AllocateBuffer(100, false); }
  EXPECT_EQ(PooledBytes(), before);
}

TEST(BufferPool, TensorsZeroedOrNot) {
  Tensor a(DataType::kFloat, {1 << 18});
  for (int64_t i = 0; i < a.size(); i += 1000) ASSERT_EQ(a.data<float>()[i], 0.0f);
  Tensor u = Tensor::Uninitialized(DataType::kFloat, {3, 5});
  EXPECT_EQ(u.shape(), (Shape{3, 5}));
  EXPECT_EQ(u.size(), 15);
  Tensor s = Tensor::Uninitialized(DataType::kString, {2});
  EXPECT_EQ(s.strings()[1], "");
  EXPECT_THROW(Tensor::Uninitialized(static_cast<DataType>(99), {1}), InvalidArgumentError);
}

}  // namespace
}  // namespace ferry
