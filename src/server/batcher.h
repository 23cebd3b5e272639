// The dynamic batcher's decision, kept free of threads and clocks so it can be tested with made-up times:
// given the queue (oldest first), how many requests to run now as one batch, or until when to wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "server/infer_request.h"

namespace ferry::server {

struct BatchPolicy {
  bool dynamic = false;              // false: every request runs on its own
  int64_t max_batch_size = 0;        // the batch dim's limit (only used when dynamic)
  std::vector<int64_t> preferred;    // ascending; a batch reaching the largest runs at once
  std::chrono::microseconds max_delay{0};  // how long the oldest request may wait for others
};

// What the batcher sees of a queued request.
struct QueuedView {
  int64_t batch_size = 1;
  Clock::time_point arrival;
  uint64_t shape_key = 0;  // requests batch together only with equal keys (same input dtypes and inner dims)
};

struct BatchDecision {
  size_t take = 0;                             // run the first `take` requests as one batch (0: none now)
  std::optional<Clock::time_point> wait_until;  // when take == 0 and the queue is not empty: decide again then
};

// The rule (Triton's dynamic batcher, simplified): requests join the oldest one's batch in queue order while they
// have its shape key and the sum of their batch sizes stays within max_batch_size. The batch runs now when it is
// full, when the next queued request cannot join it, when it reaches the largest preferred size, or when the
// oldest request has waited max_delay; otherwise the batcher waits until the oldest request's deadline. When it
// runs and preferred sizes are given, it is cut at the largest preferred size it reached (the rest waits for the
// next batch) unless the delay has expired.
BatchDecision DecideBatch(std::span<const QueuedView> queue, const BatchPolicy& policy, Clock::time_point now);

}  // namespace ferry::server
