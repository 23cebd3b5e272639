// The tensor buffer pool: large blocks come back for the next allocation of their size class, zeroed when asked;
// small ones bypass the pool; Tensor::Uninitialized shares it.
#include <gtest/gtest.h>

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
