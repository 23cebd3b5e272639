// The dynamic batcher's decision with made-up times.
#include "server/batcher.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

using std::chrono::microseconds;

const Clock::time_point t0{};

std::vector<QueuedView> Queue(std::initializer_list<int64_t> sizes, uint64_t key = 1) {
  std::vector<QueuedView> q;
  int i = 0;
  for (int64_t s : sizes) q.push_back({s, t0 + microseconds(10 * i++), key});
  return q;
}

BatchPolicy Policy(int64_t max, std::vector<int64_t> preferred, int delay_us) {
  BatchPolicy p;
  p.dynamic = true;
  p.max_batch_size = max;
  p.preferred = std::move(preferred);
  p.max_delay = microseconds(delay_us);
  return p;
}

TEST(ServerBatcher, WithoutDynamicBatchingEachRequestRunsAlone) {
  BatchPolicy p;
  auto q = Queue({1, 1, 1});
  EXPECT_EQ(DecideBatch(q, p, t0).take, 1u);
  EXPECT_EQ(DecideBatch({}, p, t0).take, 0u);
}

TEST(ServerBatcher, WaitsForTheDelayThenRunsWhatThereIs) {
  const auto p = Policy(8, {}, 1000);
  auto q = Queue({1, 2});
  auto d = DecideBatch(q, p, t0 + microseconds(50));
  EXPECT_EQ(d.take, 0u);
  ASSERT_TRUE(d.wait_until);
  EXPECT_EQ(*d.wait_until, t0 + microseconds(1000));
  EXPECT_EQ(DecideBatch(q, p, t0 + microseconds(1000)).take, 2u);
  // Zero delay: run whatever is queued at once.
  EXPECT_EQ(DecideBatch(q, Policy(8, {}, 0), t0).take, 2u);
}

TEST(ServerBatcher, RunsAtOnceWhenFullOrBlocked) {
  const auto p = Policy(4, {}, 1000000);
  EXPECT_EQ(DecideBatch(Queue({2, 2, 1}), p, t0).take, 2u);    // reached max_batch_size
  EXPECT_EQ(DecideBatch(Queue({2, 3}), p, t0).take, 1u);       // the next does not fit
  auto q = Queue({1, 1});
  q[1].shape_key = 2;                                          // different inner shape: cannot join
  EXPECT_EQ(DecideBatch(q, p, t0).take, 1u);
}

TEST(ServerBatcher, PrefersPreferredSizes) {
  const auto p = Policy(8, {2, 4}, 1000000);
  EXPECT_EQ(DecideBatch(Queue({1, 1, 1, 1}), p, t0).take, 4u);  // largest preferred reached: run now
  EXPECT_EQ(DecideBatch(Queue({1, 1, 1}), p, t0).take, 0u);     // 3 is not preferred: wait
  // Blocked at 5 (the next does not fit): cut at the preferred 4, the rest waits for the next batch.
  EXPECT_EQ(DecideBatch(Queue({1, 1, 1, 1, 1, 4}), Policy(8, {2, 4}, 1000000), t0).take, 4u);
  // Delay expired: everything that fits runs, preferred or not.
  EXPECT_EQ(DecideBatch(Queue({1, 1, 1}), p, t0 + microseconds(1000000)).take, 3u);
}

}  // namespace
}  // namespace ferry::server
